-- The host's run queue and the await protocol.
--
-- Every script, -e chunk and REPL line runs in a host coroutine (see task.lua). Awaiting a task
-- yields the coroutine with AWAIT and the task; the driver resumes it when the task settles.
-- A user's own coroutines keep working: coroutine.resume and coroutine.wrap are replaced (in
-- the prelude) by versions that pass an AWAIT yield up to whoever drives them, so a request made
-- inside a user coroutine suspends the whole chain instead of being mistaken for a user yield.
-- Where nothing can be yielded to (the main thread of a stock lua5.4, a metamethod), a wait runs
-- the loop in place until the task settles.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)

local M = {}

-- The C setmetatable and getmetatable, for lunet's own modules. The prelude wraps the globals
-- (so that a script looking at _G's metatable first gets the lazy globals loaded); this module
-- loads before it does. Through the wrappers every task and response made paid a Lua call more.
M.setmetatable, M.getmetatable = setmetatable, getmetatable

--- The private marker a host await yields with. Nothing else can produce it.
local AWAIT = setmetatable({}, { __name = "lunet.await" })
M.AWAIT = AWAIT

-- The run queue: continuations and resumes, run one at a time in the order they were queued.
local fns, args, head, tail = {}, {}, 1, 0
-- Above 0 while M.deliver or M.drain runs: what is queued then runs before they return, so the
-- loop need not be told (core.wake would be a crossing into Swift for nothing).
local busy = 0

--- Queues fn(arg) to run on a later turn of the loop (or at the end of the delivery or drain
--- running now).
function M.defer(fn, arg)
  if head > tail and busy == 0 then core.wake() end
  tail = tail + 1
  fns[tail], args[tail] = fn, arg
end

local stderr = io.stderr

-- Runs the queue until it is empty (raises if queued work does).
local function run_queue()
  while head <= tail do
    local i = head
    local fn, arg = fns[i], args[i]
    fns[i], args[i] = nil, nil
    head = i + 1
    fn(arg)
  end
end

--- Runs everything queued, including what the queued work queues. Called by the host once per
--- loop turn. Queued work protects itself (continuations run under xpcall); should an item
--- raise anyway (a host defect), it is printed, never lost, and the rest of the queue still
--- runs. One pcall around the loop, not one per item: this is the tasks' hot path.
function M.drain()
  busy = busy + 1
  while true do
    local ok, err = pcall(run_queue)
    if ok then break end
    stderr:write("lunet: internal error in queued work: ", tostring(err), "\n")
  end
  head, tail = 1, 0
  busy = busy - 1
end

--- How the loop calls Lua with news (a transfer's completion, a timer): fn(...), then the work
--- it queued (the continuations and the coroutine resumes it made due), in this one call from
--- Swift instead of a second one. fn is always lunet's own (core.send's and core.timer's
--- callbacks) and the queued work protects itself, so nothing here is a protected call of its
--- own (two of them were ~1.4k instructions of every request): the host's protected call
--- around this one catches a defect, reports it, and calls M.recover.
function M.deliver(fn, ...)
  busy = busy + 1
  fn(...)
  if head <= tail then
    run_queue()
    head, tail = 1, 0
  end
  busy = busy - 1
end

--- `fn` made a delivery of its own: called from the loop with up to four values, it runs
--- fn(a, b, c, d, first) and then what fn queued, as `deliver(fn, a, b, c, d)` does, without passing
--- fn and a variable count of values through it (the plain request's completion: http.lua).
--- `first` is true when nothing is queued: fn may then hand back a function and its argument
--- to run at once, the first work it would have queued (http.lua's plain_completed), which runs
--- where the queue would have run it, without going through the queue. Its body repeats
--- deliver's, and run_queue's loop, on purpose: a shared helper would be a Lua call more on
--- every completion.
function M.delivering(fn)
  return function(a, b, c, d)
    busy = busy + 1
    local now, arg = fn(a, b, c, d, head > tail)
    if now then now(arg) end
    while head <= tail do
      local i = head
      local f, x = fns[i], args[i]
      fns[i], args[i] = nil, nil
      head = i + 1
      f(x)
    end
    head, tail = 1, 0
    busy = busy - 1
  end
end

--- After a delivery raised (a host defect the host has reported): the count of deliveries
--- running is right again (the failed one's taken back: a delivery may run inside another, from
--- a wait that turns the loop), and what was queued behind the failure still runs.
function M.recover()
  if busy > 0 then busy = busy - 1 end
  M.drain()
end

local yield, isyieldable, step_until = coroutine.yield, coroutine.isyieldable, core.step_until

--- Waits until `t` (a task) is no longer pending: yields to the driver when it can, else runs
--- the loop here, in one call down (core.step_until) however many turns it takes.
function M.wait(t)
  if t.state ~= "pending" then return end
  if isyieldable() then
    yield(AWAIT, t)
  else
    M.drain()
    if t.state ~= "pending" then return end
    step_until(t)
  end
end

-- Coroutine functions that pass host awaits through user coroutines.
local resume, status, create = coroutine.resume, coroutine.status, coroutine.create
M.raw_resume = resume   -- the host drives its own coroutines with the unwrapped resume

-- What resume(co, ...) gave, host awaits passed on: an await from inside `co` is waited for
-- here and `co` resumed again; anything else is handed back as it came. The results travel as
-- arguments, not in a table: table.pack and table.unpack on every resume made a generator loop
-- (coroutine.wrap) ~6x slower than in a stock lua5.4.
local function passed_on(co, ok, first, ...)
  if ok and first == AWAIT and status(co) == "suspended" then
    M.wait((...))
    return passed_on(co, resume(co))
  end
  return ok, first, ...
end

function M.resume(co, ...)
  return passed_on(co, resume(co, ...))
end

local function unwrapped(ok, ...)
  if ok then return ... end
  error((...), 0)
end

function M.wrap(f)
  local co = create(f)
  return function(...)
    return unwrapped(passed_on(co, resume(co, ...)))
  end
end

return M
