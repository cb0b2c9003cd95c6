#!/usr/bin/env python3
"""Checks each request's AWS SigV4 signature with botocore, AWS's own Python client, as the
reference (run it with the tests' virtual environment: scripts/venv).

    .build/venv/bin/python3 Tests/servers/sigv4_reference_server.py KEY SECRET
    # prints "PORT" on its first line, serves on 127.0.0.1

For every request it answers 200 with JSON: {"ok": true|false, "expected": signature botocore
computes, "got": the one received, "canonical_request": botocore's, "path": the path received}.
botocore signs the request as received: the same method, the raw path and query, the fields
the Authorization names in SignedHeaders, the body, the X-Amz-Date time, and the region and
service of the credential scope. Only the first SignedHeaders matter: botocore would sign
every field, lunet signs the ones it names.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler

import botocore.auth
from botocore.auth import SigV4Auth, S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from loopback_server import serve

KEY, SECRET = sys.argv[1], sys.argv[2]

# botocore never signs User-Agent, Expect or X-Amzn-Trace-Id when it makes a request; AWS checks
# whatever SignedHeaders names, and curl's --aws-sigv4 signs every field it sends, User-Agent
# included. Only the fields the signature names reach the signer here (below), so sign them all.
botocore.auth.SIGNED_HEADERS_BLACKLIST[:] = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        auth = self.headers.get("Authorization", "")
        report = {"ok": False, "path": self.path}
        try:
            parts = dict(p.strip().split("=", 1) for p in auth.split(" ", 1)[1].split(","))
            _key, date, region, service, _ = parts["Credential"].split("/")
            signed = parts["SignedHeaders"].split(";")
            headers = {}
            for name in signed:
                values = self.headers.get_all(name) or []
                headers[name] = ",".join(values)
            token = self.headers.get("X-Amz-Security-Token")
            creds = Credentials(KEY, SECRET, token)
            signer = (S3SigV4Auth if service == "s3" else SigV4Auth)(creds, service, region)
            request = AWSRequest(method=self.command, url="http://" + self.headers["Host"] + self.path,
                                 headers=headers, data=body)
            request.context["timestamp"] = self.headers.get("X-Amz-Date")
            canonical = signer.canonical_request(request)
            expected = signer.signature(signer.string_to_sign(request, canonical), request)
            report.update(ok=expected == parts["Signature"], expected=expected, got=parts["Signature"],
                          canonical_request=canonical, signed_headers=signed)
        except Exception as e:  # a request without a usable signature: say why
            report["error"] = repr(e)
        out = json.dumps(report).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


if __name__ == "__main__":
    serve(Handler)
