#!/usr/bin/env python3
"""A Server-Sent Events origin for lunet's tests, on Python's standard library only.

    python3 Tests/servers/sse_server.py     # prints "PORT" on its first line, serves on 127.0.0.1

Paths (the `key` query parameter keeps the connection counts of one test apart):
  /basic          the parsing cases: BOM, comments, CR/LF/CRLF, fields split across writes,
                  multi-line data, event names, ids, retry, an unfinished last event
  /resume?key=K   1st connection: id 1 and retry 50 ms, then it closes; 2nd: one event whose
                  data is the Last-Event-ID it was sent; then 204
  /drop?key=K     1st: one event, then the connection is cut; 2nd: another; then 204
  /echo?key=K     one event: the X-Test and Accept headers it was sent; then 204
  /plain          200 text/plain
  /nocontent      204
  /status?code=N  that status, as text/event-stream
  /many?n=N       N events as fast as the socket takes them, then 204 on the next connection
"""
import sys
import time
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlparse, parse_qs

from loopback_server import serve

counts = {}
lock = threading.Lock()


def connection_number(path, key):
    with lock:
        n = counts.get((path, key), 0) + 1
        counts[(path, key)] = n
        return n


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"   # the body ends when the connection closes

    def log_message(self, *args):
        pass

    def start(self, status=200, content_type="text/event-stream"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()

    def send(self, data, pause=0.02):
        self.wfile.write(data if isinstance(data, bytes) else data.encode())
        self.wfile.flush()
        time.sleep(pause)   # so that the pieces reach the client apart

    def do_GET(self):
        url = urlparse(self.path)
        q = parse_qs(url.query)
        key = q.get("key", [""])[0]
        n = connection_number(url.path, key)
        if url.path == "/basic":
            self.start()
            self.send(b"\xef\xbb\xbf" + b"data: first\n\n")
            self.send(": a comment\r\n")
            self.send("event: update\r\ndata: line one\r\ndata: line two\r\nid: 7\r\n\r\n")
            for piece in ["da", "ta: sp", "lit\r", "\n", "\r\n"]:
                self.send(piece)
            self.send("data:no space\r\rdata: after cr\n\n")
            self.send("event: empty\nunknown: field\nretry: x1\nid\ndata\n\n")
            self.send("retry: 100\n")
            self.send("data: unfinished")
        elif url.path == "/resume":
            if n == 1:
                self.start()
                self.send("retry: 50\nid: 1\ndata: one\n\n")
            elif n == 2:
                self.start()
                self.send("data: resumed after %s\n\n" % self.headers.get("Last-Event-ID", "nothing"))
            else:
                self.start(204)
        elif url.path == "/drop":
            if n == 1:
                self.start()
                self.send("retry: 30\ndata: a\n\n")
                self.connection.shutdown(2)   # cut, not a clean end of stream
            elif n == 2:
                self.start()
                self.send("data: b\n\n")
            else:
                self.start(204)
        elif url.path == "/echo":
            if n == 1:
                self.start()
                self.send("data: %s %s\n\n" % (self.headers.get("X-Test", "-"), self.headers.get("Accept", "-")))
            else:
                self.start(204)
        elif url.path == "/plain":
            self.start(200, "text/plain")
            self.send("hello")
        elif url.path == "/nocontent":
            self.start(204)
        elif url.path == "/status":
            self.start(int(q.get("code", ["500"])[0]))
            self.send("data: not for you\n\n")
        elif url.path == "/many":
            if n == 1:
                count = int(q.get("n", ["1000"])[0])
                self.start()
                batch = []
                for i in range(count):
                    batch.append("id: %d\ndata: event %d\n\n" % (i + 1, i + 1))
                    if len(batch) == 100:
                        self.wfile.write("".join(batch).encode())
                        batch = []
                self.wfile.write("".join(batch).encode())
                self.wfile.flush()
            else:
                self.start(204)
        else:
            self.start(404, "text/plain")


def main():
    serve(Handler)


if __name__ == "__main__":
    sys.exit(main())
