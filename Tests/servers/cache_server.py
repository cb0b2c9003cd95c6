#!/usr/bin/env python3
"""A scripted origin for the HTTP cache's conformance tests (Python standard library only).

    python3 Tests/servers/cache_server.py    # prints "PORT" on its first line, serves on 127.0.0.1

A test says what the origin answers, reply by reply, then requests it through lunet and reads
back what the origin was sent. Every exchange is real HTTP/1.1 over a socket.

  PUT /script/K     body: a JSON list of replies for key K (replaces K's script and log)
  ANY /r/K[...]     the next reply of K's script (the last one repeats), after recording the
                    request; anything may follow K in the path or query
  GET /log/K        the requests K's replies answered, oldest first, as JSON:
                    [{"method", "target", "headers": {lower-case name: value}}]

A reply is a JSON object; every member is optional:
  status      200
  headers     [[name, value], ...] in order (repeats allowed); Content-Length is added unless
              given or "length" is false (then the connection closes after the body)
  body        text (UTF-8)
  gzip        true: the body is sent gzip-compressed, with Content-Encoding: gzip
  codings     ["deflate", "gzip", ...]: content codings applied to the body in order, named in
              Content-Encoding in that order: "gzip", "deflate" (zlib-wrapped), "deflate-raw"
              (raw deflate, named "deflate", as some servers send it), "zstd" (a frame of raw
              blocks, window 2^zstd_window_log bytes, default 20), "garbage" (named "gzip",
              bytes that are not gzip)
  coding_label  the Content-Encoding value to send instead of the codings' names
  drop_tail   N: the coded body's last N bytes are not sent (with "length": false, a body cut
              short whose length nothing announced)
  ranges      true: a request with "Range: bytes=A-B" (one range; "A-", "-N" too) gets 206
              with Content-Range and those bytes of the body, unless its If-Range names
              another ETag
  action      "reset": close the connection with a TCP reset instead of replying
              "empty":  close it without a byte
              "cut":    send the head with the whole body's Content-Length, then half the
                        body, then close
  raw         text sent as it is instead of a reply, then the connection closes
"""
import gzip
import json
import socket
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler

from loopback_server import serve

scripts = {}
logs = {}
positions = {}
lock = threading.Lock()


def next_reply(key):
    with lock:
        script = scripts.get(key) or [{"status": 404, "body": "no script for " + key}]
        i = positions.get(key, 0)
        positions[key] = i + 1
        return script[min(i, len(script) - 1)]


def parse_range(value, size):
    """(start, end) inclusive for one byte range "bytes=A-B", "A-" or "-N"; None otherwise."""
    if not value or not value.startswith("bytes=") or "," in value:
        return None
    first, _, last = value[6:].strip().partition("-")
    try:
        if first == "":
            n = int(last)
            return (max(0, size - n), size - 1) if n > 0 else None
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return None
    return start, min(end, size - 1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_ANY(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        parts = self.path.split("?")[0].split("/")
        if self.command == "PUT" and len(parts) == 3 and parts[1] == "script":
            with lock:
                scripts[parts[2]] = json.loads(body or b"[]")
                logs[parts[2]] = []
                positions[parts[2]] = 0
            return self.send(200, [], b"ok")
        if self.command == "GET" and len(parts) == 3 and parts[1] == "log":
            with lock:
                data = json.dumps(logs.get(parts[2], [])).encode()
            return self.send(200, [["Content-Type", "application/json"]], data)
        if len(parts) >= 3 and parts[1] == "r":
            key = parts[2]
            with lock:
                logs.setdefault(key, []).append({
                    "method": self.command, "target": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                })
            return self.reply(next_reply(key))
        return self.send(404, [], b"unknown path")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_ANY

    def reply(self, spec):
        action = spec.get("action")
        if action == "reset":
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        if action == "empty":
            self.close_connection = True
            return
        if "raw" in spec:
            self.wfile.write(spec["raw"].encode())
            self.wfile.flush()
            self.close_connection = True
            return
        status = spec.get("status", 200)
        headers = [list(h) for h in spec.get("headers", [])]
        body = spec.get("body", "").encode()
        if spec.get("gzip"):
            body = gzip.compress(body)
            headers.append(["Content-Encoding", "gzip"])
        if spec.get("codings"):
            labels = []
            for name in spec["codings"]:
                body, label = apply_coding(name, body, spec.get("zstd_window_log", 20))
                labels.append(label)
            headers.append(["Content-Encoding", spec.get("coding_label", ", ".join(labels))])
        if spec.get("drop_tail"):
            body = body[:-spec["drop_tail"]]
        if spec.get("ranges") and self.command == "GET":
            etag = next((v for k, v in headers if k.lower() == "etag"), None)
            if_range = self.headers.get("If-Range")
            r = parse_range(self.headers.get("Range"), len(body))
            if r and (if_range is None or if_range == etag):
                status = 206
                headers.append(["Content-Range", "bytes %d-%d/%d" % (r[0], r[1], len(body))])
                body = body[r[0]:r[1] + 1]
        if action == "cut":
            self.head(status, headers)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send(status, headers, body, spec.get("length", True))

    def head(self, status, headers):
        """The status line and the fields; Date only when the reply names none (tests set it)."""
        self.send_response_only(status)
        if not any(k.lower() == "date" for k, _ in headers):
            self.send_header("Date", self.date_time_string())
        for k, v in headers:
            self.send_header(k, v)

    def send(self, status, headers, body, length=True):
        self.head(status, headers)
        has_length = any(k.lower() in ("content-length", "transfer-encoding") for k, _ in headers)
        if length and not has_length and status != 304 and not (100 <= status < 200 or status == 204):
            self.send_header("Content-Length", str(len(body)))
        if not length:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD" and status != 304:
            self.wfile.write(body)
        self.wfile.flush()


def zstd_raw_frame(data, window_log):
    """A zstd frame (RFC 8878 §3.1.1) of raw blocks: no compression, but a real frame whose
    window descriptor says 2^window_log bytes (what a decoder must be ready to hold)."""
    frame = struct.pack("<I", 0xFD2FB528)
    frame += bytes([0x00, (window_log - 10) << 3])  # no content size, not single-segment; window
    size = min(1 << window_log, 128 * 1024)
    pieces = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    for n, piece in enumerate(pieces):
        last = 1 if n == len(pieces) - 1 else 0
        header = last | (0 << 1) | (len(piece) << 3)  # block type 0: raw
        frame += struct.pack("<I", header)[:3] + piece
    return frame


def apply_coding(name, body, window_log):
    """(coded body, the name Content-Encoding gives it)."""
    if name == "gzip":
        return gzip.compress(body), "gzip"
    if name == "deflate":
        return zlib.compress(body), "deflate"
    if name == "deflate-raw":
        c = zlib.compressobj(wbits=-15)
        return c.compress(body) + c.flush(), "deflate"
    if name == "zstd":
        return zstd_raw_frame(body, window_log), "zstd"
    if name == "garbage":
        return b"this is not gzip at all" + body, "gzip"
    raise ValueError("unknown coding " + name)


def main():
    serve(Handler)


if __name__ == "__main__":
    sys.exit(main())
