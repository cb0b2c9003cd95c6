#!/usr/bin/env python3
"""A hostile gRPC server for lunet's gRPC client tests (Tests/lua/grpc_hostile_test.lua): HTTP/2
with prior knowledge (h2c) spoken on raw sockets, Python's standard library only, so that it can
answer what grpcio never would.

    python3 Tests/servers/grpc_hostile_server.py MODE LOG

HOSTILE_TRACE=1 in the environment also logs each frame sent ("out TYPE FLAGS STREAM LENGTH").
Listens on 127.0.0.1 on a port the kernel picks, prints that port on its first line and serves
until killed. LOG is a file it appends one line to for each event, as the test reads them:
  "conn"              a connection was accepted (on the main port)
  "headers HEX"       a request's HEADERS block (HPACK, as the client encoded it), in hex
  "data N"            N bytes of a request's DATA
  "sent N"            N bytes of answer messages sent so far (flood)
  "other"             a connection on the second port (redirect's target)
Each request is answered as MODE says (head, half, huge and redirect at its HEADERS; the others
once the request ended, as grpcio does):
  silent          nothing at all, not even SETTINGS: a server that accepts and never answers
  head            the answer's HEADERS (200, application/grpc), then nothing
  half            the HEADERS and half a message (its prefix says 100 bytes, 10 come), then nothing
  huge            the HEADERS and a prefix announcing 2^31 bytes, a few of them, then nothing
  cut             the HEADERS, half a message, then END_STREAM (no trailers)
  cut_ok          the HEADERS, half a message, then trailers grpc-status 0
  no_status       the HEADERS, a whole message, then trailers without grpc-status
  no_trailers     the HEADERS, a whole message with END_STREAM: no trailers at all
  zflag           a message with the compressed flag and no grpc-encoding; trailers OK
  zunknown        the same with grpc-encoding: br
  zbad            grpc-encoding gzip, the compressed flag, bytes that are not gzip
  esc             a reply whose string field (1) holds ESC and OSC bytes; trailers with
                  grpc-status 13 and a grpc-message holding them (percent-encoded)
  esc_ok          the same reply, with grpc-status 0
  redirect        302 to the second port (which logs "other" and answers nothing)
  rst             RST_STREAM INTERNAL_ERROR on the call's stream once the request ended (the
                  server has read the call: a client must not send it again)
  refuse          RST_STREAM REFUSED_STREAM on the first request's stream at its HEADERS (RFC
                  9113 8.7: not processed, safe to send again); the ones after it get one
                  message and grpc-status 0
  status:VALUE    a whole message, then trailers with grpc-status VALUE (as written: "192",
                  "0x0", "1e300") and a grpc-message of 300 bytes ("m" * 298 + "!!")
  flood           one-byte messages for ever, as fast as HTTP/2 flow control lets it (the
                  first request; the ones after it get one message and grpc-status 0)
"""
import os
import socket
import struct
import sys
import threading

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST, SETTINGS, PING, GOAWAY, WINDOW = 0, 1, 3, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 1, 4, 1
ESC = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"

MODE, LOG = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()
TRACE = os.environ.get("HOSTILE_TRACE")
CALLS = iter(range(1 << 62))   # the requests seen so far (next() is atomic under the GIL)


def log(line):
    with LOCK, open(LOG, "a") as f:
        f.write(line + "\n")


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack(fields):
    """A header block: :status 200 indexed, the rest literal without indexing, no Huffman."""
    out = b""
    for name, value in fields:
        if name == ":status" and value == "200":
            out += b"\x88"
            continue
        out += b"\x00"
        for s in (name.encode(), value.encode("latin-1")):
            if len(s) < 127:
                out += bytes([len(s)]) + s
            else:
                n, out = len(s) - 127, out + b"\x7f"
                while n >= 128:
                    out, n = out + bytes([n % 128 + 128]), n // 128
                out += bytes([n]) + s
    return out


def message(body, compressed=False):
    return struct.pack(">BI", 1 if compressed else 0, len(body)) + body


def string_field(text):
    b = text.encode()
    return b"\x0a" + bytes([len(b)]) + b


# The modes that answer as soon as a request's HEADERS come; the others once the request ended.
AT_ONCE = ("head", "half", "huge", "redirect", "refuse")
GRPC_HEAD = [(":status", "200"), ("content-type", "application/grpc")]
OK = [("grpc-status", "0")]


class Conn:
    def __init__(self, sock):
        self.sock, self.send_lock = sock, threading.Lock()
        self.window = threading.Condition()
        self.conn_window, self.stream_window, self.initial = 65535, {}, 65535

    def send(self, *frames_):
        if TRACE:
            for f in frames_:
                log("out %d %d %d %d" % (f[3], f[4], struct.unpack(">I", f[5:9])[0], len(f) - 9))
        with self.send_lock:
            self.sock.sendall(b"".join(frames_))

    def read_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def data_within_window(self, stream, payload):
        """Sends `payload` as DATA, waiting for flow-control window as HTTP/2 says."""
        while payload:
            with self.window:
                while min(self.conn_window, self.stream_window.get(stream, 0)) <= 0:
                    self.window.wait(1)
                n = min(len(payload), self.conn_window, self.stream_window[stream], 16384)
                self.conn_window -= n
                self.stream_window[stream] -= n
            self.send(frame(DATA, 0, stream, payload[:n]))
            payload = payload[n:]

    def answer(self, stream):
        head = frame(HEADERS, END_HEADERS, stream, hpack(GRPC_HEAD))
        trailers = lambda fields: frame(HEADERS, END_HEADERS | END_STREAM, stream, hpack(fields))
        data = lambda b, flags=0: frame(DATA, flags, stream, b)
        whole = message(string_field("hi"))
        if MODE == "head":
            self.send(head)
        elif MODE == "half":
            self.send(head, data(struct.pack(">BI", 0, 100) + b"x" * 10))
        elif MODE == "huge":
            self.send(head, data(struct.pack(">BI", 0, 2 ** 31) + b"x" * 10))
        elif MODE == "cut":
            self.send(head, data(struct.pack(">BI", 0, 100) + b"x" * 10, END_STREAM))
        elif MODE == "cut_ok":
            self.send(head, data(struct.pack(">BI", 0, 100) + b"x" * 10), trailers(OK))
        elif MODE == "no_status":
            self.send(head, data(whole), trailers([("x-other", "1")]))
        elif MODE == "no_trailers":
            self.send(head, data(whole, END_STREAM))
        elif MODE in ("zflag", "zunknown", "zbad"):
            h = GRPC_HEAD + ([("grpc-encoding", "br")] if MODE == "zunknown" else [])
            h += [("grpc-encoding", "gzip")] if MODE == "zbad" else []
            self.send(frame(HEADERS, END_HEADERS, stream, hpack(h)), data(message(b"\x0a\x02hi", True)), trailers(OK))
        elif MODE in ("esc", "esc_ok"):
            status = OK if MODE == "esc_ok" else [("grpc-status", "13"), ("grpc-message", "".join(
                "%%%02X" % ord(c) if ord(c) < 32 else c for c in "bad " + ESC + " end"))]
            self.send(head, data(message(string_field("x" + ESC + "y"))), trailers(status))
        elif MODE.startswith("status:"):
            self.send(head, data(whole), trailers([("grpc-status", MODE[7:]), ("grpc-message", "m" * 298 + "!!")]))
        elif MODE == "rst":
            self.send(frame(RST, 0, stream, struct.pack(">I", 2)))
        elif MODE == "refuse" and next(CALLS) == 0:
            self.send(frame(RST, 0, stream, struct.pack(">I", 7)))   # REFUSED_STREAM
        elif MODE == "refuse":
            self.send(head, data(whole), trailers(OK))
        elif MODE == "redirect":
            loc = "http://127.0.0.1:%d/greet.Greeter/SayHello" % OTHER_PORT
            self.send(frame(HEADERS, END_HEADERS | END_STREAM, stream, hpack([(":status", "302"), ("location", loc)])))
        elif MODE == "flood" and next(CALLS) > 0:   # the calls after the first: answered at once
            self.send(head)
            self.data_within_window(stream, whole)
            self.send(trailers(OK))
        elif MODE == "flood":
            threading.Thread(target=self.flood, args=(head, stream), daemon=True).start()

    def flood(self, head, stream):
        self.send(head)
        sent, one = 0, message(b"\x08\x01") * 1024
        try:
            while True:
                self.data_within_window(stream, one)
                sent += len(one)
                if sent % (256 * 1024) == 0:
                    log("sent %d" % sent)
        except OSError:
            pass

    def serve(self):
        if MODE == "silent":   # not even a TLS handshake
            while self.sock.recv(65536):
                pass
            return
        if self.read_exact(len(PREFACE)) != PREFACE:
            return
        self.send(frame(SETTINGS, 0, 0))
        while True:
            head = self.read_exact(9)
            length = struct.unpack(">I", b"\0" + head[:3])[0]
            kind, flags, stream = head[3], head[4], struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
            payload = self.read_exact(length)
            self.on_frame(kind, flags, stream, payload)

    def on_frame(self, kind, flags, stream, payload):
        if kind == SETTINGS and not flags & ACK:
            for i in range(0, len(payload), 6):
                ident, value = struct.unpack(">HI", payload[i:i + 6])
                if ident == 4:
                    with self.window:
                        for s in self.stream_window:
                            self.stream_window[s] += value - self.initial
                        self.initial = value
                        self.window.notify_all()
            self.send(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            self.send(frame(PING, ACK, 0, payload))
        elif kind == WINDOW:
            inc = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            with self.window:
                if stream == 0:
                    self.conn_window += inc
                else:
                    self.stream_window[stream] = self.stream_window.get(stream, self.initial) + inc
                self.window.notify_all()
        elif kind == HEADERS:
            block = payload
            if flags & 0x8:   # PADDED
                block = block[1:len(block) - block[0]]
            if flags & 0x20:  # PRIORITY
                block = block[5:]
            log("headers " + block.hex())
            with self.window:
                self.stream_window.setdefault(stream, self.initial)
            if MODE in AT_ONCE or flags & END_STREAM:
                self.answer(stream)
        elif kind == DATA:
            if payload:
                log("data %d" % len(payload))
                self.send(frame(WINDOW, 0, 0, struct.pack(">I", len(payload))))
            if flags & END_STREAM and MODE not in AT_ONCE:
                self.answer(stream)


def handle(sock):
    log("conn")
    try:
        Conn(sock).serve()
    except (EOFError, OSError):
        pass
    finally:
        sock.close()


def other(listener):
    while True:
        s, _ = listener.accept()
        log("other")
        threading.Thread(target=lambda: (s.recv(65536), s.close()), daemon=True).start()


def main():
    global OTHER_PORT
    second = socket.socket()
    second.bind(("127.0.0.1", 0))
    second.listen(8)
    OTHER_PORT = second.getsockname()[1]
    threading.Thread(target=other, args=(second,), daemon=True).start()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=handle, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    main()
