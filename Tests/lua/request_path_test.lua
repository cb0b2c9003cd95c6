-- The request path, counted at the bridge (issue 22): how many times a request crosses between
-- Lua and Swift (core.crossings(): calls from Lua into Swift functions, and protected calls from
-- Swift into Lua), and how many times a session prepares a request and looks it up in its cache
-- (core.session_counters). Counted, never timed.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local core = require "lunet.core"

-- Runs fn and returns the crossings it made (down: Lua into Swift; up: Swift into Lua) and
-- what fn returned. The second core.crossings() is itself a crossing down: not counted.
local function crossed(fn)
  local down0, up0 = core.crossings()
  local v = fn()
  local down1, up1 = core.crossings()
  return down1 - down0 - 1, up1 - up0, v
end

local function prepared_and_looked_up(s)
  local prepares, lookups = core.session_counters(s._core)
  return prepares, lookups
end

test("a plain http.get crosses twice: the send down, the response and its status up", function()
  http.get(BIN .. "/get")   -- the connection and every lazy module ready before counting
  local down, up, r = crossed(function() return http.get(BIN .. "/get") end)
  eq(r.status, 200, "status")
  eq(down, 1, "calls from Lua into Swift")
  eq(up, 1, "calls from Swift into Lua")
  -- The status came up with it. The rest of the head (reason, url, version, elapsed) comes in
  -- one call down at the first read of any of it (most programs read none: four values fewer
  -- up for every request), and then crosses nothing.
  down, up = crossed(function() return r.status end)
  eq(down + up, 0, "the status read without crossing")
  down, up = crossed(function() return { r.url, r.reason, r.http_version, r.elapsed } end)
  eq({ down, up }, { 1, 0 }, "reason, url, version and elapsed: one call down for the four")
  down, up = crossed(function() return { r.status, r.reason, r.url, r.http_version, r.elapsed } end)
  eq(down + up, 0, "read again without crossing")
  truthy(r.reason == "OK" and r.url == BIN .. "/get" and r.elapsed > 0, "the head is the response's")
end)

test("a session's GET awaited through its task crosses twice too", function()
  local s = http.session{ base_url = BIN, headers = { ["X-Probe"] = "1" } }
  s:get("/get")
  local down, up, r = crossed(function() return s:get_async("/get"):await() end)
  eq(r.status, 200, "status")
  eq(down, 1, "down")
  eq(up, 1, "up")
end)

test("a failure comes up in the same one call", function()
  local s = http.session{ base_url = BIN }
  local down, up, ok = crossed(function() return (pcall(s.get, s, "http://127.0.0.1:1/nothing")) end)
  eq(ok, false, "refused")
  eq(down, 1, "down")
  eq(up, 1, "up")
end)

test("a cache miss prepares once and looks up once; a fresh hit answers in the one call down", function()
  local s = http.session{ cache = h.fresh_cache() }
  local p0, l0 = prepared_and_looked_up(s)
  local down, up, r = crossed(function() return s:get(BIN .. "/cache/60") end)
  eq(r.status, 200, "status")
  eq(r.cache, "miss", "a miss")
  local p1, l1 = prepared_and_looked_up(s)
  eq(p1 - p0, 1, "prepared once")
  eq(l1 - l0, 1, "looked up once")
  eq(down, 1, "down")
  eq(up, 1, "up")

  down, up, r = crossed(function() return s:get(BIN .. "/cache/60") end)
  eq(r.cache, "hit", "then a hit")
  local p2, l2 = prepared_and_looked_up(s)
  eq(p2 - p1, 1, "the hit prepared once")
  eq(l2 - l1, 1, "and looked up once")
  eq(down, 1, "a hit is answered by the call down")
  eq(up, 0, "nothing comes up for it")
end)

test("a session composes its stages once, in order; none is the plain path", function()
  eq(#http._stages_of(http.session{}), 0, "a session without options has no stage")
  eq(table.concat(http._stages_of(http.session{ retry = true, wait_for_network = true, accept_status = "2xx" }), ","),
    "retry,wait,validate+transport", "retry outside waiting outside the checked transport")
  local s = http.session{ response = "json" }
  eq(table.concat(http._stages_of(s), ","), "validate+transport", "a response serializer is a stage")
  local plain = http.session{}
  local har = h.tmpname()
  local rec = http.record(har)
  eq(table.concat(http._stages_of(plain), ","), "record+transport", "recording adds a stage to every session")
  rec.stop()
  os.remove(har)
  eq(#http._stages_of(plain), 0, "and takes it away when it stops")
end)

test("a plain GET on a session with stages still goes through them", function()
  local s = http.session{ base_url = BIN, accept_status = "2xx" }
  local ok, e = pcall(s.get, s, "/status/404")
  eq(ok, false, "validated")
  eq(e.kind, "status", "by the validate stage")
end)

test("a timer's news comes up in one call: task.sleep wakes its coroutine without a second", function()
  task.sleep(0)
  local down, up = crossed(function() task.sleep(0.001) end)
  eq(down, 1, "the timer set (core.timer)")
  eq(up, 1, "the timer fired and the sleeper resumed in the same call up")
end)
