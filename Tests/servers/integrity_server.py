#!/usr/bin/env python3
"""A server that does the hostile things issue 33's tests need, and records what it received
(Python's standard library only).

    python3 Tests/servers/integrity_server.py   # prints "PORT" on its first line, serves on 127.0.0.1

Every request is recorded (method, path, header fields as received, body length) except those
to /_log; tests read the record to see what reached this origin, or that nothing did.

  /_log                  the record, as JSON [{method, path, headers: [[n, v]...], body_len}]
  /_log?clear=1          empties it
  /echo[?cc=V]           JSON {n, method, path, headers, body_len}; n counts requests to /echo
                         (a response served from a cache shows an old n); cc: its Cache-Control
  /redirect?to=U[&status=302][&sleep=S]   a redirect to U (after S seconds)
  /set-cookie?name=N&value=V    200 with Set-Cookie: N=V; Path=/
  /sleep?s=N             answers after N seconds (at most 60)
  /hang                  reads the request, never answers (until the client goes, at most 60 s)
  /token?mode=M          an OAuth token answer: ok, crlf (a CR LF in the token), nul, huge (5 MB)
  /escapes               a header value and a text body with terminal escape sequences
  /unrequested-206       206 with Content-Range bytes 0-4/100 and 5 bytes, to any request
  /etag-flip?key=K&size=N  a resource that changes under a client that resumes: the first GET
                         of K gets 200, ETag "v1", N bytes of "a", cut after half; any request
                         with a Range then gets 206 of version 2 (ETag "v2", bytes "b"), If-Range
                         ignored; a request without one gets the whole version 2 (200)
  /etag-mixed?key=K&size=N  version 1 to HEAD (ETag "v1", Accept-Ranges); range requests get
                         version 1 and version 2 ("b", ETag "v2") in turn, If-Range ignored;
                         a GET without a Range gets the whole version 2
  /sse/endless-event?limit=BYTES   data lines without the blank line that ends an event
  /sse/long-line?size=N  one field of N bytes written 1 KiB at a time, no line end until the last
  /sse/retry?key=K&ms=M  "retry: M", one event, then the connection closes; counted by K
  /sse/empty?key=K       200 text/event-stream with an empty body; counted by K
  /sse/hold?s=S          one event, then the stream stays open S seconds (at most 60)
  /sse/count?of=W&key=K how many connections /sse/W had for K
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

from loopback_server import serve

lock = threading.Lock()
log = []
counts = {}
echo_n = [0]


def bump(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_all(self, status, body=b"", ctype="text/plain", headers=(), length=True):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def wait_for_close(self, limit):
        self.connection.settimeout(limit)
        try:
            while self.connection.recv(65536):
                pass
        except OSError:
            pass
        self.close_connection = True

    def handle_any(self):
        u = urlparse(self.path)
        q = {k: v[-1] for k, v in parse_qs(u.query).items()}
        body = self.read_body()
        fields = [[k, v] for k, v in self.headers.items()]
        if u.path != "/_log":
            with lock:
                log.append({"method": self.command, "path": self.path, "headers": fields, "body_len": len(body),
                            "body": body.decode("latin-1")[:2000]})
        p = u.path
        if p == "/_log":
            with lock:
                out = json.dumps(log).encode()
                if q.get("clear"):
                    log.clear()
            return self.send_all(200, out, "application/json")
        if p == "/echo":
            with lock:
                echo_n[0] += 1
                n = echo_n[0]
            out = json.dumps({"n": n, "method": self.command, "path": self.path, "headers": fields,
                              "body_len": len(body)}).encode()
            extra = [("Cache-Control", q["cc"])] if "cc" in q else []
            return self.send_all(200, out, "application/json", extra)
        if p == "/redirect":
            time.sleep(min(60.0, float(q.get("sleep", "0"))))
            return self.send_all(int(q.get("status", "302")), b"", headers=[("Location", q["to"])])
        if p == "/set-cookie":
            return self.send_all(200, b"set", headers=[("Set-Cookie", "%s=%s; Path=/" % (q["name"], q["value"]))])
        if p == "/sleep":
            time.sleep(min(60.0, float(q.get("s", "1"))))
            return self.send_all(200, b"slept")
        if p == "/hang":
            return self.wait_for_close(60)
        if p == "/token":
            mode = q.get("mode", "ok")
            token = {"ok": "tok-123", "crlf": "tok\r\nX-Injected: 1", "nul": "tok\u0000tail",
                     "huge": "t" * (5 << 20)}[mode]
            out = json.dumps({"access_token": token, "token_type": "Bearer", "expires_in": 3600}).encode()
            return self.send_all(200, out, "application/json")
        if p == "/escapes":
            return self.send_all(200, b"before \x1b[2J\x1b]0;pwned\x07 after\r\nline two\n", "text/plain",
                                 [("X-Evil", "a\x1b[31mred\x1b[0m")])
        if p == "/unrequested-206":
            return self.send_all(206, b"hello", "application/octet-stream", [("Content-Range", "bytes 0-4/100")])
        if p == "/etag-flip":
            return self.etag_flip(q)
        if p == "/etag-mixed":
            return self.etag_mixed(q)
        if p.startswith("/sse/"):
            return self.sse(p[5:], q)
        return self.send_all(404, b"no such path")

    def etag_flip(self, q):
        size = int(q.get("size", "100000"))
        key = "etag-flip:" + q.get("key", "")
        rng = self.headers.get("Range")
        if bump(key) == 1 and not rng:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.send_header("ETag", '"v1"')
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            self.wfile.write(b"a" * (size // 2))
            self.wfile.flush()
            self.close_connection = True
            return
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[6:].partition("-")
            start = int(start_s or 0)
            end = int(end_s) if end_s else size - 1
            end = min(end, size - 1)
            part = b"b" * (end - start + 1)
            return self.send_all(206, part, "application/octet-stream",
                                 [("ETag", '"v2"'), ("Content-Range", "bytes %d-%d/%d" % (start, end, size)),
                                  ("Accept-Ranges", "bytes")])
        return self.send_all(200, b"b" * size, "application/octet-stream", [("ETag", '"v2"'), ("Accept-Ranges", "bytes")])

    def etag_mixed(self, q):
        size = int(q.get("size", "1048576"))
        if self.command == "HEAD":
            self.send_response(200)
            for k, v in (("Content-Length", str(size)), ("ETag", '"v1"'), ("Accept-Ranges", "bytes"),
                         ("Content-Type", "application/octet-stream")):
                self.send_header(k, v)
            self.end_headers()
            return
        rng = self.headers.get("Range")
        if not rng:
            return self.send_all(200, b"b" * size, "application/octet-stream", [("ETag", '"v2"')])
        n = bump("etag-mixed:" + q.get("key", ""))
        version, letter = ('"v1"', b"a") if n % 2 == 1 else ('"v2"', b"b")
        start_s, _, end_s = rng[6:].partition("-")
        start = int(start_s or 0)
        end = min(int(end_s) if end_s else size - 1, size - 1)
        return self.send_all(206, letter * (end - start + 1), "application/octet-stream",
                             [("ETag", version), ("Content-Range", "bytes %d-%d/%d" % (start, end, size)),
                              ("Accept-Ranges", "bytes")])

    def sse(self, what, q):
        key = "sse:" + what + ":" + q.get("key", "")
        bump(key)
        if what == "count":
            return self.send_all(200, str(counts.get("sse:" + q.get("of", "") + ":" + q.get("key", ""), 0)).encode())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        w = self.wfile
        try:
            if what == "endless-event":
                limit = int(q.get("limit", str(256 << 20)))
                line = b"data: " + b"x" * 65530 + b"\n"
                sent = 0
                while sent < limit:
                    w.write(line)
                    sent += len(line)
            elif what == "long-line":
                size = int(q.get("size", str(20 << 20)))
                w.write(b"data: ")
                piece = b"x" * 1024
                for _ in range(size // 1024):
                    w.write(piece)
                    w.flush()
                w.write(b"\n\n")
            elif what == "retry":
                w.write(b"retry: " + q.get("ms", "0").encode() + b"\ndata: one\n\n")
            elif what == "empty":
                pass
            elif what == "hold":
                w.write(b"data: open\n\n")
                w.flush()
                self.wait_for_close(min(60.0, float(q.get("s", "10"))))
            w.flush()
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = handle_any


if __name__ == "__main__":
    serve(Handler)
