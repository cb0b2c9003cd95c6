--- `lunet load`'s engine: runs a plan's scenarios with their executors' schedules
--- (lunet.load.executors), each VU a task of its own on the one loop, and keeps the run's
--- metrics (lunet.load.metrics). The closed model's VUs loop; the open model starts iterations on
--- schedule from a pool of VUs and counts an iteration no VU was free for as dropped (never
--- started late), so latencies have no coordinated omission. Stopping (the end, Ctrl-C, a
--- threshold that aborts) lets iterations in flight finish within graceful_stop, then cancels them.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"
local executors = require "lunet.load.executors"
local vu_module = require "lunet.load.vu"
local shard = require "lunet.load.shard"
local record = require("lunet.load.hdr").record

local M = {}

local now = core.now

local Run = {}
Run.__index = Run

--- A run of `plan` with iteration functions `fns` ({ [scenario name] = function(vu, data) });
--- `series` (lunet.load.series, optional) also gets each request and the VUs each tick.
--- `current` (optional, a table with weak keys) gets { [coroutine] = vu } for each coroutine an
--- iteration runs in: check() and custom metrics find their VU there.
function M.new(plan, fns, registry, data, series, current)
  local r = setmetatable({
    plan = plan, fns = fns, registry = registry, data = data, record = vu_module.recorder(registry, series), series = series,
    current = current or setmetatable({}, { __mode = "k" }),
    next_id = 0, vus = 0, vus_max = 0, failures = {}, failure_count = 0, failure_kinds = 0, stopping = false, started = nil,
    active = {},   -- scenario name -> its state
  }, Run)
  r.m = {
    iterations = registry:metric("iterations", "counter"),
    iteration_duration = registry:metric("iteration_duration", "trend", "time"),
    iteration_failed = registry:metric("iteration_failed", "counter"),
    dropped = registry:metric("dropped_iterations", "counter"),
    interrupted = registry:metric("interrupted_iterations", "counter"),
    vus = registry:metric("vus", "gauge"),
    vus_max = registry:metric("vus_max", "gauge"),
  }
  return r
end

function Run:elapsed() return self.started and now() - self.started or 0 end

-- A new VU of scenario sc.
function Run:new_vu(sc)
  self.next_id = self.next_id + 1
  self.vus_max = self.vus_max + 1
  local vu = vu_module.new(shard.vu_id(self.next_id, self.plan.shard), sc, self.plan.session, self.record)
  vu.shard = self.plan.shard and self.plan.shard.index or 0
  self.grpc_record = self.grpc_record or require("lunet.load.grpc_vu").recorder(self.registry)
  vu._grpc_record = self.grpc_record
  return vu
end

--- Failures a run keeps apart: a script that puts an id in its error messages would otherwise
--- keep every one (and its traceback). Past MAX_FAILURES messages, new ones are counted under
--- OTHER_FAILURES; a message is cut at MAX_MESSAGE bytes.
M.MAX_FAILURES, M.MAX_MESSAGE, M.OTHER_FAILURES = 100, 4096, "(other failure messages)"

-- An iteration's error as the message it is counted by: cut at MAX_MESSAGE bytes.
local function failure_message(err)
  local message = errors.is(err) and tostring(err) or errors.describe(err)
  if #message > M.MAX_MESSAGE then
    message = string.format("%s... (%d bytes more)", message:sub(1, M.MAX_MESSAGE), #message - M.MAX_MESSAGE)
  end
  return message
end

-- Keeps an iteration's error: counted by message, the first few kept with their traceback.
function Run:failed(sc, err, traceback)
  self.failure_count = self.failure_count + 1
  local message = failure_message(err)
  local f = self.failures[message]
  if not f and self.failure_kinds >= M.MAX_FAILURES then
    message, traceback = M.OTHER_FAILURES, nil
    f = self.failures[message]
  end
  if not f then
    if message ~= M.OTHER_FAILURES then self.failure_kinds = self.failure_kinds + 1 end
    f = { message = message, count = 0, traceback = traceback, scenario = sc.name, order = self.failure_count }
    self.failures[message] = f
  end
  f.count = f.count + 1
  self.registry:add(self.m.iteration_failed, 1, { scenario = sc.name })
end

-- The traceback of the error being raised, kept by the handler below for iterate (it runs
-- where the error was raised, and xpcall returns right after it: no other iteration runs in
-- between). One handler for every iteration: no closure made per iteration. Only an error whose
-- message is new gets its traceback (Run:failed keeps just the first): a traceback names each
-- frame's function by searching package.loaded, which made a failing iteration cost three
-- passing ones when a server was down.
local last_traceback
local known_run   -- the run whose iteration is running (iterate says, at no cost a passing iteration notices)
local function keep_traceback(e)
  local message = failure_message(e)
  local run = known_run
  last_traceback = run.failure_kinds < M.MAX_FAILURES and not run.failures[message] and debug.traceback(message, 2) or nil
  return e
end

-- One iteration of `vu`: the scenario's function with the setup data; its duration and count,
-- or its failure. An iteration cancelled at a stop is counted as interrupted only (Run:interrupted). `t0`, when
-- given, is its start (a VU's loop hands over the end of its previous iteration, read a moment
-- before); returns its end, so that the loop reads the clock once an iteration, not twice.
function Run:iterate(sc, vu, fn, t0)
  t0 = t0 or now()
  vu.iteration = vu.iteration + 1
  known_run = self
  vu._in_iteration = true
  local ok, err = xpcall(fn, keep_traceback, vu, self.data)
  local traceback = last_traceback
  vu._in_iteration = false
  if not ok and errors.is(err) and err.kind == "cancelled" and (sc.state.stopping or self.stopping or vu._wanted == false) then return end
  local t1 = now()
  local its, dur = sc._iterations, sc._duration
  if its then
    its.sum, its.n = its.sum + 1, its.n + 1
    record(dur, (t1 - t0) * 1e6)
  else
    self.registry:add(self.m.iterations, 1, sc._tags, sc._key)
    self.registry:add(self.m.iteration_duration, (t1 - t0) * 1000, sc._tags, sc._key)
  end
  if not ok then self:failed(sc, err, traceback) end
  return t1
end

-- The VU task `t`, about to be cancelled (a stop, a ramp-down): an iteration it was in is cut
-- off, not done nor failed, and counted so (as k6's interrupted iterations): a run whose every
-- iteration was cut off (a target that never answers) shows it. A cancelled task never runs its
-- own code again, so it is counted here.
function Run:interrupted(sc, t)
  local vu = t._vu
  if vu and vu._in_iteration then
    vu._in_iteration = false
    self.registry:add(self.m.interrupted, 1, sc._tags, sc._key)
  end
end

-- A VU's work as a task, counted in the vus gauge while it runs, however it ends (a task
-- cancelled at a stop never runs its own code again: the continuation counts it out).
function Run:spawn_vu(sc, fn, vu, ...)
  self.vus = self.vus + 1
  -- The series' second holds the most VUs it saw: from the first VU on, not from the ticker's
  -- first tick a second later (the report's VUs chart started at 0).
  if self.series then require("lunet.load.series").note_vus(self.series, now(), self.vus) end
  local t = task.spawn(fn, vu, ...)
  t._vu = vu
  t:continue(function()
    self.vus = self.vus - 1
    -- Ended inside an iteration without returning from it: the hook stopped an iteration that
    -- never yielded (core.vu_hook): interrupted too.
    if vu._in_iteration then self:interrupted(sc, t) end
  end)
  return t
end

-- Closed model: VU loops. Each checks before every iteration whether it may start one.
function Run:run_closed(sc, st, fn)
  local e = sc.executor
  local shared_left = sc.iterations
  local length = executors.length(sc)
  local tasks = {}
  -- Whether `vu` may start an iteration at `at` (now when nil: after an iteration cancelled at
  -- a stop): one function for each executor, so that the check before every iteration asks
  -- only what its executor needs.
  local function running(at) return not (st.stopping or self.stopping) and (at or now()) - st.t0 < length end
  local may_start
  if e == "shared-iterations" then
    may_start = function(_, at)
      if not running(at) or shared_left <= 0 then return false end
      shared_left = shared_left - 1
      return true
    end
  elseif e == "per-vu-iterations" then
    may_start = function(vu, at) return running(at) and vu.iteration < sc.iterations end
  elseif e == "ramping-vus" then
    may_start = function(vu, at) return running(at) and vu._wanted end
  else
    may_start = function(_, at) return not (st.stopping or self.stopping) and (at or now()) - st.t0 < length end
  end
  local function loop(vu)
    self.current[coroutine.running()] = vu   -- one coroutine a VU's loop: said once
    core.vu_hook()   -- an iteration that never yields can still be stopped (vu_stop.c)
    local at = now()
    while may_start(vu, at) do at = self:iterate(sc, vu, fn, at) end
  end
  if e ~= "ramping-vus" then
    for _ = 1, executors.max_vus(sc) do tasks[#tasks + 1] = self:spawn_vu(sc, loop, self:new_vu(sc)) end
    return tasks
  end
  -- ramping-vus: every 50 ms the first N VUs are wanted, N as the ramp says. A VU no longer
  -- wanted ends its loop after its iteration, or is cancelled after graceful_ramp_down; one
  -- wanted again starts a new loop.
  local vus = {}
  while not (st.stopping or self.stopping) do
    local t = now() - st.t0
    if t >= length then break end
    local target = executors.vus_at(sc, t)
    for i = 1, math.max(target, #vus) do
      local vu = vus[i]
      if i <= target then
        if not vu then vu = self:new_vu(sc); vus[i] = vu end
        vu._wanted, vu._unwanted_since = true, nil
        if not vu._loop or vu._loop.state ~= "pending" then
          vu._loop = self:spawn_vu(sc, loop, vu)
          tasks[#tasks + 1] = vu._loop
        end
      elseif vu._wanted then
        vu._wanted, vu._unwanted_since = false, now()
      elseif vu._loop and vu._loop.state == "pending" and vu._unwanted_since and now() - vu._unwanted_since >= sc.graceful_ramp_down then
        self:interrupted(sc, vu._loop)
        vu._loop:cancel("ramped down: still running after graceful_ramp_down")
      end
    end
    task.sleep(0.05)
  end
  return tasks
end

-- Open model: iterations start on schedule from a pool of VUs (pre_allocated_vus, growing to
-- max_vus); one that finds no VU free is dropped.
function Run:run_open(sc, st, fn)
  local idle, allocated = {}, 0
  local function make()
    allocated = allocated + 1
    idle[#idle + 1] = self:new_vu(sc)
  end
  for _ = 1, sc.pre_allocated_vus do make() end
  local tasks, started = {}, 0
  local function one(vu)
    self.current[coroutine.running()] = vu
    core.vu_hook()
    self:iterate(sc, vu, fn)
    idle[#idle + 1] = vu
  end
  local length = executors.length(sc)
  while not (st.stopping or self.stopping) do
    local t = now() - st.t0
    local due = executors.due(sc, t)
    while started < due do
      started = started + 1
      if #idle == 0 and allocated < sc.max_vus then make() end
      local vu = table.remove(idle)
      if vu then
        tasks[#tasks + 1] = self:spawn_vu(sc, one, vu)
      else
        self.registry:add(self.m.dropped, 1, sc._tags, sc._key)
        if not sc._dropped_said and self.on_dropped then
          sc._dropped_said = true
          self.on_dropped(sc, allocated)
        end
      end
    end
    if t >= length then break end
    local next_at = executors.due_time(sc, started + 1)
    if not next_at then break end
    task.sleep(math.max(0.0005, math.min(0.25, next_at - (now() - st.t0))))
  end
  -- Tasks that settled are forgotten as they go: keep only what may still run.
  local pending = {}
  for _, t in ipairs(tasks) do if t.state == "pending" then pending[#pending + 1] = t end end
  return pending
end

-- Runs scenario sc from its start_time to its end and graceful stop; resolves when done.
function Run:run_scenario(sc)
  local st = { vus = {}, stopping = false }
  sc.state = st
  sc._tags = { scenario = sc.name }
  for k, v in pairs(sc.tags) do sc._tags[k] = tostring(v) end
  sc._key = require("lunet.load.metrics").tag_key(sc._tags)
  -- The scenario's iteration sinks, found once (nil with --out json: then through add).
  sc._iterations = self.registry:sink(self.m.iterations, sc._tags, sc._key)
  sc._duration = sc._iterations and self.registry:sink(self.m.iteration_duration, sc._tags, sc._key)
  self.active[sc.name] = st
  if sc.start_time > 0 then task.sleep(math.max(0, sc.start_time - self:elapsed())) end
  if self.stopping then return end
  st.t0 = now()
  local fn = self.fns[sc.name]
  local tasks
  if executors.OPEN[sc.executor] then tasks = self:run_open(sc, st, fn) else tasks = self:run_closed(sc, st, fn) end
  -- The schedule is over (or a stop came): what still runs has graceful_stop to finish.
  -- A stop that comes meanwhile (Ctrl-C, SIGTERM, abort_on_fail) shortens that: the wait looks
  -- again every STOP_POLL seconds, so iterations in flight (a request that never answers) are
  -- cancelled within the stop's grace, not at the schedule's end.
  local waiting = {}
  for _, t in ipairs(tasks) do if t.state == "pending" then waiting[#waiting + 1] = t end end
  if #waiting > 0 then
    local all = task.all(waiting)
    local scheduled = st.t0 + executors.length(sc) + sc.graceful_stop
    while all.state == "pending" do
      local deadline = scheduled
      if self.stopping then deadline = math.min(deadline, self.stopped_at + math.min(self.grace or sc.graceful_stop, sc.graceful_stop)) end
      local left = deadline - now()
      if left <= 0 then break end
      -- (a sleep, not a timeout on `all`: a timeout would cancel what it waits for)
      task.sleep(math.min(left, M.STOP_POLL))
    end
    st.stopping = true
    local why = self.stopping and "the run was stopped" or ("graceful stop: still running after " .. sc.graceful_stop .. " s")
    for _, t in ipairs(waiting) do
      if t.state == "pending" then
        self:interrupted(sc, t)
        t:cancel(why)
      end
    end
  end
  st.stopping = true
  st.done = true
end

--- How often a scenario waiting for its iterations to finish looks whether the run was stopped.
M.STOP_POLL = 0.1
--- How long after a VU should have been cancelled its hook stops it, if it never yielded.
M.HOOK_MARGIN = 0.5

--- Starts every scenario; a task that settles when all are done.
function Run:start()
  self.started = now()
  -- Past the whole schedule and its graceful stops, an iteration still spinning (one that never
  -- yields stops every timer) is stopped by its coroutine's hook.
  local last, longest_grace = 0, 0
  for _, sc in ipairs(self.plan.scenarios) do
    last = math.max(last, sc.start_time + executors.length(sc) + sc.graceful_stop)
    longest_grace = math.max(longest_grace, sc.graceful_stop)
  end
  core.vu_stop_after(last + M.HOOK_MARGIN)
  core.vu_grace(math.min(30, longest_grace))
  local list = {}
  for _, sc in ipairs(self.plan.scenarios) do
    list[#list + 1] = task.spawn(function() self:run_scenario(sc) end)
  end
  self.main = task.all(list)
  return self.main
end

--- Stops the run: no iteration starts any more; those in flight have `grace` seconds (at most
--- each scenario's graceful_stop), then are cancelled.
function Run:stop(grace)
  self.stopping = true
  self.stopped_at = self.stopped_at or now()
  -- A second stop (Ctrl-C again) may only shorten the grace, measured from the first.
  self.grace = math.min(self.grace or grace, grace)
  local longest = 0
  for _, sc in ipairs(self.plan.scenarios) do longest = math.max(longest, sc.graceful_stop) end
  local left = self.stopped_at + math.min(self.grace, longest) - now()
  core.vu_stop_after(left > 0 and left + M.HOOK_MARGIN or 0)
  for _, st in pairs(self.active) do st.stopping = st.stopping or false end
end

--- The VUs running and allocated, into their gauges (the ticker calls it once a second).
function Run:note_vus()
  self.registry:add(self.m.vus, self.vus, {})
  self.registry:add(self.m.vus_max, self.vus_max, {})
  if self.series then require("lunet.load.series").note_vus(self.series, now(), self.vus) end
end

return M
