# The one set-up of lunet's test environment, sourced by every script that runs lunet's tests
# (scripts/test, scripts/sanitize, scripts/soak, scripts/fuzz), so that they cannot drift apart:
# a test file that passes under scripts/test finds the same variables and servers under the
# sanitizers (issue 51: scripts/sanitize lacked LUNET_INTERNALS and LUNET_VENV, and 23 Lua files
# failed on the harness, not the code).
#
#   source scripts/test.d/environment.sh
#   test_env_variables          # what every test run needs, servers or not
#   test_env_venv || exit 1     # the tests' Python peers (scripts/venv): LUNET_VENV
#   test_env_servers DIR        # the test servers in DIR (scripts/test-servers), their variables
#   test_env_stop DIR           # stops them (idempotent; for an EXIT trap)
#
# Each function prints what failed on stderr and returns non-zero; none exits.

# shellcheck shell=bash

test_env_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

test_env_variables() {
  # lunet's own tests read lunet.core's counters and clock, which scripts cannot reach otherwise
  # (lua/lunet/core_guard.lua); core_privacy_test.lua runs its children without it.
  export LUNET_INTERNALS=1
  # Everything the tests reach is local; never send it through a proxy.
  export no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
  export NO_PROXY=$no_proxy
}

test_env_venv() {
  local venv
  venv=$("$test_env_root/scripts/venv" </dev/null) || {
    echo "scripts/venv failed" >&2
    return 1
  }
  export LUNET_VENV=$venv
}

test_env_servers() {
  local dir=$1
  # Ports the kernel picks, httpbin's too: a test run leaves 8080 to the README's tour.
  LUNET_HTTPBIN_PORT=0 "$test_env_root/scripts/test-servers" start "$dir" || {
    echo "the test servers did not start ($dir)" >&2
    return 1
  }
  # shellcheck source=/dev/null
  source "$dir/env" # (a path with a slash: "source env" would search PATH)
}

test_env_stop() {
  "$test_env_root/scripts/test-servers" stop "$1" || true
}
