#!/usr/bin/env bash
# F5 end to end: when the last "/" of a session's base_url path is followed by a combining
# mark (U+0301), a relative reference is glued onto the host instead of replacing the last
# segment. Here base_url is http://127.0.0.1/<U+0301>dir (port 80) and the reference is
# ":PORT/hit". RFC 3986 gives http://127.0.0.1/:PORT/hit (port 80, where nothing listens).
# lunet requests http://127.0.0.1:PORT/hit instead, which is this script's server. Until the bug
# is fixed it prints "... -> REACHED /hit". Once fixed, it prints a connection error for port 80.
#
#   Fuzz/regressions/fuzz-url/F5-base-url-merge.sh [path/to/lunet]
set -u
LUNET=${1:-$(cd "$(dirname "$0")/../../.." && pwd)/.build/debug/lunet}
dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
python3 - "$dir/port" <<'PY' &
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("REACHED " + self.path).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
server=$!
for _ in $(seq 50); do [[ -s $dir/port ]] && break; sleep 0.1; done
SWIFT_BACKTRACE=enable=no "$LUNET" -e "
local s = http.session{ base_url = 'http://127.0.0.1/\u{301}dir' }
local ok, r = pcall(s.get, s, ':$(cat "$dir/port")/hit')
print(ok and (r.url .. ' -> ' .. r.body) or ('error: ' .. tostring(r)))"
