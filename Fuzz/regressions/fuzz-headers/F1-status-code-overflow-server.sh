#!/usr/bin/env bash
# F1 end to end: a server whose second header line starts with "HTTP/" and carries a 20-digit
# "status" (with a colon, so that curl passes the line on) makes lunet trap with an arithmetic
# overflow in Transfer.receiveHeaderLine. Expect "lunet exited with status 132" (SIGILL: a Swift
# runtime trap) until it is fixed; once fixed, lunet prints the status (200).
#
#   Fuzz/regressions/fuzz-headers/F1-status-code-overflow-server.sh [path/to/lunet]
set -u
LUNET=${1:-$(cd "$(dirname "$0")/../../.." && pwd)/.build/debug/lunet}
dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
python3 - "$dir/port" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
c, _ = s.accept(); c.recv(65536)
c.sendall(b"HTTP/1.1 200 OK\r\nHTTP/1.1 99999999999999999999: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
c.close()
PY
server=$!
for _ in $(seq 50); do [[ -s $dir/port ]] && break; sleep 0.1; done
SWIFT_BACKTRACE=enable=no "$LUNET" -e "print(http.get('http://127.0.0.1:$(cat "$dir/port")/').status)"
echo "lunet exited with status $?"
