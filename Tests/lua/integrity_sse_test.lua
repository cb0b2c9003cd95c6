-- Issue 33, item 9: event streams that never end an event, a line without a line end fed in
-- small pieces, and servers that invite a reconnect storm (retry: 0, empty answers, a huge
-- retry). Server: Tests/servers/integrity_server.py (/sse/...), which counts connections.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local parser = require "lunet.sse_parser"

local server, pid, port = h.start_server("integrity_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local BASE = "http://127.0.0.1:" .. port

local function connections(what, key)
  return tonumber(http.get(BASE .. "/sse/count?of=" .. what .. "&key=" .. key).body)
end

-- Runs `code` in a lunet child under /usr/bin/time: its output, peak RSS (KB), CPU seconds.
local function child(code)
  local rc, out = h.run("/usr/bin/time -f 'peak=%M cpu=%U+%S' " .. h.lunet() .. " " .. h.script(code))
  local u, sy = out:match("cpu=([%d.]+)+([%d.]+)")
  return rc, out, tonumber(out:match("peak=(%d+)")), tonumber(u) + tonumber(sy)
end

test("parser: a line without a line end fed 1 KiB at a time is linear, and the event arrives whole", function()
  local p = parser.new(32 * 1024 * 1024)
  local piece = string.rep("x", 1024)
  local t0 = os.clock()
  p:feed("data: ")
  for _ = 1, 8 * 1024 do eq(#p:feed(piece), 0, "no event yet") end   -- 8 MiB
  local evs = p:feed("\n\n")
  local cpu = os.clock() - t0
  eq(#evs, 1, "one event")
  eq(#evs[1].data, 8 * 1024 * 1024, "all of it")
  truthy(cpu < 2, "8 MiB in 1 KiB pieces took " .. cpu .. " s of CPU")
end)

test("parser: an event past max_event raises kind too_large, whether in data lines or one unfinished line", function()
  local p = parser.new(1000)
  fails("too_large", function() for _ = 1, 100 do p:feed("data: " .. string.rep("y", 50) .. "\n") end end, "data lines")
  p = parser.new(1000)
  p:feed("data: ")
  fails("too_large", function() for _ = 1, 100 do p:feed(string.rep("z", 50)) end end, "one line")
  -- Below the bound nothing changes, and the count starts again with each event.
  p = parser.new(1000)
  for _ = 1, 100 do eq(#p:feed("data: " .. string.rep("y", 500) .. "\n\n"), 1, "an event of 500 bytes") end
end)

test("a stream whose event never ends fails with too_large, in bounded memory", function()
  local rc, out, kb = child(string.format([[
    local s = http.sse("%s/sse/endless-event?limit=%d", { max_event = 4 * 1024 * 1024 })
    local ok, e = pcall(s.await, s)
    print(ok, e.kind, s.reconnects)
  ]], BASE, 256 * 1024 * 1024))
  eq(rc, 0, out)
  truthy(out:find("false\ttoo_large\t0", 1, true), "too_large, no reconnect: " .. out)
  truthy(kb < 120 * 1024, "peak RSS " .. kb .. " KB (the server offered 256 MB)")
  -- The default bound (16 MiB) holds too.
  rc, out, kb = child(string.format([[
    local ok, e = pcall(function() http.sse("%s/sse/endless-event?limit=%d"):await() end)
    print(ok, e.kind)
  ]], BASE, 256 * 1024 * 1024))
  truthy(out:find("false\ttoo_large", 1, true), "the default: " .. out)
  h.memory_bound(kb, 150 * 1024, "peak RSS " .. kb .. " KB")
end)

test("a 20 MiB line sent 1 KiB at a time costs linear CPU", function()
  local rc, out, _, cpu = child(string.format([[
    local s = http.sse("%s/sse/long-line?size=%d", { max_event = 32 * 1024 * 1024, max_retries = 0,
      on_event = function(ev) print("event", #ev.data) end })
    pcall(s.await, s)
  ]], BASE, 20 * 1024 * 1024))
  truthy(out:find("event\t20971520", 1, true), "the event arrived whole: " .. out)
  truthy(cpu < 6, "CPU " .. cpu .. " s (15.6 s when quadratic)")
end)

test("retry: 0 does not make a reconnect storm", function()
  local key = "zero" .. math.random(1e9)
  local s = http.sse(BASE .. "/sse/retry?ms=0&key=" .. key)
  task.sleep(1.5)
  s:close()
  local n = connections("retry", key)
  truthy(n >= 2 and n <= 20, "connections in 1.5 s: " .. n)
end)

test("empty answers back off, even from a retry of 0", function()
  local key = "empty" .. math.random(1e9)
  local s = http.sse(BASE .. "/sse/empty?key=" .. key, { retry = 0 })
  task.sleep(1.6)
  s:close()
  local n = connections("empty", key)
  truthy(n >= 2 and n <= 6, "connections in 1.6 s (0.1, 0.2, 0.4, 0.8 s apart): " .. n)
end)

test("a server's retry is capped by max_delay", function()
  local key = "huge" .. math.random(1e9)
  local s = http.sse(BASE .. "/sse/retry?ms=86400000&key=" .. key, { max_delay = 200 })
  task.sleep(1.2)
  s:close()
  truthy(s.retry <= 0.2, "the retry kept: " .. s.retry)
  truthy(connections("retry", key) >= 3, "it reconnected within max_delay")
end)

h.done()
