-- Tasks and continuations: deterministic, on sources and timers only.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local errors = require "lunet.errors"

test("continue, next and catch chain values; a returned task is flattened", function()
  local src = task.source()
  local t = src.task
    :next(function(v) return v + 1 end)
    :next(function(v) return task.delay(0.01, v * 10) end)   -- flattened
    :continue(function(t) return t.result .. "!" end)
  src:resolve(1)
  eq(t:await(), "20!", "chained result")
  eq(t.state, "done", "state")
end)

test("an error skips next and is recovered by catch; finally runs on both paths", function()
  local ran, finals = {}, 0
  local t = task.failed(errors.new("status", "boom"))
    :next(function() ran[#ran + 1] = "next" end)
    :finally(function() finals = finals + 1 end)
    :catch(function(e) ran[#ran + 1] = "catch " .. e.kind; return "recovered" end)
    :finally(function() finals = finals + 1 end)
  eq(t:await(), "recovered", "recovered value")
  eq(ran, { "catch status" }, "only catch ran")
  eq(finals, 2, "finally ran on the failure path and the success path")
end)

test("a continuation's task settled by its own callback stays as the callback left it", function()
  -- The first continuation of a pending task settles its task inline (task.lua); a callback
  -- that cancels that task before returning must leave it cancelled, with no result.
  local src = task.source()
  local t2
  t2 = src.task:continue(function() t2:cancel("stopped inside"); return 5 end)
  local plain = src.task:continue(function() return 6 end)   -- a second one: queued, not inline
  src:resolve(1)
  eq(plain:await(), 6, "the other continuation")
  eq({ t2.state, t2.result, t2.error and t2.error.message }, { "cancelled", nil, "stopped inside" }, "cancelled by its callback")
  local src2 = task.source()
  local t3 = src2.task:continue(function() return nil end)
  src2:resolve(1)
  eq({ t3:await(), t3.state }, { nil, "done" }, "a nil result: done, no result")
end)

test("user coroutines: every result and hole kept, errors raised, host awaits passed through", function()
  -- coroutine.resume and coroutine.wrap are the prelude's (runtime.lua): they hand results on as
  -- arguments, and wait for a host await made inside before resuming the coroutine again.
  local co = coroutine.create(function(a, b)
    local x, y, z = coroutine.yield(a, nil, b, nil)
    task.sleep(0.01)                                   -- a host await inside the user coroutine
    local n = select("#", coroutine.yield(x, y, z))
    return n, nil
  end)
  eq(table.pack(coroutine.resume(co, 1, 2)), { true, 1, nil, 2, nil, n = 5 }, "first yield, holes kept")
  eq(table.pack(coroutine.resume(co, "x", nil, "z")), { true, "x", nil, "z", n = 4 }, "after the await")
  eq(table.pack(coroutine.resume(co, nil, nil)), { true, 2, nil, n = 3 }, "the return values")
  eq(table.pack(coroutine.resume(co)), { false, "cannot resume dead coroutine", n = 2 }, "a dead coroutine")
  local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i, i * 10) end error("done here", 0) end)
  eq({ gen() }, { 1, 10 }, "wrap: values")
  gen() gen()
  local ok, e = pcall(gen)
  eq({ ok, e }, { false, "done here" }, "wrap: the coroutine's error raised as it was")
  local err_table = setmetatable({}, { __tostring = function() return "an error object" end })
  local ok2, e2 = pcall(coroutine.wrap(function() error(err_table) end))
  eq({ ok2, e2 == err_table }, { false, true }, "an error value that is not a string: the same value")
end)

test("an error raised in a continuation fails its task with a traceback", function()
  local t = task.resolved(1):next(function() error("inside") end)
  local ok, e = pcall(t.await, t)
  eq(ok, false, "await raises")
  truthy(tostring(e):find("inside", 1, true), tostring(e))
  eq(t.state, "failed", "state")
  truthy(t.traceback and t.traceback:find("stack traceback", 1, true), "traceback kept")
end)

test("finally that fails replaces the outcome; finally that returns a task is awaited", function()
  local t = task.resolved(1):finally(function() error("cleanup failed") end)
  truthy(not pcall(t.await, t), "fails")
  local order = {}
  local t2 = task.resolved("v"):finally(function() return task.delay(0.01):next(function() order[#order + 1] = "cleanup" end) end)
  eq(t2:await(), "v", "outcome passes through")
  eq(order, { "cleanup" }, "the returned task finished first")
end)

test("a continuation never runs inside the call that attaches it", function()
  local order = {}
  local t = task.resolved(1)
  local c = t:continue(function() order[#order + 1] = "continuation" end)
  order[#order + 1] = "after attach"
  c:await()
  eq(order, { "after attach", "continuation" }, "order")
end)

test("continuations run in the order their tasks settled", function()
  local a, b, c = task.source(), task.source(), task.source()
  local order = {}
  for name, src in pairs({ a = a, b = b, c = c }) do
    src.task:next(function() order[#order + 1] = name end)
  end
  b:resolve(); c:resolve(); a:resolve()
  task.sleep(0)
  eq(order, { "b", "c", "a" }, "settle order")
end)

test("a task settles once; settling again returns false", function()
  local src = task.source()
  eq(src:resolve(1), true, "first")
  eq(src:resolve(2), false, "second resolve")
  eq(src:reject("x"), false, "reject after resolve")
  eq(src:cancel(), false, "cancel after resolve")
  eq(src.task.result, 1, "result kept")
end)

test("cancelling runs every cancel hook once, in the order added, past one that raises", function()
  local src, ran = task.source(), {}
  src.task:_on_cancel_do(function(a) ran[#ran + 1] = "first " .. a end, "x")
  src.task:_on_cancel_do(function() error("a hook that fails") end)
  src.task:_on_cancel_do(function(t) ran[#ran + 1] = "third " .. t.state end)   -- no argument: the task
  eq(src.task:cancel(), true, "cancelled")
  eq(ran, { "first x", "third cancelled" }, "the hooks that ran")
  eq(src.task:cancel(), false, "a second cancel")
  eq(#ran, 2, "no hook ran twice")
  -- On a task that is done, no hook runs.
  local done = task.source()
  done.task:_on_cancel_do(function() ran[#ran + 1] = "after done" end)
  done:resolve(1)
  done.task:cancel()
  eq(#ran, 2, "no hook ran for a task already done")
end)

test("a settled task lets go of its cancel hooks (and what they hold), done or failed", function()
  for _, outcome in ipairs{ "resolve", "reject" } do
    local src = task.source()
    local held = setmetatable({}, { __mode = "k" })
    do
      local first, second = {}, {}
      held[first], held[second] = true, true
      src.task:_on_cancel_do(function() end, first)    -- the first hook lives in the task's fields
      src.task:_on_cancel_do(function() end, second)   -- the next ones in a list
    end
    src[outcome](src, "x")
    if outcome == "reject" then src.task:catch(function() end):await() end
    collectgarbage(); collectgarbage()
    eq(next(held), nil, outcome .. ": the hooks' arguments were collected")
  end
end)

test("all: results in input order, or the first error in input order with all errors", function()
  eq(task.all{ task.delay(0.02, "a"), task.resolved("b"), task.delay(0.01, "c") }:await(), { "a", "b", "c" }, "results")
  eq(task.all{}:await(), {}, "empty")
  local slow_failure = task.delay(0.02):next(function() error(errors.new("timeout", "first in input order")) end)
  local fast_failure = task.failed(errors.new("connect", "settles first"))
  local t = task.all{ slow_failure, task.resolved(1), fast_failure }
  local ok, e = pcall(t.await, t)
  eq(ok, false, "fails")
  eq(e.kind, "timeout", "the first error in input order")
  eq(#e.errors, 2, "every error listed")
  eq(e.errors[2].kind, "connect", "in input order")
end)

test("any: the first success; fails only when every task failed", function()
  eq(task.any{ task.failed("x"), task.delay(0.02, "slow"), task.delay(0.01, "fast") }:await(), "fast", "first success")
  local ok, e = pcall(function() return task.any{ task.failed(errors.new("dns", "a")), task.failed(errors.new("tls", "b")) }:await() end)
  eq({ ok, e.kind, #e.errors }, { false, "dns", 2 }, "all failed")
end)

test("race settles like the first to settle, success or failure", function()
  eq(task.race{ task.delay(0.05, "slow"), task.delay(0.01, "fast") }:await(), "fast", "success")
  local ok, e = pcall(function() return task.race{ task.delay(0.05, "slow"), task.delay(0.01):next(function() error(errors.new("status", "x")) end) }:await() end)
  eq({ ok, e.kind }, { false, "status" }, "failure first")
end)

test("cancelling a chain: cancellation passes through next and catch", function()
  local src = task.source()
  local caught = false
  local tail = src.task:next(function() return 1 end):catch(function() caught = true end)
  src:cancel()
  local ok, e = pcall(tail.await, tail)
  eq({ ok, e.kind, tail.state, caught }, { false, "cancelled", "cancelled", false }, "cancelled downstream")
end)

test("cancel tokens cancel every task registered with them", function()
  local tok = task.cancel_token()
  local a, b = task.delay(10), task.delay(10)
  tok:_add(a); tok:_add(b)
  tok:cancel()
  eq({ a.state, b.state }, { "cancelled", "cancelled" }, "both cancelled")
  local late = task.delay(10)
  tok:_add(late)
  eq(late.state, "cancelled", "a task added after cancel is cancelled at once")
end)

test("timeout fails with kind timeout and cancels the original", function()
  local slow = task.delay(10)
  local t = slow:timeout(0.05)
  local e = fails("timeout", function() t:await() end, "a slow task")
  truthy(e.message:find("0.05", 1, true), e.message)
  eq(slow.state, "cancelled", "the original is cancelled")
  eq(task.delay(0.01, "quick"):timeout(1):await(), "quick", "a quick task passes")
end)

test("spawn runs concurrently, starting on a later turn", function()
  local order = {}
  local t = task.spawn(function(x) order[#order + 1] = "spawned " .. x; task.sleep(0.01); return x * 2 end, 21)
  order[#order + 1] = "caller"
  eq(t:await(), 42, "result")
  eq(order, { "caller", "spawned 21" }, "the caller's code ran first")
end)

test("await gives every value a spawned function returned, nils included; continuations see them", function()
  local t = task.spawn(function() task.sleep(0.01); return "data", "binary", nil, 4 end)
  local seen
  t:continue(function(done) seen = done.results and done.results.n end)
  eq(table.pack(t:await()), { "data", "binary", nil, 4, n = 4 }, "all four values")
  eq(t.result, "data", "result is still the first")
  eq(seen, 4, "a continuation sees the results")
  eq(table.pack(task.spawn(function() return 1 end):await()), { 1, n = 1 }, "one value")
end)

test("sleep and delay wait on the loop; other tasks run meanwhile", function()
  local ticks = 0
  local ticker = task.spawn(function() for _ = 1, 5 do ticks = ticks + 1; task.sleep(0.01) end end)
  task.sleep(0.1)
  eq(ticks, 5, "the ticker ran while we slept")
  ticker:await()
end)

test("bad arguments name the function and the argument", function()
  local e = fails("argument", function() task.resolved(1):next(42) end)
  truthy(e.message:find("'next'", 1, true), e.message)
  fails("argument", function() task.sleep("1") end)
  fails("argument", function() task.all{ 1, 2 } end)
end)

test("a hundred thousand pending tasks are fine", function()
  local src = task.source()
  local n = 0
  for _ = 1, 100000 do src.task:next(function() n = n + 1 end) end
  src:resolve()
  task.sleep(0)
  eq(n, 100000, "every continuation ran")
end)

test("tasks, errors and responses do not go through the global setmetatable and getmetatable", function()
  -- lunet's modules use the C functions (runtime.lua): the prelude's wrappers of the globals cost
  -- a Lua call for every task and response, and a script's own replacement must not reach them.
  local code, out = h.run(h.lunet() .. [[ -e '
    local real_set, real_get = setmetatable, getmetatable
    setmetatable = function() error("the global setmetatable was called") end
    getmetatable = function() error("the global getmetatable was called") end
    local t = task.resolved(1):next(function(v) return v + 1 end)
    local e = require("lunet.errors").new("argument", "x")
    local r = http.get("]] .. h.env("LUNET_HTTPBIN") .. [[/get")
    setmetatable, getmetatable = real_set, real_get
    print(t:await(), require("lunet.errors").is(e), r.status, r.headers["content-type"])']])
  eq({ code, out }, { 0, "2\ttrue\t200\tapplication/json\n" }, "status and output")
end)

test("continue: several on one pending task run in order, on a settled one later, each with the task", function()
  local src = task.source()
  local seen = {}
  local a = src.task:continue(function(t) seen[#seen + 1] = "a:" .. t.state; return 1 end)
  local b = src.task:continue(function(t) seen[#seen + 1] = "b:" .. tostring(t.result); return 2 end)
  src:resolve("v")
  eq({ a:await(), b:await() }, { 1, 2 }, "each continuation's result")
  local c = src.task:continue(function(t) seen[#seen + 1] = "c:" .. t.result; error("boom") end)
  eq(#seen, 2, "a continuation on a settled task runs later, not in the call")
  eq(c:continue(function(t) return t.state end):await(), "failed", "an error fails the continuation's task")
  eq(seen, { "a:done", "b:v", "c:v" }, "order and arguments")
  local cancelled = task.source()
  local d = cancelled.task:continue(function(t) return t.state end)
  cancelled:cancel("stop")
  eq(d:await(), "cancelled", "a cancelled task's continuation runs with it")
end)

h.done()
