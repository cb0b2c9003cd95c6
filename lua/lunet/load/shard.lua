--- Shards of a `lunet load` run: shard I (0-based) of N runs its part of every scenario so that
--- the N shards together run exactly the whole test, on N machines (docs/load.md, "Shards").
--- Pure functions of the plan, tested without the network.
---
--- VUs and iterations are striped, as k6's execution segments are: VU j (0-based, counted over
--- the whole test) belongs to shard j % N, and so does iteration n of an open-model scenario.
--- Every shard computes the whole test's schedule and keeps its own stripe of it, so a ramp is
--- the same ramp on every machine (a shard's VUs come in as the whole ramp reaches them) and no
--- remainder is lost or counted twice. A shared-iterations pool is split in proportion to each
--- shard's VUs (cumulative floors: the parts add up to the pool).
local executors = require "lunet.load.executors"

local M = {}

--- How many of the first `g` items (VUs or iterations, 0-based j < g) shard i of n owns.
function M.owned(g, i, n)
  if g <= i then return 0 end
  return (g - i - 1) // n + 1
end

-- The shared-iterations pool of shard i: its VUs' part of `iterations`, by cumulative floors.
local function pool_share(iterations, vus, i, n)
  if vus == 0 then return 0 end
  local before = 0
  for s = 0, i - 1 do before = before + M.owned(vus, s, n) end
  local through = before + M.owned(vus, i, n)
  return iterations * through // vus - iterations * before // vus
end

--- The plan of shard `index` of `count`, in place: the scenarios whose part is a plain number
--- (VUs, a pool of iterations) get it now; ramps and arrival schedules keep the whole test's
--- figures and carry `shard` for lunet.load.executors to take their stripe. Returns the plan.
function M.apply(plan, index, count)
  if count == 1 then return plan end
  plan.shard = { index = index, count = count }
  for _, sc in ipairs(plan.scenarios) do
    sc.shard = { index = index, count = count }
    local e = sc.executor
    if e == "shared-iterations" then
      sc.whole = { vus = sc.vus, iterations = sc.iterations }
      sc.iterations = pool_share(sc.iterations, sc.vus, index, count)
      sc.vus = M.owned(sc.vus, index, count)
    elseif e == "per-vu-iterations" or e == "constant-vus" then
      sc.whole = { vus = sc.vus }
      sc.vus = M.owned(sc.vus, index, count)
    elseif e == "constant-arrival-rate" or e == "ramping-arrival-rate" then
      -- Its VUs: a stripe of each pool, and at least one where the stripe has iterations to
      -- start (else a shard of a small pool would drop all of its own).
      sc.whole = { pre_allocated_vus = sc.pre_allocated_vus, max_vus = sc.max_vus }
      sc.pre_allocated_vus = M.owned(sc.pre_allocated_vus, index, count)
      sc.max_vus = math.max(1, M.owned(sc.max_vus, index, count))
    end
  end
  return plan
end

--- Whether shard `plan` (M.apply's) has nothing to run: every scenario's stripe holds no VU
--- (a test of fewer VUs than shards: `--shards 8` of `--vus 1`). Ramps and arrival schedules,
--- striped as they run, always have something.
function M.idle(plan)
  if not plan.shard then return false end
  for _, sc in ipairs(plan.scenarios) do
    local e = sc.executor
    local closed = e == "shared-iterations" or e == "per-vu-iterations" or e == "constant-vus"
    if not closed or (sc.vus or 0) > 0 then return false end
  end
  return true
end

--- The whole test's VU number of a shard's `local_id`-th VU (1-based): unique across shards.
function M.vu_id(local_id, shard)
  if not shard then return local_id end
  return (local_id - 1) * shard.count + shard.index + 1
end

-- A value in an error, its control bytes escaped (\x1b): shown on a terminal, never obeyed.
local function shown(v) return require("lunet.terminal_safe").line(tostring(v)) end

--- `I/N` (the --shard option) as index, count; or nil and a message.
function M.parse(text)
  local i, n = tostring(text):match("^(%d+)/(%d+)$")
  i, n = tonumber(i), tonumber(n)
  if not i then return nil, "--shard takes I/N (shard I, from 0, of N), got '" .. shown(text) .. "'" end
  local ok, err = M.check(i, n, "--shard")
  if not ok then return nil, err end
  return i, n
end

--- Whether shard i of n can be: n from 1 to 10000, i from 0 to n - 1.
function M.check(i, n, where)
  if not (math.type(n) == "integer" and n >= 1 and n <= 10000) then
    return false, string.format("%s: the number of shards must be from 1 to 10000, got %s", where, tostring(n))
  end
  if not (math.type(i) == "integer" and i >= 0 and i < n) then
    return false, string.format("%s: shard %s is not one of 0 to %d", where, tostring(i), n - 1)
  end
  return true
end

local function days_from_civil(y, m, d)   -- days since 1970-01-01 (proleptic Gregorian)
  y = m <= 2 and y - 1 or y
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

--- --start-at's time: RFC 3339 (`2026-11-28T06:30:00Z`, an offset, fractions) or seconds since
--- the epoch. Returns epoch seconds, or nil and a message.
function M.parse_time(text)
  text = tostring(text)
  if text:match("^%d+%.?%d*$") then return tonumber(text) end
  local y, mo, d, h, mi, s, rest = text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d%.?%d*)(.*)$")
  local bad = "--start-at takes an RFC 3339 time (2026-11-28T06:30:00Z) or epoch seconds, got '" .. shown(text) .. "'"
  if not y then return nil, bad end
  y, mo, d, h, mi, s = tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi), tonumber(s)
  if mo < 1 or mo > 12 or d < 1 or d > 31 or h > 23 or mi > 59 or s >= 61 then return nil, bad end
  local offset
  if rest == "Z" or rest == "z" then offset = 0
  else
    local sign, oh, om = rest:match("^([+-])(%d%d):(%d%d)$")
    if not sign then return nil, bad .. ": the offset must be Z or +HH:MM" end
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "-" and -1 or 1)
  end
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset
end

--- A test's identity for merging: FNV-1a (64 bits) over the script's text and the whole
--- test's scenarios, as 16 hex digits. Shards of one test agree; a file of another test, or of
--- the same script run with other options, does not. (Not a security measure: a check that
--- the files belong together.)
function M.identity(script_text, plan, count)
  local h = -3750763034362895579   -- 14695981039346656037, the FNV offset basis, as a signed integer
  local function feed(s)
    for i = 1, #s do
      h = h ~ s:byte(i)
      h = h * 1099511628211
    end
  end
  feed(script_text)
  for _, sc in ipairs(plan.scenarios) do
    local w = sc.whole or {}
    feed(string.format("\0%s\0%s\0%s\0%s\0%s\0%s\0%s", sc.name, sc.executor, tostring(w.vus or sc.vus),
      tostring(w.iterations or sc.iterations), tostring(sc.rate), tostring(sc.start_time), tostring(executors.length(sc))))
  end
  feed("\0" .. tostring(count))
  return string.format("%016x", h)
end

return M
