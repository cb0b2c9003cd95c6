-- Issue 33, items 6-8, 10, 11: waiting for ever and growing without bound. A request waiting
-- for a connection slot keeps its timeout; long-lived streams do not take the slots requests
-- need; a WebSocket handshake has a deadline; an unread socket's buffer is bounded in bytes; a
-- command-line index cannot exhaust memory. Servers: Tests/servers/integrity_server.py (records what
-- reached it), Tests/servers/ws_server.py.
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

-- ---------------------------------------------------------------------------------------------
-- Item 8: the WebSocket opening has a deadline
-- ---------------------------------------------------------------------------------------------

local WS_HANG = BASE:gsub("^http", "ws") .. "/hang"

test("a server that accepts and never answers the upgrade: timeout, connect_timeout, and a default all end it", function()
  for _, case in ipairs({ { opts = { timeout = 1 }, limit = 1 }, { opts = { connect_timeout = 1 }, limit = 1 } }) do
    local t0 = now()
    local e = fails("timeout", function() http.websocket(WS_HANG, case.opts) end, h.show(case.opts))
    local took = now() - t0
    truthy(took >= 0.9 and took < case.limit + 1.5, h.show(case.opts) .. ": about its limit: " .. took)
    truthy(e.message:find("upgrade", 1, true), e.message)
  end
  -- Without either: a bound all the same (30 s), checked in a child so this file does not wait.
  local code, out = h.run("timeout 40 " .. h.lunet() .. " -e 'local ok, e = pcall(http.websocket, \"" .. WS_HANG .. "\") print(e.kind)'")
  eq({ code, out }, { 0, "timeout\n" }, "the default bound")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 10: an unread websocket holds a bounded number of bytes
-- ---------------------------------------------------------------------------------------------

local ws_server, ws_pid, ws_port = h.start_server("ws_server.py")
h.cleanup(after_all, function() h.stop_server(ws_server, ws_pid) end)
local WS = "ws://127.0.0.1:" .. ws_port

-- The peak RSS (KB) of a lunet child running `code`, and what it printed.
local function peak_kb(code)
  local script = h.script(code)
  local rc, out = h.run("/usr/bin/time -f 'peak=%M' " .. h.lunet() .. " " .. script)
  eq(rc, 0, "the child: " .. out)
  return tonumber(out:match("peak=(%d+)")), out
end

test("a websocket nobody reads holds at most buffer_bytes (16 MiB) plus a message, and every message arrives later", function()
  -- 100 messages of 4 MiB: 400 MiB if the socket were read on regardless.
  local kb, out = peak_kb(string.format([[
    local ws = http.websocket("%s/flood?n=100&size=4194304")
    task.sleep(2)                        -- nobody reads: the socket must stop being read
    collectgarbage()
    local n, bytes, ok = 0, 0, true
    for data, kind in ws:messages() do
      n = n + 1
      bytes = bytes + #data
      ok = ok and kind == "binary" and data:byte(1) == (n - 1) %% 256 and data:byte(-1) == (n - 1) %% 256
    end
    print("got", n, bytes, ok)
  ]], WS))
  truthy(out:find("got	100	419430400	true", 1, true), "every message, in order, intact: " .. out)
  h.memory_bound(kb, 150 * 1024, "peak RSS " .. kb .. " KB (400 MiB were sent)")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 11: one command-line argument cannot exhaust memory
-- ---------------------------------------------------------------------------------------------

test("a nested-JSON index that would pad beyond 100000 is a usage error (exit 2), at once, in little memory", function()
  for _, item in ipairs({ "a[999999999999]=1", "a[100001]=1", "x[0][99999999999999999999]:=1" }) do
    local t0 = now()
    local code, out = h.run("/usr/bin/time -f 'peak=%M' " .. h.lunet() .. " --offline POST " .. BASE .. "/echo '" .. item .. "'")
    eq(code, 2, item .. ": exit status (" .. out .. ")")
    truthy(out:find("largest index", 1, true), item .. ": the message says why: " .. out)
    truthy(now() - t0 < 5, item .. ": at once")
    truthy(tonumber(out:match("peak=(%d+)")) < 100 * 1024, item .. ": little memory: " .. out)
  end
  local code, out = h.run(h.lunet() .. " --offline --print=B POST " .. BASE .. "/echo 'a[100000]=1'")
  eq(code, 0, "the largest index still works")
  eq(#json.decode(out).a, 100001, "padded to it")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 7: long-lived streams do not take the slots requests need
-- ---------------------------------------------------------------------------------------------

test("70 websockets to one host open, and a request to that host still goes through", function()
  local open = {}
  for i = 1, 70 do open[i] = http.websocket_async(WS .. "/echo") end
  local sockets = task.all(open):await()
  eq(#sockets, 70, "all 70 opened (the per-host cap is 64)")
  sockets[70]:send("last")
  eq(sockets[70]:receive():await(), "last", "the 70th works")
  local r = http.get("http://127.0.0.1:" .. ws_port .. "/last-close?key=none", { timeout = 5 })
  eq(r.status, 200, "a request to the same host:port, with 70 websockets open")
  for _, ws in ipairs(sockets) do ws:close() end
end)

test("with per_host = 2, ten event streams and ten websockets leave the requests their slots", function()
  with_limits({ per_host = 2 }, function()
    local streams, events, sockets = {}, {}, {}
    for i = 1, 10 do
      streams[i] = http.sse(BASE .. "/sse/hold?s=20")
      events[i] = streams[i]:events()
      sockets[i] = http.websocket(WS .. "/echo")
    end
    -- Each stream got its first event: its connection is open.
    for i = 1, 10 do eq(events[i]().data, "open", "stream " .. i .. " is open") end
    local t0 = now()
    local tasks = {}
    for i = 1, 6 do tasks[i] = http.get_async(BASE .. "/echo?i=" .. i, { timeout = 5 }) end
    for _, r in ipairs(task.all(tasks):await()) do eq(r.status, 200, "a request beside the streams") end
    truthy(now() - t0 < 3, "at once: " .. (now() - t0))
    for i = 1, 10 do streams[i]:close(); sockets[i]:close() end
  end)
end)

test("a session's max_concurrent line holds requests, not event streams", function()
  local s = http.session{ max_concurrent = 1 }
  local stream = s:sse(BASE .. "/sse/hold?s=20")
  local events = stream:events()
  eq(events().data, "open", "the stream is open")
  eq(s:get(BASE .. "/echo", { timeout = 5 }).status, 200, "the session's request went through beside it")
  stream:close()
end)

h.done()
