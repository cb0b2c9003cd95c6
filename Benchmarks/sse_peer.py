#!/usr/bin/env python3
"""The SSE peer for Benchmarks/streams.sh: reads /many?n=N from Tests/servers/sse_server.py with
http.client and splits it into events by the event-stream rules' line handling (fields, a blank
line ends an event). Prints the events read.

    python3 sse_peer.py PORT N KEY
"""
import http.client
import sys


def main():
    port, n, key = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/many?n=%d&key=%s" % (n, key), headers={"Accept": "text/event-stream"})
    resp = conn.getresponse()
    events, data = 0, []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                events += 1
            data = []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value[1:] if value.startswith(" ") else value)
    print(events)


if __name__ == "__main__":
    main()
