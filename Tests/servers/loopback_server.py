"""Serving a test server's handler on 127.0.0.1 (Python standard library only).

serve(Handler): a threading HTTP server on a port the kernel picks; the port is printed on the
first line of stdout (the tests read it there); the server stops by itself after ten minutes,
so that it never outlives the test that started it by much.
"""
import threading
from http.server import ThreadingHTTPServer


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # tests open many connections at once (socketserver's default is 5)


def serve(handler, lifetime=600):
    server = Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Timer(lifetime, server.shutdown).start()
    server.serve_forever()
