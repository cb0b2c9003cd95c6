--- `lunet load`'s options: what a script's `options` table and the command line say, checked
--- and made into scenarios the runner can run (pure; usage errors name the option at fault).
--- k6's vocabulary in Lua's spelling (`pre_allocated_vus`, `time_unit`, `graceful_stop`).
local executors = require "lunet.load.executors"

local M = {}

--- Seconds from a duration: a number (seconds) or a string of parts, "1h2m3s", "500ms", "1.5s".
--- nil and a message when it is not one.
function M.duration(v, what)
  if type(v) == "number" then
    if v < 0 or v ~= v then return nil, string.format("%s must not be negative, got %s", what, tostring(v)) end
    return v
  end
  if type(v) ~= "string" or v == "" then return nil, string.format("%s: a duration (\"30s\", \"1m30s\", \"500ms\") expected, got %s", what, type(v)) end
  -- A plain number is seconds, as k6 reads `--duration 3` and a number in a script.
  local plain = v:match("^%d+%.?%d*$") and tonumber(v)
  if plain then return plain end
  local total, rest = 0, v
  while rest ~= "" do
    local n, unit, after = rest:match("^(%d+%.?%d*)(%a+)(.*)$")
    local scale = ({ ms = 0.001, s = 1, m = 60, h = 3600 })[unit or ""]
    if not n or not scale then return nil, string.format("%s: '%s' is not a duration (\"30s\", \"1m30s\", \"500ms\", \"2h\")", what, v) end
    total, rest = total + tonumber(n) * scale, after
  end
  return total
end

local function fail(fmt, ...) error({ usage = string.format(fmt, ...) }, 0) end

local function need_duration(t, key, where, default)
  local v = t[key]
  if v == nil then
    if default == nil then fail("%s needs %s", where, key) end
    v = default
  end
  local d, err = M.duration(v, where .. "." .. key)
  if not d then fail("%s", err) end
  return d
end

local function need_count(t, key, where, default, least)
  local v = t[key]
  if v == nil then
    if default == nil then fail("%s needs %s", where, key) end
    return default
  end
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    fail("%s.%s must be a whole number, got %s", where, key, tostring(v))
  end
  local n = math.tointeger(v)
  if not n then fail("%s.%s is too large, got %s", where, key, tostring(v)) end
  v = n
  if v < (least or 0) then fail("%s.%s must be at least %d, got %d", where, key, least or 0, v) end
  return v
end

local function need_rate(t, key, where, default)
  local v = t[key]
  if v == nil then
    if default == nil then fail("%s needs %s", where, key) end
    return default
  end
  if type(v) ~= "number" or v < 0 or v ~= v then fail("%s.%s must be a number of iterations, at least 0, got %s", where, key, tostring(v)) end
  return v
end

local function stages(t, where, value_key)
  local list = t.stages
  if type(list) ~= "table" or #list == 0 then fail("%s needs stages: { { duration = \"10s\", target = N }, ... }", where) end
  local out = {}
  for i, s in ipairs(list) do
    local w = string.format("%s.stages[%d]", where, i)
    if type(s) ~= "table" then fail("%s must be a table { duration =, target = }", w) end
    for k in pairs(s) do if k ~= "duration" and k ~= "target" then fail("%s: unknown key '%s' (duration, target)", w, tostring(k)) end end
    local target = value_key == "rate" and need_rate(s, "target", w) or need_count(s, "target", w)
    out[i] = { duration = need_duration(s, "duration", w), target = target }
  end
  return out
end

-- What each executor takes besides the keys every scenario has.
local KEYS = {
  ["shared-iterations"] = { vus = true, iterations = true, max_duration = true },
  ["per-vu-iterations"] = { vus = true, iterations = true, max_duration = true },
  ["constant-vus"] = { vus = true, duration = true },
  ["ramping-vus"] = { start_vus = true, stages = true, graceful_ramp_down = true },
  ["constant-arrival-rate"] = { rate = true, time_unit = true, duration = true, pre_allocated_vus = true, max_vus = true },
  ["ramping-arrival-rate"] = { start_rate = true, time_unit = true, stages = true, pre_allocated_vus = true, max_vus = true },
}
local COMMON = { executor = true, start_time = true, graceful_stop = true, exec = true, tags = true }
M.EXECUTORS = { "shared-iterations", "per-vu-iterations", "constant-vus", "ramping-vus", "constant-arrival-rate", "ramping-arrival-rate" }

--- One scenario, checked and with its defaults (k6's): the executor's keys, start_time (0),
--- graceful_stop (30 s), exec (a function name, or nil for the script's), tags.
function M.scenario(name, t)
  local where = "scenario '" .. name .. "'"
  if type(t) ~= "table" then fail("%s must be a table", where) end
  local e = t.executor
  if type(e) ~= "string" or not KEYS[e] then
    fail("%s: executor must be one of %s, got %s", where, table.concat(M.EXECUTORS, ", "), tostring(e))
  end
  for k in pairs(t) do
    if not COMMON[k] and not KEYS[e][k] then
      local known = {}
      for key in pairs(KEYS[e]) do known[#known + 1] = key end
      table.sort(known)
      fail("%s: unknown option '%s' for %s (it takes %s, and start_time, graceful_stop, exec, tags)", where, tostring(k), e, table.concat(known, ", "))
    end
  end
  local sc = { name = name, executor = e, start_time = need_duration(t, "start_time", where, 0),
               graceful_stop = need_duration(t, "graceful_stop", where, 30), exec = t.exec, tags = t.tags or {} }
  if sc.exec ~= nil and type(sc.exec) ~= "string" then fail("%s.exec must be the name of a function the script defines", where) end
  if type(sc.tags) ~= "table" then fail("%s.tags must be a table of names and values", where) end
  if e == "shared-iterations" or e == "per-vu-iterations" then
    sc.vus = need_count(t, "vus", where, 1, 1)
    sc.iterations = need_count(t, "iterations", where, 1, 1)
    sc.max_duration = need_duration(t, "max_duration", where, 600)
    if e == "shared-iterations" and sc.vus > sc.iterations then sc.vus = sc.iterations end   -- as k6: no idle VU
  elseif e == "constant-vus" then
    sc.vus = need_count(t, "vus", where, 1, 1)
    sc.duration = need_duration(t, "duration", where)
  elseif e == "ramping-vus" then
    sc.start_vus = need_count(t, "start_vus", where, 1, 0)
    sc.stages = stages(t, where, "vus")
    sc.graceful_ramp_down = need_duration(t, "graceful_ramp_down", where, 30)
  else
    sc.time_unit = need_duration(t, "time_unit", where, 1)
    if sc.time_unit <= 0 then fail("%s.time_unit must be more than 0", where) end
    if e == "constant-arrival-rate" then
      sc.rate = need_rate(t, "rate", where)
      sc.duration = need_duration(t, "duration", where)
    else
      sc.start_rate = need_rate(t, "start_rate", where, 0)
      sc.stages = stages(t, where, "rate")
    end
    sc.pre_allocated_vus = need_count(t, "pre_allocated_vus", where, nil, 1)
    sc.max_vus = need_count(t, "max_vus", where, sc.pre_allocated_vus, 1)
    if sc.max_vus < sc.pre_allocated_vus then fail("%s: max_vus (%d) is less than pre_allocated_vus (%d)", where, sc.max_vus, sc.pre_allocated_vus) end
  end
  return sc
end

local TOP = { scenarios = true, thresholds = true, vus = true, duration = true, iterations = true, stages = true,
              session = true, setup_timeout = true, teardown_timeout = true, summary_trend_stats = true }

--- The run's plan from the script's `options` (a table or nil) and the command line's
--- (`cli`: vus, duration, iterations, rate, as strings or numbers): { scenarios = list (by
--- start time, then name), thresholds = table, session = table, setup_timeout,
--- teardown_timeout, trend_stats }. As k6: the command line's vus/duration/iterations/rate
--- replace the script's scenarios with one; without scenarios, the script's own vus,
--- duration, iterations or stages make one ("default"); with nothing, one VU runs one iteration.
function M.plan(script_options, cli)
  local o = script_options or {}
  cli = cli or {}
  if type(o) ~= "table" then fail("options must be a table, got %s", type(o)) end
  for k in pairs(o) do
    if not TOP[k] then fail("options: unknown key '%s' (scenarios, thresholds, vus, duration, iterations, stages, session, setup_timeout, teardown_timeout, summary_trend_stats)", tostring(k)) end
  end
  local shortcut = nil
  local function from_shortcuts(src, where)
    if src.rate ~= nil then
      if src.duration == nil then fail("%s: --rate needs --duration", where) end
      local vus = src.vus and need_count(src, "vus", where, nil, 1) or math.max(1, math.ceil(need_rate(src, "rate", where)))
      return { executor = "constant-arrival-rate", rate = src.rate, duration = src.duration, pre_allocated_vus = vus, max_vus = vus }
    elseif src.iterations ~= nil then   -- first, as k6: a duration with it is the most it may take
      return { executor = "shared-iterations", vus = src.vus or 1, iterations = src.iterations, max_duration = src.duration }
    elseif src.stages ~= nil then
      return { executor = "ramping-vus", start_vus = src.vus or 1, stages = src.stages }
    elseif src.duration ~= nil then
      return { executor = "constant-vus", vus = src.vus or 1, duration = src.duration }
    elseif src.vus ~= nil then
      return { executor = "constant-vus", vus = src.vus, duration = "10s" }   -- k6 wants a duration; 10 s as its own default
    end
  end
  if cli.vus or cli.duration or cli.iterations or cli.rate then
    local src = {}
    for k, v in pairs(cli) do src[k] = tonumber(v) or v end
    shortcut = from_shortcuts(src, "the command line")
  end
  local scenarios = {}
  if shortcut then
    scenarios[1] = M.scenario("default", shortcut)
  elseif o.scenarios ~= nil then
    if type(o.scenarios) ~= "table" or next(o.scenarios) == nil then fail("options.scenarios must be a table of named scenarios") end
    for name, t in pairs(o.scenarios) do
      if type(name) ~= "string" or not name:match("^[%w_%-]+$") then fail("options.scenarios: '%s' is not a scenario name (letters, digits, _ and -)", tostring(name)) end
      scenarios[#scenarios + 1] = M.scenario(name, t)
    end
  else
    local made = from_shortcuts(o, "options")
    scenarios[1] = M.scenario("default", made or { executor = "per-vu-iterations", vus = 1, iterations = 1 })
  end
  table.sort(scenarios, function(a, b)
    if a.start_time ~= b.start_time then return a.start_time < b.start_time end
    return a.name < b.name
  end)
  if o.thresholds ~= nil and type(o.thresholds) ~= "table" then fail("options.thresholds must be a table") end
  if o.session ~= nil and type(o.session) ~= "table" then fail("options.session must be a table of session options") end
  if o.session and o.session.cookies ~= nil and type(o.session.cookies) ~= "boolean" then
    -- A file would be every VU's, each writing it when its session ends.
    fail("options.session.cookies is true (each VU keeps its own, the default) or false, not %s", tostring(o.session.cookies))
  end
  local trend_stats = o.summary_trend_stats or { "avg", "min", "med", "p(90)", "p(95)", "p(99)", "max" }
  if type(trend_stats) ~= "table" then fail("options.summary_trend_stats must be a list such as { \"avg\", \"p(95)\" }") end
  for i, s in ipairs(trend_stats) do
    local p = type(s) == "string" and s:match("^p%(([%d%.]+)%)$")
    local known = s == "avg" or s == "min" or s == "med" or s == "max" or (p and tonumber(p) and tonumber(p) >= 0 and tonumber(p) <= 100)
    if not known then fail("options.summary_trend_stats[%d]: '%s' is not avg, min, med, max or p(N) with N from 0 to 100", i, tostring(s)) end
  end
  return {
    scenarios = scenarios, thresholds = o.thresholds or {}, session = o.session or {},
    setup_timeout = need_duration(o, "setup_timeout", "options", 60),
    teardown_timeout = need_duration(o, "teardown_timeout", "options", 60),
    trend_stats = trend_stats,
  }
end

--- The plan's total length: the last scenario's start plus its run and its graceful stop.
function M.length(plan)
  local total = 0
  for _, sc in ipairs(plan.scenarios) do
    total = math.max(total, sc.start_time + executors.length(sc) + sc.graceful_stop)
  end
  return total
end

return M
