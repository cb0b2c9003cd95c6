#!/usr/bin/env python3
"""An HTTP/3 server on 127.0.0.1 for lunet's HTTP/3 tests (aioquic, from the tests' virtual
environment: scripts/venv).

    h3_server.py CERT KEY     # prints "PORT" on its first line; QUIC on UDP 127.0.0.1:PORT

CERT and KEY: the test servers' certificate for 127.0.0.1 (scripts/test-servers makes it, signed
by LUNET_TEST_CA). Nothing listens on TCP: a client that does not speak HTTP/3 gets no answer.

  ANY /echo...      200, JSON: {"http_version": "3", "method", "path", "headers": {name: value},
                    "body": the request body as text}
  GET /status/N     status N, empty body
  GET /bytes/N      N bytes of "x"
The server stops by itself after ten minutes.
"""
import asyncio
import json
import sys

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated

LIFETIME = 600


class Handler(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = None
        self.requests = {}  # stream id -> (headers, body)

    def quic_event_received(self, event):
        if isinstance(event, ProtocolNegotiated) and event.alpn_protocol in H3_ALPN:
            self.http = H3Connection(self._quic)
        if self.http is None:
            return
        for h3_event in self.http.handle_event(event):
            if isinstance(h3_event, HeadersReceived):
                self.requests[h3_event.stream_id] = (h3_event.headers, bytearray())
            elif isinstance(h3_event, DataReceived) and h3_event.stream_id in self.requests:
                self.requests[h3_event.stream_id][1].extend(h3_event.data)
            else:
                continue
            if h3_event.stream_ended:
                self.answer(h3_event.stream_id)

    def answer(self, stream_id):
        headers, body = self.requests.pop(stream_id)
        fields = {k.decode(): v.decode(errors="replace") for k, v in headers}
        path = fields.get(":path", "/")
        status, out, kind = 200, b"", "text/plain"
        if path.startswith("/echo"):
            kind = "application/json"
            out = json.dumps({
                "http_version": "3", "method": fields.get(":method"), "path": path,
                "headers": {k: v for k, v in fields.items() if not k.startswith(":")},
                "body": body.decode(errors="replace"),
            }).encode()
        elif path.startswith("/status/"):
            status = int(path.split("/")[2])
        elif path.startswith("/bytes/"):
            out = b"x" * int(path.split("/")[2])
        else:
            status, out = 404, b"unknown path"
        self.http.send_headers(stream_id, [
            (b":status", str(status).encode()), (b"content-type", kind.encode()),
            (b"content-length", str(len(out)).encode()),
        ])
        self.http.send_data(stream_id, out, end_stream=True)
        self.transmit()


async def main(cert, key):
    configuration = QuicConfiguration(alpn_protocols=H3_ALPN, is_client=False)
    configuration.load_cert_chain(cert, key)
    server = await serve("127.0.0.1", 0, configuration=configuration, create_protocol=Handler)
    print(server._transport.get_extra_info("sockname")[1], flush=True)
    await asyncio.sleep(LIFETIME)
    server.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
