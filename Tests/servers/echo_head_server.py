#!/usr/bin/python3
"""Answers every request with the request's own head: its request line, then each header field
as it arrived (order, case and repeats kept), as text/plain. For tests of what lunet puts on the
wire. Prints its port first (loopback_server.serve)."""
from http.server import BaseHTTPRequestHandler

from loopback_server import serve


class EchoHead(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        lines = [self.requestline] + [f"{k}: {v}" for k, v in self.headers.items()]
        body = ("\n".join(lines) + "\n").encode("latin-1")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = answer

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    serve(EchoHead)
