#!/usr/bin/env python3
"""A WebSocket server (RFC 6455) for lunet's tests, on Python's standard library only.

    python3 Tests/servers/ws_server.py     # prints "PORT" on its first line, serves on 127.0.0.1
    python3 Tests/servers/ws_server.py --tls CERT KEY   # the same paths over TLS (wss://)

Paths (`key` in the query names a connection, for /last-close):
  /echo              echoes text and binary messages; answers pings; answers a close
  /subprotocol       accepts the "chat" subprotocol if offered
  /fragmented        one text message in three fragments with a ping between them, then close
  /close-first       closes first, with 4000 "bye"
  /headers           one text message: the X-Test and Authorization fields it was sent
  /drop              drops the TCP connection without a closing handshake
  /bad-accept        a wrong Sec-WebSocket-Accept
  /hostile/NAME      masked, rsv, opcode, len63, utf8, close-code, after-close, big-ping,
                     fragmented-ping: a frame that breaks the protocol
  /last-close?key=K  (plain HTTP) the close code the client sent on connection K, or "none"
  /flood?n=N&size=S  N binary messages of S bytes as fast as the socket takes them, then close
"""
import base64
import hashlib
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
from urllib.parse import urlparse, parse_qs

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
closes = {}
lock = threading.Lock()


def frame(opcode, payload=b"", fin=True, rsv=0, mask=False, length=None):
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    n = len(payload) if length is None else length
    m = 0x80 if mask else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if mask:
        key = b"\x01\x02\x03\x04"
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        head += key
    return head + payload


class Handler(socketserver.BaseRequestHandler):
    def read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.request.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def read_frame(self):
        b0, b1 = self.read_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.read_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.read_exact(8))[0]
        key = self.read_exact(4) if b1 & 0x80 else None
        payload = self.read_exact(n)
        if key:
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        return b0 & 0x80 != 0, b0 & 0x0F, payload

    def note_close(self, payload):
        code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else "empty"
        with lock:
            closes[self.key] = str(code)

    def wait_close(self):
        """Reads until the client's close frame (or EOF), noting its code."""
        try:
            while True:
                fin, op, payload = self.read_frame()
                if op == 8:
                    self.note_close(payload)
                    return payload
        except (EOFError, OSError):
            return None

    def handle(self):
        self.request.settimeout(10)
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                return  # a client that refused our certificate
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            head += chunk
        lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        target = lines[0].split(" ")[1]
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        url = urlparse(target)
        q = parse_qs(url.query)
        self.q = lambda name, default: q.get(name, [default])[0]
        self.key = q.get("key", [""])[0]
        path = url.path
        if path == "/last-close":
            with lock:
                body = closes.get(self.key, "none").encode()
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n" % len(body) + body)
            return
        if fields.get("upgrade", "").lower() != "websocket":
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        accept = base64.b64encode(hashlib.sha1((fields["sec-websocket-key"] + GUID).encode()).digest()).decode()
        if path == "/bad-accept":
            accept = "AAAA" + accept[4:]
        extra = ""
        if path == "/subprotocol" and "chat" in [p.strip() for p in fields.get("sec-websocket-protocol", "").split(",")]:
            extra = "Sec-WebSocket-Protocol: chat\r\n"
        self.request.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: %s\r\n%s\r\n" % (accept, extra)).encode())
        if path == "/bad-accept":
            time.sleep(0.5)
            return
        try:
            self.serve(path, fields)
        except (EOFError, OSError):
            pass

    def serve(self, path, fields):
        send = self.request.sendall
        if path in ("/echo", "/subprotocol"):
            while True:
                fin, op, payload = self.read_frame()
                if op in (1, 2):
                    send(frame(op, payload))
                elif op == 9:
                    send(frame(10, payload))
                elif op == 8:
                    self.note_close(payload)
                    send(frame(8, payload[:2]))
                    return
        elif path == "/fragmented":
            send(frame(1, b"Hel", fin=False) + frame(9, b"p") + frame(0, b"lo, ", fin=False) + frame(0, "wörld".encode(), fin=True))
            send(frame(8, struct.pack(">H", 1000)))
            self.wait_close()
        elif path == "/close-first":
            send(frame(8, struct.pack(">H", 4000) + b"bye"))
            self.wait_close()
        elif path == "/headers":
            send(frame(1, ("%s|%s" % (fields.get("x-test", "-"), fields.get("authorization", "-"))).encode()))
            self.wait_close()
        elif path == "/flood":
            self.request.settimeout(60)   # a client that reads slowly holds sendall back
            n, size = int(self.q("n", "100")), int(self.q("size", "1048576"))
            for i in range(n):
                send(frame(2, bytes([i % 256]) * size))
            send(frame(8, struct.pack(">H", 1000)))
            self.wait_close()
        elif path == "/drop":
            send(frame(1, b"one"))
            time.sleep(0.1)
            self.request.shutdown(socket.SHUT_RDWR)
        elif path.startswith("/hostile/"):
            name = path[len("/hostile/"):]
            bad = {
                "masked": frame(1, b"hi", mask=True),
                "rsv": frame(1, b"hi", rsv=4),
                "opcode": frame(3, b"hi"),
                "len63": bytes([0x82, 127]) + struct.pack(">Q", 1 << 63),
                "utf8": frame(1, b"\xc0\xaf"),
                "close-code": frame(8, struct.pack(">H", 1005)),
                "after-close": frame(8, struct.pack(">H", 1000)) + frame(1, b"late"),
                "big-ping": frame(9, b"x" * 126),
                "fragmented-ping": frame(9, b"x", fin=False),
            }[name]
            send(frame(1, b"before") + bad)
            self.wait_close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256  # many clients connect at once (socketserver's default is 5)
    tls = None  # an ssl.SSLContext when serving wss://

    def get_request(self):
        sock, address = super().get_request()
        if self.tls:
            # The handshake waits for the handler's first read, in the handler's thread,
            # so a slow client does not hold up accepting the next one.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


def main():
    server = Server(("127.0.0.1", 0), Handler)
    if sys.argv[1:2] == ["--tls"]:
        server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.tls.load_cert_chain(sys.argv[2], sys.argv[3])
    print(server.server_address[1], flush=True)
    threading.Timer(600, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
