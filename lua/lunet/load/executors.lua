--- The schedules of `lunet load`'s executors, as k6 names them: pure functions of a scenario's
--- options and the time since it started (seconds), tested without the network. The runner
--- (lunet.load.runner) asks them how many VUs should be running and how many iterations are due;
--- it never decides a schedule itself.
---
---   closed model: the VUs loop, each starting its next iteration when the last one ended
---     shared-iterations   `vus` share `iterations` in all, within `max_duration`
---     per-vu-iterations   each of `vus` runs `iterations`, within `max_duration`
---     constant-vus        `vus` for `duration`
---     ramping-vus         from `start_vus` through `stages` ({ duration, target } each, linear)
---   open model: iterations start on a schedule, whether or not earlier ones finished
---     constant-arrival-rate   `rate` per `time_unit` for `duration`
---     ramping-arrival-rate    from `start_rate` through `stages` of rates per `time_unit`
local M = {}

M.CLOSED = { ["shared-iterations"] = true, ["per-vu-iterations"] = true, ["constant-vus"] = true, ["ramping-vus"] = true }
M.OPEN = { ["constant-arrival-rate"] = true, ["ramping-arrival-rate"] = true }

-- The value of a ramp at time t: `start` at 0, then each stage moving linearly to its target
-- over its duration; the last target after the end.
local function ramp(start, stages, t)
  local at, from = 0, start
  for _, s in ipairs(stages) do
    if t < at + s.duration then
      if s.duration <= 0 then return s.target end
      return from + (s.target - from) * (t - at) / s.duration
    end
    at, from = at + s.duration, s.target
  end
  return from
end
M.ramp = ramp

local function stages_length(stages)
  local total = 0
  for _, s in ipairs(stages) do total = total + s.duration end
  return total
end

--- How long the scenario runs, in seconds, before its graceful stop (for the iteration
--- executors: max_duration, the most they may take).
function M.length(sc)
  local e = sc.executor
  if e == "ramping-vus" or e == "ramping-arrival-rate" then return stages_length(sc.stages) end
  if e == "shared-iterations" or e == "per-vu-iterations" then return sc.max_duration end
  return sc.duration
end

--- The VUs the scenario wants running at time t (closed model): whole VUs, rounded down as k6
--- does while ramping (a VU starts when the ramp reaches it).
--- A sharded ramp (sc.shard, lunet.load.shard) gives the VUs of its stripe: VU j of the whole
--- test is shard j % N's, and runs when the whole ramp reaches it.
local function stripe(sc, g)
  local s = sc.shard
  if not s or g <= s.index then return s and 0 or g end
  return (g - s.index - 1) // s.count + 1
end

function M.vus_at(sc, t)
  local e = sc.executor
  if e == "ramping-vus" then
    if t >= stages_length(sc.stages) then return 0 end
    return stripe(sc, math.floor(ramp(sc.start_vus, sc.stages, t) + 1e-9))
  end
  if t >= M.length(sc) then return 0 end
  return sc.vus
end

--- The most VUs the scenario ever wants (closed model), or may use (open model: max_vus).
function M.max_vus(sc)
  local e = sc.executor
  if e == "ramping-vus" then
    local most = sc.start_vus
    for _, s in ipairs(sc.stages) do if s.target > most then most = s.target end end
    return stripe(sc, most)
  end
  if M.OPEN[e] then return sc.max_vus end
  return sc.vus
end

-- Iterations per second at time t (open model).
local function rate_at(sc, t)
  if sc.executor == "constant-arrival-rate" then return sc.rate / sc.time_unit end
  return ramp(sc.start_rate, sc.stages, t) / sc.time_unit
end
M.rate_at = rate_at

--- How many iterations have come due by time t (open model), counted from the start: the
--- integral of the rate, whole iterations. Iteration i (from 1) is due when this first reaches i,
--- so due(t1) - due(t0) iterations start in (t0, t1].
local function whole_due(sc, t)
  local length = M.length(sc)
  if t > length then t = length end
  if t <= 0 then return 0 end
  if sc.executor == "constant-arrival-rate" then
    -- The first starts at 0 (k6 starts one at once), then one every 1/rate seconds, each that
    -- starts before the end: ceil(length * rate), not floor (3 per 2 s for 3 s start at 0, 2/3,
    -- 4/3, 2 and 8/3 s: five).
    return math.min(math.floor(t * sc.rate / sc.time_unit + 1e-9) + 1, math.ceil(length * sc.rate / sc.time_unit - 1e-9))
  end
  -- ramping: integrate the piecewise linear rate (exact on each stage)
  local at, from, sum = 0, sc.start_rate / sc.time_unit, 0
  for _, s in ipairs(sc.stages) do
    local to = s.target / sc.time_unit
    local stop = math.min(t, at + s.duration)
    if stop > at then
      local r_stop = s.duration > 0 and from + (to - from) * (stop - at) / s.duration or to
      sum = sum + (from + r_stop) / 2 * (stop - at)
    end
    if t <= at + s.duration then break end
    at, from = at + s.duration, to
  end
  return math.floor(sum + 1e-9)
end

local whole_due_time

--- Iterations due by time t (open model) of the scenario's shard: iteration n (from 1) of the
--- whole test is shard (n - 1) % N's.
function M.due(sc, t)
  return stripe(sc, whole_due(sc, t))
end

--- The time iteration i (from 1) of the scenario's shard comes due, or nil past the end.
function M.due_time(sc, i)
  local s = sc.shard
  if s then i = (i - 1) * s.count + s.index + 1 end
  return whole_due_time(sc, i)
end

-- The time iteration i (from 1) of the whole test comes due, or nil past the end.
whole_due_time = function(sc, i)
  local length = M.length(sc)
  if sc.executor == "constant-arrival-rate" then
    local t = (i - 1) * sc.time_unit / sc.rate
    if i > whole_due(sc, length) then return nil end
    return t
  end
  if whole_due(sc, length) < i then return nil end
  -- bisection on the monotone count; precise to a microsecond
  local lo, hi = 0, length
  while hi - lo > 1e-6 do
    local mid = (lo + hi) / 2
    if mid <= lo or mid >= hi then break end   -- past ~10^10 s a float's step is over 1 µs
    if whole_due(sc, mid) >= i then hi = mid else lo = mid end
  end
  return hi
end

return M
