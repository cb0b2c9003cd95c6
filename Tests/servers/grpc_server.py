#!/usr/bin/env python3
"""A real gRPC server (grpcio) for lunet's gRPC client tests (issue 39): the greet.Greeter
service of Tests/Fixtures/grpc/greet.proto, server reflection and the health service.

    python3 Tests/servers/grpc_server.py [--tls CERT KEY] [--no-reflection]

Run by the tests' virtual environment's python (grpcio, grpcio-tools, grpcio-reflection,
grpcio-health-checking, grpcio-status: scripts/requirements-test.txt). It compiles the .proto
into a temporary directory at start (grpc_tools.protoc; nothing generated is kept), listens on
127.0.0.1 on a port the kernel picks, prints that port on its first line and serves until
killed. Nothing else is written to stdout.

  --tls CERT KEY     serve TLS (HTTP/2 over ALPN h2) with this PEM certificate chain and key
                     instead of cleartext HTTP/2 (prior knowledge)
  --no-reflection    no reflection service

Besides greet.Greeter (the .proto says what each method does):
  grpc.health.v1.Health                     "" and "greet.Greeter" are SERVING
  grpc.reflection.v1alpha.ServerReflection  grpcio-reflection's servicer
  grpc.reflection.v1.ServerReflection       the same servicer: v1's messages are v1alpha's on
                                            the wire (grpcio-reflection 1.85 registers only
                                            v1alpha; grpcurl and current clients ask v1 first)

Compression: gzip-compressed requests are accepted (grpc-encoding: gzip, flag byte 1). A request
with metadata x-compress: gzip, on any Greeter method, is answered with grpc-encoding: gzip
(grpc's core does so whatever the request's grpc-accept-encoding says) and each message gzipped,
flag byte 1, except one that gzip would make larger (SayHello's short reply), which goes
uncompressed with flag byte 0: Big with size 1000 gives a compressed one.

Messages up to 64 MB either way (grpc.max_send_message_length / max_receive_message_length).

Reset, a misbehaving server, by HelloRequest.name. grpcio's Python API cannot write a bad frame
or an RST_STREAM of its own, so it acts on the call's TCP connection (the socket of this process
whose remote end is context.peer(), found in /proc/self/fd): every other call on that
connection dies with it. The response headers (initial metadata x-reset: NAME) go out first.
  "" or "close"  (or a name not below) then shutdown(2): FIN with the stream open, no message,
                 no trailers
                 (curl: "(18) HTTP/2 stream 1 was not closed cleanly before end of the
                 underlying stream"; grpcio's client: UNAVAILABLE "Socket closed")
  "rst"          then a TCP reset (connect(2) to AF_UNSPEC): no message, no trailers
                 (curl: "(56) Recv failure: Connection reset by peer")
  "midmessage"   then a 1 MB HelloReply paced at 256 KB/s (SO_MAX_PACING_RATE) and a TCP reset
                 200 ms later: the client has the message's 5-byte prefix and part of it
                 (some 200-300 KB), then the reset
  "cancel"       context.cancel(), which is not abrupt: grpc's core answers trailers-only,
                 HEADERS with END_STREAM, grpc-status 1 (CANCELLED), no RST_STREAM when the
                 client had finished sending
"""
import argparse
import ctypes
import importlib
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

# grpc's core logs to stderr at INFO (a refused TLS handshake, on purpose in the tests): quiet,
# before grpc is imported.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
from concurrent import futures
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]   # the checkout: this file is Tests/servers/grpc_server.py
PROTO = ROOT / "Tests" / "Fixtures" / "grpc" / "greet.proto"
MAX_MESSAGE = 64 * 1024 * 1024


def compile_proto():
    """greet_pb2 and greet_pb2_grpc, generated from PROTO into a directory removed at once."""
    from grpc_tools import protoc
    import grpc_tools
    well_known = str(Path(grpc_tools.__file__).parent / "_proto")
    out = tempfile.mkdtemp(prefix="lunet-grpc-")
    try:
        status = protoc.main([
            "grpc_tools.protoc", "-I", str(PROTO.parent), "-I", well_known,
            "--python_out=" + out, "--grpc_python_out=" + out, str(PROTO),
        ])
        if status != 0:
            sys.exit("grpc_server: protoc failed on %s" % PROTO)
        sys.path.insert(0, out)
        pb2 = importlib.import_module("greet_pb2")
        pb2_grpc = importlib.import_module("greet_pb2_grpc")
        sys.path.remove(out)
        return pb2, pb2_grpc
    finally:
        shutil.rmtree(out, ignore_errors=True)


pb2, pb2_grpc = compile_proto()

from google.protobuf import any_pb2  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402
from grpc_health.v1 import health, health_pb2, health_pb2_grpc  # noqa: E402
from grpc_reflection.v1alpha import reflection, reflection_pb2  # noqa: E402
from grpc_status import rpc_status  # noqa: E402


def metadata(context):
    return {k: v for k, v in context.invocation_metadata()}


def maybe_compress(context):
    if metadata(context).get("x-compress") == "gzip":
        context.set_compression(grpc.Compression.Gzip)


def pattern(size):
    block = bytes(range(251))
    return (block * (size // 251 + 1))[:size]


def connection_of(peer):
    """A duplicate of the descriptor of this process's TCP socket whose remote end is peer
    ("ipv4:H:P"), or None. Closing it leaves grpc's own descriptor open."""
    if not peer.startswith("ipv4:"):
        return None
    host, _, port = peer[len("ipv4:"):].rpartition(":")
    want = {(host, int(port)), ("::ffff:" + host, int(port))}   # grpc's sockets are often AF_INET6
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink("/proc/self/fd/" + name).startswith("socket:"):
                continue
            fd = os.dup(int(name))
        except OSError:
            continue
        try:
            s = socket.socket(fileno=fd)
        except OSError:
            os.close(fd)
            continue
        try:
            if s.type == socket.SOCK_STREAM and tuple(s.getpeername()[:2]) in want:
                return s
        except OSError:
            pass
        s.close()
    return None


def reset(sock):
    """Resets the TCP connection: connect(2) to AF_UNSPEC disconnects a TCP socket, which sends
    RST and drops whatever is still queued to send (unlike shutdown(2), whose FIN comes after it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    unspec = (ctypes.c_ubyte * 16)()   # a sockaddr whose sa_family is 0, AF_UNSPEC
    if libc.connect(sock.fileno(), unspec, len(unspec)) != 0:
        sock.shutdown(socket.SHUT_RDWR)


SO_MAX_PACING_RATE = getattr(socket, "SO_MAX_PACING_RATE", 47)   # Linux; bytes per second


class Greeter(pb2_grpc.GreeterServicer):
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = 0
        self.cancelled = 0
        self.in_flight = 0

    def SayHello(self, request, context):
        maybe_compress(context)
        md = metadata(context)
        trailing = []
        if "x-id" in md:
            context.send_initial_metadata([("x-id", md["x-id"])])
            trailing.append(("x-id-trailer", md["x-id"]))
        if "x-bin-bin" in md:
            trailing.append(("x-bin-bin", md["x-bin-bin"]))
        if trailing:
            context.set_trailing_metadata(trailing)
        return pb2.HelloReply(message="hello " + request.name)

    def Count(self, request, context):
        maybe_compress(context)
        for i in range(1, request.n + 1):
            if i > 1 and request.delay_ms > 0:
                time.sleep(request.delay_ms / 1000)
            if not context.is_active():
                return
            yield pb2.CountReply(i=i)

    def Sum(self, request_iterator, context):
        maybe_compress(context)
        return pb2.SumReply(total=sum(n.v for n in request_iterator))

    def Chat(self, request_iterator, context):
        maybe_compress(context)
        for m in request_iterator:
            yield pb2.ChatMessage(text="echo: " + m.text)

    def Fail(self, request, context):
        maybe_compress(context)
        name = request.code.upper()
        code = grpc.StatusCode.__members__.get(name)
        if code is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unknown status code name: " + request.code)
        if code == grpc.StatusCode.OK:
            return pb2.HelloReply(message=request.message)
        if request.with_details:
            info = any_pb2.Any()
            info.Pack(error_details_pb2.ErrorInfo(
                reason="TEST_FAILURE", domain="lunet.test", metadata={"code": name}))
            status = status_pb2.Status(code=code.value[0], message=request.message, details=[info])
            context.abort_with_status(rpc_status.to_status(status))
        context.abort(code, request.message)

    def Slow(self, request, context):
        maybe_compress(context)
        with self.lock:
            self.calls += 1
            self.in_flight += 1
        try:
            end = time.monotonic() + request.ms / 1000
            while time.monotonic() < end:
                if not context.is_active():
                    with self.lock:
                        self.cancelled += 1
                    return pb2.HelloReply(message="cancelled")
                time.sleep(min(0.01, max(0, end - time.monotonic())))
            return pb2.HelloReply(message="slept %d ms" % request.ms)
        finally:
            with self.lock:
                self.in_flight -= 1

    def Stats(self, request, context):
        # A Slow call whose client just gave up notices within 10 ms: wait (at most 1 s) for
        # the Slow calls still running, so that a test asking right after sees the count.
        give_up = time.monotonic() + 1
        while time.monotonic() < give_up:
            with self.lock:
                if self.in_flight == 0:
                    break
            time.sleep(0.005)
        with self.lock:
            return pb2.StatsReply(cancelled_count=self.cancelled, calls_count=self.calls)

    def Big(self, request, context):
        maybe_compress(context)
        return pb2.BigReply(payload=pattern(max(0, request.size)), received=len(request.payload))

    def Reset(self, request, context):
        mode = request.name or "close"
        if mode == "cancel":
            context.cancel()
            return pb2.HelloReply()
        context.send_initial_metadata([("x-reset", mode)])
        time.sleep(0.05)   # the headers go out first
        sock = connection_of(context.peer())
        if sock is None:
            context.abort(grpc.StatusCode.INTERNAL, "could not find the connection of " + context.peer())
        if mode == "midmessage":
            # The reply, 1 MB, leaves at 256 KB/s; the connection is reset 200 ms after it starts.
            sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, 256 * 1024)
            threading.Timer(0.2, lambda: (reset(sock), sock.close())).start()
            return pb2.HelloReply(message="x" * (1024 * 1024))
        if mode == "rst":
            reset(sock)
        else:
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        time.sleep(0.2)
        return pb2.HelloReply(message="never sent")


def reflection_v1(servicer):
    """grpc.reflection.v1.ServerReflection on grpcio-reflection's v1alpha servicer."""
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString)
    return grpc.method_handlers_generic_handler(
        "grpc.reflection.v1.ServerReflection", {"ServerReflectionInfo": handler})


def black_hole(port):
    """Accepts connections and holds them unread, until killed: a client's HTTP/2 stream may
    send 64 KiB (the initial window, with no SETTINGS from here) and the rest waits with it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    held = []
    while True:
        conn, _ = listener.accept()
        held.append(conn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--no-reflection", action="store_true")
    ap.add_argument("--port", type=int, default=0, help="this port instead of one the kernel picks (a restart on the same port)")
    ap.add_argument("--black-hole", action="store_true",
                    help="no gRPC: accept connections and never read from them (a sender's bound, tested)")
    args = ap.parse_args()
    if args.black_hole:
        black_hole(args.port)
        return

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32),
        options=[
            ("grpc.max_send_message_length", MAX_MESSAGE),
            ("grpc.max_receive_message_length", MAX_MESSAGE),
            ("grpc.so_reuseport", 0),
        ],
    )
    greeter_name = pb2.DESCRIPTOR.services_by_name["Greeter"].full_name
    pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)

    health_servicer = health.HealthServicer()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_servicer.set(greeter_name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)

    if not args.no_reflection:
        # v1 is not listed: its descriptors are not in this process (it is an alias of v1alpha).
        names = [greeter_name, health.SERVICE_NAME, reflection.SERVICE_NAME]
        servicer = reflection.ReflectionServicer(names)
        server.add_generic_rpc_handlers((reflection_v1(servicer),))
        reflection_pb2_grpc = importlib.import_module("grpc_reflection.v1alpha.reflection_pb2_grpc")
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)

    if args.tls:
        cert, key = (Path(p).read_bytes() for p in args.tls)
        port = server.add_secure_port("127.0.0.1:%d" % args.port, grpc.ssl_server_credentials([(key, cert)]))
    else:
        port = server.add_insecure_port("127.0.0.1:%d" % args.port)
    if port == 0:
        sys.exit("grpc_server: could not listen on 127.0.0.1")
    server.start()
    print(port, flush=True)
    try:
        server.wait_for_termination()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
