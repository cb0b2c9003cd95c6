-- Tasks: promise-like values with continuations, after Bolts' BFTask.
--
-- A task settles once: "done" with a result, "failed" with an error, or "cancelled". Callbacks
-- attached to it never run inside the call that attaches them: they are queued when the task
-- settles (or at once, if it already has), and the loop runs the queue in order. So
-- continuations run one at a time, in the order their tasks settled, and never while other Lua
-- code is running.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"
local runtime = require "lunet.runtime"
local setmetatable, getmetatable = runtime.setmetatable, runtime.getmetatable   -- the C ones (runtime.lua)

local defer, AWAIT = runtime.defer, runtime.AWAIT
local traceback = debug.traceback
local pack, unpack = table.pack, table.unpack
local create, resume, status = coroutine.create, runtime.raw_resume, coroutine.status

local Task = {}
Task.__index = Task
Task.__name = "lunet.Task"

local M = { Task = Task }

-- Failed tasks nobody has looked at (awaited, continued, caught) yet: reported at the end.
local unobserved = {}
local unobserved_order = 0

local function is_task(v) return getmetatable(v) == Task end
M.is_task = is_task

-- A task's own bookkeeping lives in its array part, at these indices, each there from the
-- task's creation with `false` for "none": a table constructor fills the array part in one step,
-- where each named field is an insertion of its own (~100 instructions each, and a task is made
-- for every request); an absent field would be looked up in Task through __index at every read.
--   CB        the first callback (when_settled), a function run with the task once it settles
--   CBFN/CBTO what CB needs, when it is a shared function (continue, next, a host await): the
--             function or coroutine to run, and the task it settles
--   OBSERVED  awaited, continued or caught: a failure is not reported as unhandled
--   OCFN/OCARG the cancel hook and its argument (Task:_on_cancel_do); with more hooks than
--             one, run_hooks and the list of them
--   CBS       the callbacks after the first, in a list
-- Named fields are what users read (state, result, error, traceback, url, results), and
-- _awaiting, on a host coroutine's task only, read only when it is cancelled. `result` is
-- named (nil) to size the hash part for it. `new` is the one constructor of a pending task.
local CB <const>, CBFN <const>, CBTO <const>, OBSERVED <const>, OCFN <const>, OCARG <const>, CBS <const> = 1, 2, 3, 4, 5, 6, 7
M._OBSERVED, M._OCFN, M._OCARG, M._CB, M._CBS = OBSERVED, OCFN, OCARG, CB, CBS   -- for prelude.lua and lunet.http

--- A pending task; `url` names what it waits for (a request's), `on_cancel` is its first cancel
--- hook (a transfer's core.cancel: its argument, the transfer's number, goes in OCARG later).
local function new(url, on_cancel)
  return setmetatable({ false, false, false, false, on_cancel or false, false, false, state = "pending", url = url, result = nil }, Task)
end
M.new = new

local cancel   -- defined below; settle cancels what a cancelled host task was waiting for

-- A task's cancel hooks when it has more than one (Task:_on_cancel_do): each runs, in the order
-- they were added, whatever the ones before did.
local function run_hooks(hooks)
  for i = 1, #hooks, 2 do pcall(hooks[i], hooks[i + 1]) end
end

-- Settling ----------------------------------------------------------------------------------

-- Fails or cancels `t` (state "failed" or "cancelled"); resolve (below) is the "done" path.
local function settle(t, state, err, tb)
  if t.state ~= "pending" then return false end
  t.state = state
  t.error = err
  t.traceback = tb
  local cb = t[CB]
  if cb then
    t[CB] = false; defer(cb, t)
    local cbs = t[CBS]
    if cbs then
      t[CBS] = false
      for i = 1, #cbs do defer(cbs[i], t) end
    end
  end
  if state == "failed" and not t[OBSERVED] then
    unobserved_order = unobserved_order + 1
    unobserved[t] = unobserved_order
  end
  local awaiting = t._awaiting
  if state == "cancelled" and awaiting then
    -- a host coroutine's task: cancel what it was waiting for (a request stops at once)
    t._awaiting = nil
    cancel(awaiting, err and err.message)
  end
  local fn = t[OCFN]
  if fn then
    local arg = t[OCARG]
    t[OCFN], t[OCARG] = false, nil
    if state == "cancelled" then pcall(fn, arg) end
  end
  return true
end

-- The "done" path, settle's callbacks and hooks inline (not a helper: resolving is the hot
-- path of every task, and a call more a request shows). A task being resolved awaits nothing:
-- a host coroutine's task is resolved when its coroutine ends, after what it awaited woke it.
local function resolve(t, v)
  if t.state ~= "pending" then return false end
  t.state = "done"
  if v ~= nil then t.result = v end
  local cb = t[CB]
  if cb then
    t[CB] = false; defer(cb, t)
    local cbs = t[CBS]
    if cbs then
      t[CBS] = false
      for i = 1, #cbs do defer(cbs[i], t) end
    end
  end
  if t[OCFN] then t[OCFN], t[OCARG] = false, nil end
  return true
end
local function reject(t, err, tb)
  if not errors.is(err) and type(err) ~= "string" and type(err) ~= "table" then
    err = errors.new("argument", "a task failed with a " .. type(err) .. " value: " .. tostring(err))
  end
  return settle(t, "failed", err, tb)
end
function cancel(t, message)
  return settle(t, "cancelled", errors.new("cancelled", message or "the task was cancelled", { url = t.url }))
end
M._resolve, M._reject, M._cancel = resolve, reject, cancel

-- Only a failed task can be in `unobserved`.
local function observe(t)
  if not t[OBSERVED] then
    t[OBSERVED] = true
    if t.state == "failed" then unobserved[t] = nil end
  end
end

--- Runs fn(t) once t has settled (on a later turn).
local function when_settled(t, fn)
  if t.state ~= "pending" then
    defer(fn, t)
  elseif not t[CB] then
    t[CB] = fn
  else
    local cbs = t[CBS]
    if not cbs then cbs = {}; t[CBS] = cbs end
    cbs[#cbs + 1] = fn
  end
end
M._when_settled = when_settled

--- Settles `target` as `source` settled.
local function adopt(target, source)
  observe(source)
  when_settled(source, function(s)
    if s.state == "done" then resolve(target, s.result)
    elseif s.state == "failed" then reject(target, s.error, s.traceback)
    else settle(target, "cancelled", s.error) end
  end)
end

-- Running user callbacks: errors fail the target task with their traceback, never escape.
local last_traceback
local function handler(e)
  last_traceback = traceback(errors.describe(e), 2)
  return e
end

local function run_into(target, fn, arg)
  if target.state ~= "pending" then return end   -- cancelled meanwhile
  local ok, v = xpcall(fn, handler, arg)
  if not ok then
    reject(target, v, last_traceback)
  elseif v ~= nil and getmetatable(v) == Task then
    if v == target then
      reject(target, errors.new("argument", "a continuation returned its own task"))
    else
      adopt(target, v)
    end
  else
    resolve(target, v)
  end
end

local function check_fn(fn, name)
  if type(fn) ~= "function" then errors.argument(1, name, "function expected, got " .. type(fn)) end
end

-- Continuations --------------------------------------------------------------------------

-- What the first :continue on a pending task queues: fn and t2 wait in the task's own fields
-- (as for :next, below), not in a closure made per continuation.
local function continue_from_fields(t)
  local fn, t2 = t[CBFN], t[CBTO]
  t[CBFN], t[CBTO] = false, false
  -- run_into(t2, fn, t), repeated inline: a Lua call less for every continuation.
  if t2.state ~= "pending" then return end   -- cancelled meanwhile
  local ok, v = xpcall(fn, handler, t)
  if not ok then
    reject(t2, v, last_traceback)
  elseif v ~= nil and getmetatable(v) == Task then
    if v == t2 then
      reject(t2, errors.new("argument", "a continuation returned its own task"))
    else
      adopt(t2, v)
    end
  elseif not t2[CB] and t2.state == "pending" then
    -- resolve(t2, v) for a task nothing waits on yet (the usual continuation task), inline;
    -- the callback may have settled t2 itself (a cancel): resolve below leaves it so
    t2.state = "done"
    if v ~= nil then t2.result = v end
    if t2[OCFN] then t2[OCFN], t2[OCARG] = false, nil end
  else
    resolve(t2, v)
  end
end

-- :continue and :next, one body, made twice by this factory (a closure each, so a call to
-- either runs the body itself: a shared function called from both cost a Lua call per
-- continuation, ~0.9k of the ~12.6k instructions a task of the tasks benchmark costs). The
-- first continuation on a pending task keeps `fn` and the new task in the task's own fields
-- and queues a shared function (`from_fields`), instead of a closure per continuation (a third
-- of a continuation's cost); later ones go through when_settled. The new task is new()'s
-- table, inline for the same reason.
local function chaining(name, from_fields, step)
  return function(self, fn)
    if type(fn) ~= "function" then check_fn(fn, name) end
    if not self[OBSERVED] then self[OBSERVED] = true; if self.state == "failed" then unobserved[self] = nil end end   -- observe(self)
    local t2 = setmetatable({ false, false, false, false, false, false, false, state = "pending", result = nil }, Task)
    if self.state == "pending" and not self[CB] then
      self[CB], self[CBFN], self[CBTO] = from_fields, fn, t2
    else
      when_settled(self, function(t) step(t, fn, t2) end)
    end
    return t2
  end
end

-- What :continue does once its task settled: fn(t) into t2.
local function continue_step(t, fn, t2) run_into(t2, fn, t) end

--- Always runs with the settled task; its return value (or task) is the next task's result.
Task.continue = chaining("continue", continue_from_fields, continue_step)

-- What :next does once its task settled: fn(result) into t2, or the outcome passed through.
local function next_step(t, fn, t2)
  if t.state == "done" then run_into(t2, fn, t.result)
  elseif t.state == "failed" then reject(t2, t.error, t.traceback)
  else settle(t2, "cancelled", t.error) end
end

-- What the first :next on a pending task queues (see chaining).
local function next_from_fields(t)
  local fn, t2 = t[CBFN], t[CBTO]
  t[CBFN], t[CBTO] = false, false
  if t.state == "done" then run_into(t2, fn, t.result) else next_step(t, fn, t2) end
end

--- Runs on success with the result; failure and cancellation pass through.
Task.next = chaining("next", next_from_fields, next_step)

--- Runs on failure with the error; its return value recovers. Cancellation passes through.
function Task:catch(fn)
  check_fn(fn, "catch")
  observe(self)
  local t2 = new()
  when_settled(self, function(t)
    if t.state == "failed" then run_into(t2, fn, t.error)
    elseif t.state == "done" then resolve(t2, t.result)
    else settle(t2, "cancelled", t.error) end
  end)
  return t2
end

--- Runs on every outcome; the outcome passes through unless fn fails.
function Task:finally(fn)
  check_fn(fn, "finally")
  observe(self)
  local t2 = new()
  when_settled(self, function(t)
    local after = new()
    after[OBSERVED] = true   -- internal: its failure becomes t2's
    run_into(after, fn)
    when_settled(after, function(a)
      if a.state == "failed" then reject(t2, a.error, a.traceback)
      else adopt(t2, t) end
    end)
  end)
  return t2
end

--- Waits for the task: its result, or raises its error (a `cancelled` error when cancelled).
local wait = runtime.wait
local yield, isyieldable = coroutine.yield, coroutine.isyieldable
function Task:await()
  if self.state == "pending" then
    -- runtime.wait(self), its usual case inline (a host coroutine yields to its driver, which
    -- resumes it once the task has settled): a Lua call less every await.
    if isyieldable() then yield(AWAIT, self) else wait(self) end
  end
  if not self[OBSERVED] then self[OBSERVED] = true; if self.state == "failed" then unobserved[self] = nil end end   -- observe(self)
  if self.state == "done" then
    -- A spawned function's every return value (ws:receive's data and kind), else the result.
    local r = self.results
    if r then return unpack(r, 1, r.n) end
    return self.result
  end
  error(self.error, 0)
end

--- Cancels a pending task (and what it stands for: a transfer, a timer). False if settled.
function Task:cancel(message)
  return cancel(self, message)
end

--- Registers fn(t) to run at once when the task is cancelled (it stops the underlying work).
--- fn(arg) when arg is given (no closure needed to carry it), else fn(t).
function Task:_on_cancel_do(fn, arg)
  if arg == nil then arg = self end
  -- The first hook (a request's only one) lives in two fields: no table per request. A second
  -- one turns them into run_hooks and the list of every hook and its argument.
  local first = self[OCFN]
  if not first then
    self[OCFN], self[OCARG] = fn, arg
    return
  end
  if first ~= run_hooks then
    self[OCFN], self[OCARG] = run_hooks, { first, self[OCARG] }
  end
  local hooks = self[OCARG]
  local n = #hooks
  hooks[n + 1] = fn
  hooks[n + 2] = arg
end

function Task:__tostring()
  if self.state == "done" then return "task (done: " .. errors.describe(self.result) .. ")" end
  if self.state == "pending" then return "task (pending)" end
  return "task (" .. self.state .. ": " .. errors.describe(self.error) .. ")"
end

-- Making tasks ------------------------------------------------------------------------------

function M.resolved(v) local t = new(); resolve(t, v); return t end
function M.failed(err) local t = new(); reject(t, err); return t end

--- A completion source: src.task, src:resolve(v), src:reject(err), src:cancel().
local Source = {}
Source.__index = Source
Source.__name = "lunet.TaskSource"
function Source:resolve(v) return resolve(self.task, v) end
function Source:reject(err) return reject(self.task, err) end
function Source:cancel(message) return cancel(self.task, message) end
-- new()'s table, inline: calling new() cost ~320 instructions of the ~12.6k a task of the tasks
-- benchmark costs (callgrind, source + next + resolve: 12.9k with the call, 12.6k without).
function M.source()
  return setmetatable({ task = setmetatable({ false, false, false, false, false, false, false, state = "pending", result = nil }, Task) }, Source)
end

--- A cancellation token: pass { cancel = tok } to requests; tok:cancel() cancels them all.
local Token = {}
Token.__index = Token
Token.__name = "lunet.CancelToken"
function M.cancel_token()
  return setmetatable({ cancelled = false, _tasks = setmetatable({}, { __mode = "k" }) }, Token)
end
function Token:_add(t)
  if self.cancelled then cancel(t, "cancelled by its token") else self._tasks[t] = true end
end
function Token:cancel()
  if self.cancelled then return false end
  self.cancelled = true
  local list = {}
  for t in pairs(self._tasks) do list[#list + 1] = t end
  self._tasks = {}
  for _, t in ipairs(list) do cancel(t, "cancelled by its token") end
  return true
end

-- Host coroutines -------------------------------------------------------------------------

local drive

-- Wakes the host coroutine that awaited `awaited`: the first await of a pending task keeps the
-- coroutine and its task in the awaited task's fields, not in a closure per await.
local after_resume
local function resume_awaiter(awaited)
  local co, t = awaited[CBFN], awaited[CBTO]
  awaited[CBFN], awaited[CBTO] = false, false
  t._awaiting = nil
  -- drive(co, t), inline: drive takes a variable count of values (a vararg frame to set up),
  -- and this is every awaiting coroutine's wake-up.
  if t.state ~= "pending" then
    coroutine.close(co)
    return
  end
  return after_resume(co, t, resume(co))
end

-- What resuming host coroutine `co` (running for task `t`) gave: settle `t`, or wait for what
-- it awaits, or give the loop a turn. The results arrive as arguments, not in a table.
function after_resume(co, t, ok, first, ...)
  if not ok then
    reject(t, first, traceback(co, errors.describe(first)))
    return
  end
  if status(co) == "dead" then
    -- Every value the function returned, for await (set first: resolve runs continuations).
    if select("#", ...) > 0 then t.results = pack(first, ...) end
    resolve(t, first)
    return
  end
  if first == AWAIT then
    local awaited = ...
    if awaited.state ~= "pending" then return after_resume(co, t, resume(co)) end
    t._awaiting = awaited
    if not awaited[CB] then
      awaited[CB], awaited[CBFN], awaited[CBTO] = resume_awaiter, co, t
    else
      when_settled(awaited, function() t._awaiting = nil; drive(co, t) end)
    end
    return
  end
  -- A plain coroutine.yield at the top of a host coroutine gives the loop a turn.
  defer(function() drive(co, t) end)
end

-- Resumes host coroutine `co` that runs for task `t`, and handles what it yields.
function drive(co, t, ...)
  if t.state ~= "pending" then
    coroutine.close(co)   -- cancelled while it waited: never resumed, its to-be-closed variables closed
    return
  end
  return after_resume(co, t, resume(co, ...))
end

--- Runs fn(...) as a host coroutine starting now; a task of its result.
function M._start(fn, ...)
  local t = new()
  drive(create(fn), t, ...)
  return t
end

-- What an unhandled failure (a task that failed with nothing awaiting or catching it) does to a
-- script: "exit" (the default) ends it with status 1 after the report, as Node.js does with an
-- unhandled rejection; "warn" reports it and leaves the status alone.
M._unhandled = os.getenv("LUNET_UNHANDLED") == "warn" and "warn" or "exit"

--- task.on_unhandled("warn" | "exit"): the policy for unhandled failures (see above).
function M.on_unhandled(mode)
  if mode ~= "warn" and mode ~= "exit" then
    errors.argument(1, "on_unhandled", "\"warn\" or \"exit\" expected, got " .. tostring(mode))
  end
  M._unhandled = mode
end

--- Runs fn(...) concurrently, starting on a later turn; a task of its return value.
function M.spawn(fn, ...)
  check_fn(fn, "spawn")
  local t = new()
  local a = pack(...)
  defer(function() if t.state == "pending" then drive(create(fn), t, unpack(a, 1, a.n)) end end)
  return t
end

-- Timers and combinators (delay, sleep, timeout, all, any, race): lunet.task.combine, given
-- what they are made of.
require("lunet.task.combine")(M, Task, {
  new = new, resolve = resolve, reject = reject, cancel = cancel, adopt = adopt,
  when_settled = when_settled, observe = observe, is_task = is_task,
})

-- Reporting at the end ------------------------------------------------------------------

--- Failed tasks nobody looked at, in the order they failed; forgets them.
function M._take_unobserved()
  local list = {}
  for t, order in pairs(unobserved) do list[#list + 1] = { t = t, order = order } end
  table.sort(list, function(a, b) return a.order < b.order end)
  unobserved = {}
  for i, e in ipairs(list) do list[i] = e.t end
  return list
end

return M
