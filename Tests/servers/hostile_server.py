#!/usr/bin/python3
"""A small misbehaving HTTP/1.1 server for lunet's tests (stdlib only).

Usage: hostile_server.py PORT [PIDFILE]   (binds 127.0.0.1 only)

Endpoints:
  /                 200 "ok" (readiness check)
  /truncated        Content-Length: 100, sends 10 bytes, then closes
  /stall            headers with Content-Length: 100, then no body (waits
                    until the client goes away, at most an hour)
  /big-header       200 with one header whose value is 1 MB
  /gzip-bomb        Content-Encoding: gzip, ~1 MB that inflates to 1 GiB of zeros
  /bad-chunk        chunked, one valid chunk, then an invalid chunk-size line
  /loop             302 redirect to itself, forever
  /endless          chunked 200 that never ends (64 KiB chunks of "x")
  /slow-body?n=N    Content-Length N (default 60), then 1 byte per second
  /hits/K           counts a request for key K, returns {"key":K,"count":N,...};
                    ?status=CODE answers with that status (e.g. 503) instead of 200
  /hits?key=K       same as /hits/K
  /hits-count/K     returns the count for K without incrementing it
                    (/hits/K takes status=S, until=N (S only for the first N hits) and
                    retry_after=V (a Retry-After header with S))
  /count            all counters as a JSON object
  /cut-in-headers, /cut-after-status, /http09, /huge-status, /no-status-code
                    raw bytes that break HTTP (a header block cut off by FIN, a
                    reply that is not HTTP, a 7-digit status, a status line
                    without a code), then the connection closes
  /redirect-to?url=U  302 to U (any scheme: file:, ftp:, dict:)
Every method is accepted (a request body is read and discarded).
"""
import json
import os
import select
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

MB = 1 << 20


def make_gzip_bomb():
    """Parts of a gzip stream of 1 GiB of zeros: (header, block, count, trailer).

    Compressing 1 GiB takes seconds, so we compress 1 MiB once and end it with
    a full flush, which resets the compressor: the same bytes then encode every
    following MiB, and the stream is that block repeated 1024 times.
    """
    zeros = bytes(MB)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, we write the gzip frame
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # empty final block
    count = 1024
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = last + (crc).to_bytes(4, "little") + ((count * MB) & 0xFFFFFFFF).to_bytes(4, "little")
    return header, block, count, trailer


BOMB = make_gzip_bomb()

# Replies that break HTTP itself (issue 15: each must end in kind "protocol").
RAW_REPLIES = {
    "/cut-in-headers": b"HTTP/1.1 200 OK\r\nContent-Type: text/pl",      # FIN inside the header block
    "/cut-after-status": b"HTTP/1.1 200 OK\r\n",                            # FIN before any header ends
    "/http09": b"hello, this is not HTTP at all\n",                          # an HTTP/0.9-style reply
    "/huge-status": b"HTTP/1.1 2000000 OK\r\nContent-Length: 0\r\n\r\n",  # a status of seven digits
    "/no-status-code": b"HTTP/1.1 OK\r\nContent-Length: 0\r\n\r\n",       # a status line without a code
}
counters = {}
counters_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so tests can see connection reuse
    server_version = "lunet-hostile/1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), fmt % args))

    def handle(self):
        # Clients aborting mid-response are the point of this server: stay quiet.
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            pass

    # -- helpers -----------------------------------------------------------

    def start(self, status, headers):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()

    def reply(self, status, body, ctype="text/plain", headers=()):
        if isinstance(body, str):
            body = body.encode()
        self.start(status, [("Content-Type", ctype), ("Content-Length", str(len(body))), *headers])
        if self.command != "HEAD":
            self.wfile.write(body)

    def json(self, obj, status=200, headers=()):
        self.reply(status, json.dumps(obj) + "\n", "application/json", headers)

    def gone(self, timeout):
        """Wait up to timeout seconds; True as soon as the client has closed."""
        sock = self.connection
        readable, _, _ = select.select([sock], [], [], timeout)
        if not readable:
            return False
        try:
            return sock.recv(1, 0x2) == b""  # MSG_PEEK: EOF means the client left
        except OSError:
            return True

    def count(self, key, incr):
        with counters_lock:
            if incr:
                counters[key] = counters.get(key, 0) + 1
            return counters.get(key, 0)

    # -- endpoints ---------------------------------------------------------

    def dispatch(self):
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

        if path == "/":
            self.reply(200, "ok\n")
        elif path == "/truncated":
            self.close_connection = True
            self.start(200, [("Content-Type", "text/plain"), ("Content-Length", "100")])
            self.wfile.write(b"0123456789")
        elif path == "/stall":
            self.close_connection = True
            self.start(200, [("Content-Type", "text/plain"), ("Content-Length", "100")])
            self.gone(3600)
        elif path == "/big-header":
            self.reply(200, "ok\n", headers=[("X-Big", "a" * MB)])
        elif path == "/gzip-bomb":
            header, block, n, trailer = BOMB
            size = len(header) + n * len(block) + len(trailer)
            self.start(200, [("Content-Type", "application/octet-stream"),
                             ("Content-Encoding", "gzip"), ("Content-Length", str(size))])
            if self.command != "HEAD":
                self.wfile.write(header)
                for _ in range(n):
                    self.wfile.write(block)
                self.wfile.write(trailer)
        elif path == "/bad-chunk":
            self.close_connection = True
            self.start(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")])
            self.wfile.write(b"5\r\nhello\r\nzz;not-hex\r\nworld\r\n0\r\n\r\n")
        elif path == "/loop":
            self.reply(302, "", headers=[("Location", "/loop")])
        elif path == "/endless":
            self.close_connection = True
            self.start(200, [("Content-Type", "application/octet-stream"),
                             ("Transfer-Encoding", "chunked")])
            chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
            deadline = time.monotonic() + 3600  # a safety net only
            while time.monotonic() < deadline:
                self.wfile.write(chunk)  # raises once the client disconnects
        elif path == "/slow-body":
            n = int(query.get("n", ["60"])[0])
            self.close_connection = True
            self.start(200, [("Content-Type", "text/plain"), ("Content-Length", str(n))])
            for _ in range(n):
                self.wfile.write(b"x")
                self.wfile.flush()
                if self.gone(1):
                    return
        elif path.startswith("/hits/") or path == "/hits":
            key = unquote(path[len("/hits/"):]) if path != "/hits" else query.get("key", [""])[0]
            status = int(query.get("status", ["200"])[0])
            n = self.count(key, True)
            # until=N: answer `status` for the first N hits, then 200 (a server that recovers)
            until = query.get("until", [None])[0]
            if until is not None and n > int(until):
                status = 200
            headers = []
            if status != 200 and "retry_after" in query:
                headers.append(("Retry-After", query["retry_after"][0]))
            self.json({"key": key, "count": n, "method": self.command,
                       "client_port": self.client_address[1]}, status, headers)
        elif path.startswith("/hits-count/"):
            key = unquote(path[len("/hits-count/"):])
            self.json({"key": key, "count": self.count(key, False)})
        elif path in RAW_REPLIES:
            # Bytes no HTTP/1.1 server should send, written as they are, then the connection closes.
            self.close_connection = True
            self.wfile.write(RAW_REPLIES[path])
            self.wfile.flush()
        elif path == "/redirect-to":
            self.reply(302, "", headers=[("Location", query.get("url", ["/"])[0])])
        elif path == "/count":
            with counters_lock:
                self.json(dict(counters))
        else:
            self.reply(404, "not found\n")

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = dispatch


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    port = int(sys.argv[1])
    server = Server(("127.0.0.1", port), Handler)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("%d\n" % os.getpid())
    server.serve_forever()


if __name__ == "__main__":
    main()
