-- Requests as tasks: concurrency, limits and cancellation, counted (never timed).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")
local HOSTILE = h.env("LUNET_HOSTILE")

-- Samples http.stats().transfers every 10 ms while `t` runs; the highest count seen.
local function peak_while(t)
  local peak = 0
  local sampler = task.spawn(function()
    while t.state == "pending" do
      peak = math.max(peak, http.stats().transfers)
      task.sleep(0.01)
    end
  end)
  t:await()
  sampler:await()
  return peak
end

test("every verb has an _async form that returns a task at once", function()
  for _, verb in ipairs({ "get", "post", "put", "patch", "delete", "head", "options" }) do
    local t = http[verb .. "_async"](BIN .. "/anything")
    eq(t.state, "pending", verb .. "_async returns a pending task")
    eq(t:await().status, 200, verb)
  end
  local s = http.session{ base_url = BIN .. "/" }
  eq(s:get_async("get"):next(function(r) return r.status end):await(), 200, "session _async with next")
end)

test("twenty /delay/1 requests are all in flight at once", function()
  local list = {}
  for i = 1, 20 do list[i] = http.get_async(BIN .. "/delay/1") end
  eq(http.stats().transfers, 20, "twenty live transfers right after starting them")
  local peak = peak_while(task.all(list))
  eq(peak, 20, "peak live transfers")
  eq(http.stats().transfers, 0, "none left")
end)

test("max_concurrent = 4 never has more than 4 live", function()
  local s = http.session{ max_concurrent = 4 }
  local list = {}
  for i = 1, 10 do list[i] = s:get_async(BIN .. "/delay/0.3") end
  eq(http.stats().transfers, 4, "four started, six waiting")
  local peak = peak_while(task.all(list))
  eq(peak, 4, "peak live transfers")
  for i = 1, 10 do eq(list[i].result.status, 200, "request " .. i) end
end)

test("cancelling an in-flight /delay/10 removes its transfer at once", function()
  local t = http.get_async(BIN .. "/delay/10")
  task.sleep(0.1)
  eq(http.stats().transfers, 1, "in flight")
  t:cancel()
  eq(http.stats().transfers, 0, "gone right after cancel")
  local e = fails("cancelled", function() t:await() end, "awaiting the cancelled task")
  eq(e.url, BIN .. "/delay/10", "the error names the url")
end)

test("a cancel token cancels every request it was given", function()
  local tok = task.cancel_token()
  local a = http.get_async(BIN .. "/delay/10", { cancel = tok })
  local b = http.get_async(HOSTILE .. "/stall", { cancel = tok })
  task.sleep(0.1)
  eq(http.stats().transfers, 2, "both in flight")
  tok:cancel()
  eq(http.stats().transfers, 0, "both gone")
  eq({ a.state, b.state }, { "cancelled", "cancelled" }, "states")
end)

test("cancelling a request waiting for a max_concurrent slot never starts it", function()
  local s = http.session{ max_concurrent = 1 }
  local first = s:get_async(BIN .. "/delay/0.3")
  local second = s:get_async(BIN .. "/get")
  second:cancel()
  eq(first:await().status, 200, "the first finishes")
  eq(second.state, "cancelled", "the second was cancelled")
  task.sleep(0.05)
  eq(http.stats().transfers, 0, "the second never started")
end)

test("t:timeout on a request cancels the transfer", function()
  local t = http.get_async(BIN .. "/delay/10"):timeout(0.2)
  fails("timeout", function() t:await() end, "timeout")
  eq(http.stats().transfers, 0, "the transfer was removed")
end)

test("requests and timers interleave on one loop", function()
  local order = {}
  local slow = http.get_async(BIN .. "/delay/0.5"):next(function() order[#order + 1] = "slow" end)
  local fast = task.delay(0.05):next(function() order[#order + 1] = "timer" end)
  local quick = http.get_async(BIN .. "/get"):next(function() order[#order + 1] = "quick" end)
  task.all{ slow, fast, quick }:await()
  eq(order[#order], "slow", "the slow request finished last")
end)

h.done()
