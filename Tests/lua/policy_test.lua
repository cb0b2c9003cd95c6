-- Queue policies and retry decisions as pure, table-driven logic: no network.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local _, eq, truthy = h.test, h.eq, h.truthy
local qp = require "lunet.queue_policy"
local rp = require "lunet.retry_policy"

local function entries(spec)
  -- "a:running b:waiting ..." -> entries
  local list, seq = {}, 0
  for id, state, pol in spec:gmatch("(%w+):(%a+):?(%a*)") do
    seq = seq + 1
    list[#list + 1] = { id = id, state = state, seq = seq, policy = pol ~= "" and pol or "wait" }
  end
  return list
end

local function seqs(list)
  local out = {}
  for _, e in ipairs(list) do out[#out + 1] = e.seq end
  return out
end

test("admit: cancel, reuse and wait", function()
  local cases = {
    { "a:running a:waiting b:running", "a", "cancel", nil, { cancel = { 1, 2 } } },
    { "a:done a:waiting", "a", "cancel", nil, { cancel = { 2 } } },
    { "b:running", "a", "cancel", nil, { cancel = {} } },
    { "a:running", "a", "reuse", 1, { cancel = {}, reuse = 1 } },
    { "a:running a:waiting", "a", "reuse", 2, { cancel = {}, reuse = 2 } },
    { "a:running", "a", "reuse", 2, { cancel = {} } },
    { "a:done", "a", "reuse", 1, { cancel = {} } },
    { "a:running", "a", "wait", nil, { cancel = {} } },
    { "a:running", nil, "cancel", nil, { cancel = {} } },
  }
  for i, c in ipairs(cases) do
    local list = entries(c[1])
    local d = qp.admit(list, c[2], c[3], c[4])
    eq({ cancel = seqs(d.cancel), reuse = d.reuse and d.reuse.seq }, c[5], "case " .. i .. " (" .. c[1] .. ", " .. c[3] .. ")")
  end
  truthy(not pcall(qp.admit, {}, "a", "sometimes"), "an unknown policy is an error")
end)

test("startable: concurrency and waiting behind the same identifier", function()
  local cases = {
    { "a:waiting b:waiting c:waiting", 2, { 1, 2 } },
    { "a:running b:waiting c:waiting", 2, { 2 } },
    { "a:running a:waiting:wait b:waiting", 4, { 3 } },           -- the second a waits for the first
    { "a:done a:waiting:wait", 4, { 2 } },
    { "a:waiting:wait a:waiting:wait a:waiting:wait", 4, { 1 } }, -- one at a time per identifier
    { "a:running a:waiting:cancel", 4, { 2 } },                   -- only "wait" serialises
    { "x:running y:running", 2, {} },
  }
  for i, c in ipairs(cases) do
    eq(seqs(qp.startable(entries(c[1]), c[2])), c[3], "case " .. i .. " (" .. c[1] .. ")")
  end
end)

local function resp(status, retry_after)
  return { status = status, headers = { ["retry-after"] = retry_after } }
end

test("retry decisions: classes, statuses, predicates, limits and methods", function()
  local p = { max = 2, backoff = 1, jitter = false }
  local cases = {
    -- policy, attempt, err, response, method, retry?, delay
    { p, 1, { kind = "connect" }, nil, "GET", true, 1 },
    { p, 2, { kind = "timeout" }, nil, "GET", true, 2 },
    { p, 3, { kind = "timeout" }, nil, "GET", false },              -- max 2 retries
    { p, 1, { kind = "tls" }, nil, "GET", false },                  -- not a default class
    { p, 1, nil, resp(503), "GET", true, 1 },
    { p, 1, nil, resp(404), "GET", false },
    { p, 1, nil, resp(503), "POST", false },                        -- not idempotent
    { { methods = "all", jitter = false, backoff = 1 }, 1, nil, resp(503), "POST", true, 1 },
    { { on = { 429 }, jitter = false, backoff = 1 }, 1, nil, resp(429), "GET", true, 1 },
    { { on = { 429 }, jitter = false }, 1, nil, resp(429, "7"), "GET", true, 7 },       -- Retry-After seconds
    { { on = { 429 }, max_retry_after = 5 }, 1, nil, resp(429, "120"), "GET", true, 5 },  -- capped
    { { on = { "dns" } }, 1, { kind = "dns" }, nil, "DELETE", true },
    { { on = function(e, r) return r and r.status == 418 end, jitter = false, backoff = 2 }, 1, nil, resp(418), "GET", true, 2 },
    { { backoff = 10, max_delay = 15, jitter = false }, 3, { kind = "connect" }, nil, "GET", true, 15 },
  }
  for i, c in ipairs(cases) do
    local d = rp.decide(c[1], c[2], c[3], c[4], c[5], 0.5, 1000000)
    eq(d.retry, c[6], "case " .. i .. " retry (" .. d.reason .. ")")
    if c[7] then eq(d.delay, c[7], "case " .. i .. " delay") end
  end
end)

test("jitter stays within half to all of the backoff", function()
  for _, r in ipairs({ 0, 0.25, 0.999 }) do
    local d = rp.decide({ backoff = 4 }, 1, { kind = "connect" }, nil, "GET", r)
    truthy(d.delay >= 2 and d.delay <= 4, "delay " .. d.delay)
  end
end)

test("Retry-After: seconds and HTTP dates", function()
  eq(rp.retry_after_seconds("120"), 120, "seconds")
  local now = 784111777   -- Sun, 06 Nov 1994 08:49:37 GMT
  eq(rp.retry_after_seconds("Sun, 06 Nov 1994 08:49:47 GMT", now), 10, "a date ten seconds ahead")
  eq(rp.retry_after_seconds("Sun, 06 Nov 1994 08:49:00 GMT", now), 0, "a date in the past")
  eq(rp.retry_after_seconds("soon", now), nil, "garbage")
  eq(rp.retry_after_seconds("-5", now), nil, "negative")
end)

test("net: the state source is injectable and changes reach listeners and waiters", function()
  local state = false
  net._set_source(function() return state end)
  eq(net.online(), false, "offline")
  local heard = {}
  net.on_change(function(online) heard[#heard + 1] = online end)
  local waiting = net.wait_online()
  eq(waiting.state, "pending", "waits while offline")
  state = true
  net._check()
  eq(heard, { true }, "the listener heard")
  task.sleep(0)
  eq(waiting.state, "done", "the waiter resumed")
  net._set_source(nil)
end)

h.done()
