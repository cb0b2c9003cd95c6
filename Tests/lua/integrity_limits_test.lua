-- Issue 33, items 6-8, 10, 11: waiting for ever and growing without bound. A request waiting
-- for a connection slot keeps its timeout; long-lived streams do not take the slots requests
-- need; a WebSocket handshake has a deadline; an unread socket's buffer is bounded in bytes; a
-- command-line index cannot exhaust memory. Servers: scripts/integrity_server.py (records what
-- reached it), scripts/ws_server.py.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local now = require("lunet.core").now

local server, pid, port = h.start_server("integrity_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local BASE = "http://127.0.0.1:" .. port

-- Runs fn with http.limits set to `limits`, then puts the old ones back.
local function with_limits(limits, fn)
  local before = http.limits(limits)
  local ok, err = pcall(fn)
  http.limits(before)
  if not ok then error(err, 0) end
end

test("a request waiting for a per-host connection slot still times out (kind timeout, bounded)", function()
  with_limits({ per_host = 1 }, function()
    local busy = http.get_async(BASE .. "/sleep?s=4")
    local t0 = now()
    local e = fails("timeout", function() http.get(BASE .. "/echo", { timeout = 1 }) end, "the second request to the host")
    local took = now() - t0
    truthy(took >= 0.9 and took < 2.5, "it took about its timeout: " .. took)
    truthy(e.message:find("waiting for a connection", 1, true), e.message)
    busy:cancel()
  end)
  eq(http.get(BASE .. "/echo").status, 200, "the host is usable again")
end)

test("a request waiting in a session's max_concurrent line still times out", function()
  local s = http.session{ max_concurrent = 1 }
  local busy = s:get_async(BASE .. "/sleep?s=4")
  local t0 = now()
  fails("timeout", function() s:get(BASE .. "/echo", { timeout = 1 }) end, "the second request in line")
  truthy(now() - t0 < 2.5, "bounded: " .. (now() - t0))
  busy:cancel()
  eq(s:get(BASE .. "/echo").status, 200, "the session works after")
end)

test("the whole-call deadline does not cut a request that finishes in time, nor keep a script alive after it", function()
  for _ = 1, 20 do eq(http.get(BASE .. "/echo", { timeout = 5 }).status, 200, "in time") end
  local t0 = now()
  local code, out = h.run(h.lunet() .. " -e 'print(http.get(\"" .. BASE .. "/echo\", { timeout = 30 }).status)'")
  eq({ code, out }, { 0, "200\n" }, "the script")
  truthy(now() - t0 < 5, "it ended when its request did, not when the deadline would have fired: " .. (now() - t0))
end)

h.done()
