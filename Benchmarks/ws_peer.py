#!/usr/bin/env python3
"""The WebSocket peer for Benchmarks/streams.sh: N round trips of a 1 KB text message
(masked, as a client must) to ws://127.0.0.1:PORT/echo, on Python's standard library (Debian's
python3-websockets is not in this machine's package set). Prints the round trips done.

    python3 ws_peer.py PORT N
"""
import base64
import os
import socket
import struct
import sys


def read_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET /echo HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                  % (port, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    payload = b"x" * 1024
    done = 0
    for _ in range(n):
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        sock.sendall(bytes([0x81, 0x80 | 126]) + struct.pack(">H", len(payload)) + mask + masked)
        b0, b1 = read_exact(sock, 2)
        length = b1 & 0x7F
        if length == 126:
            length = struct.unpack(">H", read_exact(sock, 2))[0]
        elif length == 127:
            length = struct.unpack(">Q", read_exact(sock, 8))[0]
        if read_exact(sock, length) != payload:
            raise SystemExit("echo differs")
        done += 1
    sock.sendall(bytes([0x88, 0x82]) + b"\0\0\0\0" + struct.pack(">H", 1000))
    print(done)


if __name__ == "__main__":
    main()
