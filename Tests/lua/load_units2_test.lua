-- Pure unit tests of `lunet load`'s schedules (lua/lunet/load/executors.lua) and options
-- (lua/lunet/load/options.lua); the histogram and thresholds are in load_units_test.lua.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local executors = require "lunet.load.executors"
local options = require "lunet.load.options"

math.randomseed(20240612)

-- fn must raise a usage error ({ usage = "..." }) whose message holds each of the needles.
local function usage(fn, needles, what)
  local ok, err = pcall(fn)
  truthy(not ok, what .. " should fail")
  truthy(type(err) == "table" and type(err.usage) == "string", what .. ": a usage error, got " .. h.show(err))
  for _, n in ipairs(type(needles) == "table" and needles or { needles }) do
    truthy(err.usage:find(n, 1, true), what .. ": the message names " .. n .. ": " .. err.usage)
  end
  return err.usage
end

local function sc(t) return options.scenario("s", t) end

-- due() never goes down, over n random times in [0, upto] (and past it).
local function monotone(s, upto, n)
  local ts = { 0, upto, upto + 1 }
  for _ = 1, n do ts[#ts + 1] = math.random() * upto end
  table.sort(ts)
  for k = 2, #ts do truthy(executors.due(s, ts[k]) >= executors.due(s, ts[k - 1]), "due is monotone at " .. ts[k]) end
end

-- due_time(i) is when due first reaches i, to a microsecond.
local function inverse(s, i)
  local t = executors.due_time(s, i)
  truthy(executors.due(s, t + 1e-6) >= i and executors.due(s, t - 1e-6) < i, "due_time(" .. i .. ") = " .. t .. " inverts due")
  return t
end

test("executors: constant-vus and the iteration executors hold their VUs, then 0", function()
  local c = sc{ executor = "constant-vus", vus = 5, duration = "30s" }
  eq({ executors.vus_at(c, 0), executors.vus_at(c, 29.999), executors.vus_at(c, 30), executors.vus_at(c, 1e6) },
     { 5, 5, 0, 0 }, "constant-vus")
  eq({ executors.length(c), executors.max_vus(c) }, { 30, 5 }, "its length and most VUs")
  local s = sc{ executor = "shared-iterations", vus = 3, iterations = 10 }
  eq({ executors.vus_at(s, 599.9), executors.vus_at(s, 600), executors.length(s), executors.max_vus(s) },
     { 3, 0, 600, 3 }, "shared-iterations: within max_duration")
  local p = sc{ executor = "per-vu-iterations", vus = 4, iterations = 2, max_duration = "1m" }
  eq({ executors.vus_at(p, 59), executors.vus_at(p, 60), executors.length(p), executors.max_vus(p) }, { 4, 0, 60, 4 }, "per-vu")
  local o = sc{ executor = "constant-arrival-rate", rate = 1, duration = "1s", pre_allocated_vus = 2, max_vus = 7 }
  eq({ executors.max_vus(o), executors.length(o) }, { 7, 1 }, "an open one: max_vus")
  truthy(executors.CLOSED["ramping-vus"] and executors.OPEN["ramping-arrival-rate"] and not executors.OPEN["constant-vus"], "models")
end)

test("executors: ramping-vus ramps linearly, whole VUs rounded down, 0 after the end", function()
  local r = sc{ executor = "ramping-vus", start_vus = 0,
                stages = { { duration = "10s", target = 10 }, { duration = "20s", target = 10 }, { duration = "10s", target = 0 } } }
  local at = {}
  for _, t in ipairs{ 0, 0.99, 1, 5, 9.99, 10, 15, 30, 35, 39.99, 40, 1000 } do at[#at + 1] = executors.vus_at(r, t) end
  eq(at, { 0, 0, 1, 5, 9, 10, 10, 10, 5, 0, 0, 0 }, "at 0, 0.99, 1, 5, 9.99, 10 (a boundary), 15, 30, 35, 39.99, 40, 1000")
  for k = 0, 1000 do eq(executors.vus_at(r, k / 100), k // 100, "up the ramp at " .. k / 100) end
  for k = 0, 999 do eq(executors.vus_at(r, 30 + k / 100), 10 - (k + 99) // 100, "down the ramp at " .. 30 + k / 100) end
  eq({ executors.length(r), executors.max_vus(r) }, { 40, 10 }, "length and most VUs")
  local up = sc{ executor = "ramping-vus", start_vus = 5, stages = { { duration = 10, target = 15 } } }
  eq({ executors.vus_at(up, 0), executors.vus_at(up, 5), executors.vus_at(up, 9.99) }, { 5, 10, 14 }, "from start_vus")
  local jump = sc{ executor = "ramping-vus", start_vus = 1, stages = { { duration = 0, target = 8 }, { duration = 10, target = 8 } } }
  eq({ executors.vus_at(jump, 0), executors.vus_at(jump, 9) }, { 8, 8 }, "a stage of no duration jumps")
  local down = sc{ executor = "ramping-vus", start_vus = 20, stages = { { duration = "10s", target = 5 } } }
  eq({ executors.max_vus(down), executors.vus_at(down, 0), executors.vus_at(down, 5) }, { 20, 20, 12 }, "the start is the most")
end)

test("executors: constant-arrival-rate starts one at once, then one every 1/rate", function()
  local c = sc{ executor = "constant-arrival-rate", rate = 2000, duration = "30s", pre_allocated_vus = 10 }
  eq({ executors.due(c, 0), executors.due(c, -1), executors.due(c, 1e-9), executors.due(c, 0.00049), executors.due(c, 0.0005) },
     { 0, 0, 1, 1, 2 }, "none at 0; the first just after; the second at 1/rate")
  eq({ executors.due(c, 1), executors.due(c, 29.9999), executors.due(c, 30), executors.due(c, 31) },
     { 2001, 60000, 60000, 60000 }, "2000 a second for 30 s: 60000")
  monotone(c, 30, 2000)
  eq({ executors.due_time(c, 1), executors.due_time(c, 2), executors.due_time(c, 60001) }, { 0, 0.0005, nil }, "due_time")
  truthy(math.abs(executors.due_time(c, 60000) - 29.9995) < 1e-9, "the last at 29.9995 s")
  for _ = 1, 500 do inverse(c, math.random(1, 60000)) end
  for _, i in ipairs{ 1, 2, 3, 59999, 60000 } do inverse(c, i) end
  local per_minute = sc{ executor = "constant-arrival-rate", rate = 120, time_unit = "1m", duration = "10s", pre_allocated_vus = 1 }
  eq({ executors.due(per_minute, 10), executors.due(per_minute, 0.49), executors.due(per_minute, 0.5) }, { 20, 1, 2 }, "per minute")
  -- 3 per 2 s for 3 s start at 0, 2/3, 4/3, 2 and 8/3 s: five (the last was dropped, floor(4.5)).
  local odd = sc{ executor = "constant-arrival-rate", rate = 3, time_unit = "2s", duration = "3s", pre_allocated_vus = 1 }
  eq({ executors.due(odd, 2.6), executors.due(odd, 2.7), executors.due(odd, 3) }, { 4, 5, 5 }, "a rate that does not divide")
  eq(executors.due_time(odd, 6), nil, "no sixth")
  truthy(math.abs(inverse(odd, 5) - 8 / 3) < 1e-9, "the fifth at 8/3 s")
  local none = sc{ executor = "constant-arrival-rate", rate = 0, duration = "5s", pre_allocated_vus = 1 }
  eq({ executors.due(none, 5), executors.due_time(none, 1) }, { 0, nil }, "a rate of 0")
end)

test("executors: ramping-arrival-rate integrates the ramp; due_time inverts it", function()
  local r = sc{ executor = "ramping-arrival-rate", pre_allocated_vus = 1, stages = { { duration = "10s", target = 100 } } }
  eq({ executors.due(r, 0), executors.due(r, 1), executors.due(r, 5), executors.due(r, 10), executors.due(r, 60) },
     { 0, 5, 125, 500, 500 }, "0 to 100/s over 10 s: 5 t^2, 500 in all")
  monotone(r, 10, 2000)
  for i = 1, 500 do
    local t = inverse(r, i)
    truthy(math.abs(t - math.sqrt(i / 5)) <= 2e-6, "iteration " .. i .. " at sqrt(i/5): " .. t)
  end
  eq(executors.due_time(r, 501), nil, "none past the end")
  local two = sc{ executor = "ramping-arrival-rate", start_rate = 10, pre_allocated_vus = 1,
                  stages = { { duration = "10s", target = 10 }, { duration = "10s", target = 30 }, { duration = 0, target = 0 },
                             { duration = "5s", target = 0 } } }
  eq({ executors.due(two, 10), executors.due(two, 15), executors.due(two, 20), executors.due(two, 25) },
     { 100, 175, 300, 300 }, "10/s for 10 s, 10 to 30/s over 10 s, then a drop to 0")
  eq(executors.length(two), 25, "its length")
  monotone(two, 25, 2000)
  for i = 1, 300, 7 do inverse(two, i) end
  local per_minute = sc{ executor = "ramping-arrival-rate", time_unit = "1m", pre_allocated_vus = 1,
                         stages = { { duration = "1m", target = 600 } } }
  eq({ executors.due(per_minute, 60), executors.due(per_minute, 30) }, { 300, 75 }, "0 to 600/min over a minute")
  -- Past 2^33 s a float's step is over 1 µs: the bisection stopped there (it looped for ever).
  local long = sc{ executor = "ramping-arrival-rate", start_rate = 1, pre_allocated_vus = 1, stages = { { duration = 2e10, target = 1 } } }
  truthy(math.abs(executors.due_time(long, 15e9) - 15e9) < 1e-5, "a far iteration's time")
end)

test("options: durations in seconds from numbers and strings; what is not one", function()
  local cases = { { "30s", 30 }, { "1m30s", 90 }, { "500ms", 0.5 }, { "2h", 7200 }, { "1.5s", 1.5 }, { "1h2m3s", 3723 },
                  { "0s", 0 }, { "1m0.5s", 60.5 }, { 0, 0 }, { 2.5, 2.5 }, { 90, 90 }, { "30", 30 }, { "2.5", 2.5 } }
  for _, c in ipairs(cases) do eq({ options.duration(c[1], "d") }, { c[2] }, tostring(c[1])) end
  for _, bad in ipairs{ "1d", "s", "1.5.5s", "-1s", " 30s", "30s ", "30 s", "1S", "soon" } do
    local v, err = options.duration(bad, "x.duration")
    eq(v, nil, "'" .. bad .. "'")
    truthy(err:find("x.duration: '" .. bad .. "' is not a duration", 1, true), err)
  end
  for _, bad in ipairs{ { -1, "must not be negative, got -1" }, { 0 / 0, "must not be negative" },
                        { "", "a duration" }, { true, "got boolean" }, { nil, "got nil" }, { {}, "got table" } } do
    local v, err = options.duration(bad[1], "x.d")
    eq(v, nil, tostring(bad[1]))
    truthy(err:find("x.d", 1, true) and err:find(bad[2], 1, true), err)
  end
end)

test("options: each executor's defaults are k6's", function()
  local base = { start_time = 0, graceful_stop = 30, tags = {}, name = "s" }
  local function with(t) for k, v in pairs(base) do t[k] = v end return t end
  eq(sc{ executor = "shared-iterations" }, with{ executor = "shared-iterations", vus = 1, iterations = 1, max_duration = 600 }, "shared")
  eq(sc{ executor = "per-vu-iterations" }, with{ executor = "per-vu-iterations", vus = 1, iterations = 1, max_duration = 600 }, "per-vu")
  eq(sc{ executor = "constant-vus", duration = "1m" }, with{ executor = "constant-vus", vus = 1, duration = 60 }, "constant-vus")
  eq(sc{ executor = "ramping-vus", stages = { { duration = "1m", target = 3 } } },
     with{ executor = "ramping-vus", start_vus = 1, graceful_ramp_down = 30, stages = { { duration = 60, target = 3 } } }, "ramping-vus")
  eq(sc{ executor = "constant-arrival-rate", rate = 10, duration = "1m", pre_allocated_vus = 5 },
     with{ executor = "constant-arrival-rate", rate = 10, duration = 60, time_unit = 1, pre_allocated_vus = 5, max_vus = 5 }, "car")
  eq(sc{ executor = "ramping-arrival-rate", pre_allocated_vus = 2, stages = { { duration = 5, target = 2.5 } } },
     with{ executor = "ramping-arrival-rate", start_rate = 0, time_unit = 1, pre_allocated_vus = 2, max_vus = 2,
           stages = { { duration = 5, target = 2.5 } } }, "rar")
  eq(sc{ executor = "shared-iterations", vus = 10, iterations = 3 }.vus, 3, "shared: no more VUs than iterations")
  eq(sc{ executor = "per-vu-iterations", vus = 10, iterations = 3 }.vus, 10, "per-vu: kept")
  local full = sc{ executor = "constant-vus", vus = 2.0, duration = 1, start_time = "10s", graceful_stop = "5s", exec = "login",
                   tags = { kind = "x" } }
  eq({ full.vus, math.type(full.vus), full.start_time, full.graceful_stop, full.exec, full.tags },
     { 2, "integer", 10, 5, "login", { kind = "x" } }, "the common keys")
end)

test("options: a bad scenario is a usage error naming the scenario and the key", function()
  local function bad(t, needles, what) usage(function() options.scenario("web", t) end, needles, what) end
  bad(5, "scenario 'web' must be a table", "not a table")
  bad({}, { "scenario 'web': executor must be one of shared-iterations", "got nil" }, "no executor")
  bad({ executor = "constant-vu" }, { "ramping-arrival-rate", "got constant-vu" }, "an unknown executor")
  bad({ executor = "constant-vus", duration = 1, rate = 3 }, { "unknown option 'rate' for constant-vus", "it takes duration, vus" }, "a key")
  bad({ executor = "constant-vus", duration = 1, maxVUs = 3 }, "unknown option 'maxVUs'", "k6's spelling")
  bad({ executor = "constant-vus" }, "scenario 'web' needs duration", "no duration")
  bad({ executor = "constant-vus", duration = "soon" }, "scenario 'web'.duration: 'soon' is not a duration", "a bad duration")
  bad({ executor = "constant-vus", duration = 1, vus = 0 }, "vus must be at least 1, got 0", "no VU")
  bad({ executor = "constant-vus", duration = 1, vus = 1.5 }, "vus must be a whole number, got 1.5", "half a VU")
  bad({ executor = "constant-vus", duration = 1, vus = "3" }, "vus must be a whole number, got 3", "a string")
  bad({ executor = "constant-vus", duration = 1, vus = 1e20 }, "vus is too large", "1e20 VUs")   -- was a Lua error
  bad({ executor = "constant-arrival-rate", rate = 1, duration = 1 }, "needs pre_allocated_vus", "no pre_allocated_vus")
  bad({ executor = "constant-arrival-rate", duration = 1, pre_allocated_vus = 1 }, "needs rate", "no rate")
  bad({ executor = "constant-arrival-rate", rate = 1, duration = 1, pre_allocated_vus = 5, max_vus = 2 },
      "max_vus (2) is less than pre_allocated_vus (5)", "max_vus below pre_allocated_vus")
  bad({ executor = "constant-arrival-rate", rate = 1, duration = 1, pre_allocated_vus = 1, time_unit = 0 },
      "time_unit must be more than 0", "a time unit of 0")
  bad({ executor = "constant-arrival-rate", rate = -1, duration = 1, pre_allocated_vus = 1 }, "rate must be a number", "a negative rate")
  bad({ executor = "ramping-vus", stages = {} }, "scenario 'web' needs stages", "no stages")
  bad({ executor = "ramping-vus", stages = { { duration = 1, target = 1, vus = 2 } } },
      "scenario 'web'.stages[1]: unknown key 'vus'", "a stage's key")
  bad({ executor = "ramping-vus", stages = { { duration = 1, target = 1 }, { duration = 1 } } }, "stages[2] needs target", "no target")
  bad({ executor = "ramping-vus", stages = { { duration = 1, target = -1 } } }, "target must be at least 0", "a negative target")
  bad({ executor = "ramping-vus", stages = { 5 } }, "stages[1] must be a table", "a stage not a table")
  bad({ executor = "ramping-arrival-rate", pre_allocated_vus = 1, stages = { { target = 1 } } }, "stages[1] needs duration", "no duration")
  bad({ executor = "shared-iterations", exec = 5 }, "exec must be the name of a function", "exec")
  bad({ executor = "shared-iterations", tags = "x" }, "tags must be a table", "tags")
  bad({ executor = "shared-iterations", graceful_stop = -1 }, "graceful_stop must not be negative", "graceful_stop")
end)

-- The plan's only scenario, without its name and common keys.
local function only(plan)
  eq(#plan.scenarios, 1, "one scenario")
  local s = plan.scenarios[1]
  eq(s.name, "default", "named default")
  local out = {}
  for k, v in pairs(s) do
    if k ~= "name" and k ~= "start_time" and k ~= "graceful_stop" and k ~= "tags" then out[k] = v end
  end
  return out
end

test("options: the command line's shortcuts make one scenario in place of the script's", function()
  local script = { scenarios = { a = { executor = "constant-vus", duration = 1 }, b = { executor = "shared-iterations" } } }
  eq(only(options.plan(script, { vus = "10", duration = "30s" })), { executor = "constant-vus", vus = 10, duration = 30 }, "vus+duration")
  eq(only(options.plan(nil, { duration = "2" })), { executor = "constant-vus", vus = 1, duration = 2 }, "a bare number: seconds")
  eq(only(options.plan(script, { iterations = "100" })),
     { executor = "shared-iterations", vus = 1, iterations = 100, max_duration = 600 }, "iterations")
  -- As k6: iterations with a duration are shared-iterations within it (the iterations were dropped).
  eq(only(options.plan(nil, { vus = "4", iterations = "100", duration = "1m" })),
     { executor = "shared-iterations", vus = 4, iterations = 100, max_duration = 60 }, "iterations+duration")
  eq(only(options.plan(script, { rate = "50", duration = "10s" })),
     { executor = "constant-arrival-rate", rate = 50, duration = 10, time_unit = 1, pre_allocated_vus = 50, max_vus = 50 }, "rate")
  eq(only(options.plan(nil, { rate = "2.5", duration = 4 })).pre_allocated_vus, 3, "VUs for a rate: rounded up")
  eq(only(options.plan(nil, { rate = 100, duration = 5, vus = 7 })).max_vus, 7, "--vus with --rate")
  eq(only(options.plan(nil, { vus = 3 })), { executor = "constant-vus", vus = 3, duration = 10 }, "--vus alone: 10 s")
  usage(function() options.plan(nil, { rate = 10 }) end, "the command line: --rate needs --duration", "--rate alone")
  usage(function() options.plan(nil, { vus = "many", duration = "1s" }) end, "vus must be a whole number, got many", "bad --vus")
  usage(function() options.plan(nil, { duration = "soon" }) end, "'soon' is not a duration", "bad --duration")
  eq(#options.plan(script, {}).scenarios, 2, "no shortcut on the command line: the script's scenarios")
end)

test("options: the script's shortcuts, and one VU once without any", function()
  eq(only(options.plan{ vus = 5, duration = "1m" }), { executor = "constant-vus", vus = 5, duration = 60 }, "vus+duration")
  eq(only(options.plan{ iterations = 20, vus = 4 }), { executor = "shared-iterations", vus = 4, iterations = 20, max_duration = 600 },
     "iterations")
  eq(only(options.plan{ stages = { { duration = "10s", target = 3 } }, vus = 2 }),
     { executor = "ramping-vus", start_vus = 2, graceful_ramp_down = 30, stages = { { duration = 10, target = 3 } } }, "stages")
  eq(only(options.plan{ vus = 5 }), { executor = "constant-vus", vus = 5, duration = 10 }, "vus alone")
  local none = { executor = "per-vu-iterations", vus = 1, iterations = 1, max_duration = 600 }
  eq({ only(options.plan{}), only(options.plan(nil, nil)) }, { none, none }, "nothing: one VU, one iteration")
  local p = options.plan{ setup_timeout = "2m", thresholds = { checks = { "rate > 0.9" } }, session = { timeout = 3 } }
  eq({ p.setup_timeout, p.teardown_timeout, p.thresholds, p.session }, { 120, 60, { checks = { "rate > 0.9" } }, { timeout = 3 } },
     "the other options")
  eq(p.trend_stats, { "avg", "min", "med", "p(90)", "p(95)", "p(99)", "max" }, "k6's trend stats by default")
  eq(options.plan{ summary_trend_stats = { "p(50)" } }.trend_stats, { "p(50)" }, "summary_trend_stats")
  eq({ options.plan{}.thresholds, options.plan{}.session }, { {}, {} }, "none")
end)

test("options: scenarios sorted by start time then name; bad options named", function()
  local p = options.plan{ scenarios = {
    d = { executor = "shared-iterations", start_time = "1s" }, a = { executor = "shared-iterations", start_time = "5s" },
    c = { executor = "shared-iterations" }, b = { executor = "shared-iterations" }, ["x-1_y"] = { executor = "shared-iterations", start_time = 0.5 } } }
  local names = {}
  for _, s in ipairs(p.scenarios) do names[#names + 1] = s.name end
  eq(names, { "b", "c", "x-1_y", "d", "a" }, "the order")
  usage(function() options.plan{ vu = 3 } end, { "options: unknown key 'vu'", "scenarios, thresholds" }, "a top-level key")
  usage(function() options.plan("x") end, "options must be a table, got string", "not a table")
  usage(function() options.plan{ scenarios = {} } end, "options.scenarios must be a table of named scenarios", "no scenarios")
  usage(function() options.plan{ scenarios = 5 } end, "options.scenarios must be a table", "not a table")
  usage(function() options.plan{ scenarios = { ["a b"] = { executor = "shared-iterations" } } } end,
        "'a b' is not a scenario name", "a name with a space")
  usage(function() options.plan{ scenarios = { { executor = "shared-iterations" } } } end, "'1' is not a scenario name", "a list")
  usage(function() options.plan{ scenarios = { w = { executor = "bad" } } } end, "scenario 'w': executor must be one of", "a bad one")
  usage(function() options.plan{ thresholds = "x" } end, "options.thresholds must be a table", "thresholds")
  usage(function() options.plan{ session = 1 } end, "options.session must be a table", "session")
  usage(function() options.plan{ summary_trend_stats = "avg" } end, "options.summary_trend_stats must be a list", "trend stats")
  usage(function() options.plan{ teardown_timeout = "x" } end, "options.teardown_timeout: 'x' is not a duration", "a timeout")
end)

test("options: a plan's length is its last scenario's start, run and graceful stop", function()
  local a = { executor = "constant-vus", duration = "30s" }                                     -- 0 + 30 + 30
  local b = { executor = "ramping-vus", start_time = "1m", graceful_stop = "5s",
              stages = { { duration = "10s", target = 2 }, { duration = "20s", target = 0 } } }  -- 60 + 30 + 5
  local c = { executor = "shared-iterations", iterations = 3, graceful_stop = 0 }                -- 0 + 600 + 0
  local d = { executor = "ramping-arrival-rate", pre_allocated_vus = 1, start_time = 2, stages = { { duration = 8, target = 1 } } }
  eq(options.length(options.plan{ scenarios = { a = a } }), 60, "constant-vus")
  eq(options.length(options.plan{ scenarios = { a = a, b = b } }), 95, "the later one")
  eq(options.length(options.plan{ scenarios = { a = a, b = b, c = c } }), 600, "max_duration for iterations")
  eq(options.length(options.plan{ scenarios = { d = d } }), 40, "ramping-arrival-rate")
  eq(options.length(options.plan(nil, { vus = 1, duration = "10s" })), 40, "a shortcut")
  eq(options.length(options.plan(nil, { rate = 5, duration = "1s" })), 31, "a rate shortcut")
end)

test("summary.bytes: a rate under 1 kB/s is seldom whole (it once raised), larger ones in SI units", function()
  local summary = require "lunet.load.summary"
  eq(summary.bytes(212.25), "212 B", "a fraction of a byte a second")
  eq(summary.bytes(13), "13 B", "whole bytes")
  eq(summary.bytes(1500), "1.5 kB", "kB")
  eq(summary.bytes(2000000), "2 MB", "MB, no .0")
end)

h.done()

test("the request recorder: untagged requests found again by scenario, method, URL and status; tagged ones apart", function()
  local metrics = require "lunet.load.metrics"
  local registry = metrics.registry()
  local record = require("lunet.load.vu").recorder(registry)
  local function vu(scenario) return { scenario = scenario, _scenario_tags = {}, _tag_prefix = scenario .. "\1" } end
  local a, b = vu("a"), vu("b")
  local t0 = require("lunet.core").now()
  for _ = 1, 3 do record(a, "GET", "http://x/1", nil, nil, t0) end   -- no response: status 0
  record(a, "POST", "http://x/1", nil, nil, t0)
  record(b, "GET", "http://x/1", nil, nil, t0)
  record(a, "GET", "http://x/2", nil, nil, t0)
  record(a, "GET", "http://x/1", { name = "one" }, nil, t0)
  record(a, "GET", "http://x/1", { kind = "k" }, nil, t0)
  local function count(filter) return registry:figures("http_reqs", filter).count end
  eq(count(), 8, "every request")
  eq(count({ scenario = "a", method = "GET", name = "http://x/1" }), 4, "three untagged and the one tagged kind=k")
  eq(count({ scenario = "a", method = "GET", name = "http://x/1", kind = "k" }), 1)
  eq(count({ scenario = "a", method = "POST" }), 1)
  eq(count({ scenario = "b" }), 1)
  eq(count({ name = "http://x/2" }), 1)
  eq(count({ name = "one" }), 1)
  eq(count({ status = "0" }), 8, "no response is status 0")
  eq(registry:figures("http_req_failed").rate, 1, "each failed")
end)

test("the per-second series is bounded: past MAX_SECONDS buckets its step doubles, nothing is lost", function()
  local series = require "lunet.load.series"
  local hdr = require "lunet.load.hdr"
  local saved = series.MAX_SECONDS
  series.MAX_SECONDS = 8
  local ok, problem = pcall(function()
    local s = series.new(1000, 0)   -- monotonic 0 is epoch second 1000
    for t = 0, 19 do
      series.add(s, t + 0.5, 1000 + t, t % 5 == 0)
      series.note_vus(s, t + 0.5, t + 1)
    end
    local list = series.encode(s)
    truthy(#list <= 8, "at most MAX_SECONDS buckets: " .. #list)
    local reqs, failed, durations = 0, 0, 0
    for _, b in ipairs(list) do
      eq(b.span, 4, "twenty seconds in buckets of 4")
      eq(b.t % 4, 0, "a bucket starts on a multiple of its span")
      reqs, failed = reqs + b.reqs, failed + b.failed
      durations = durations + hdr.decode(b.duration).count
    end
    eq({ reqs, failed, durations }, { 20, 4, 20 }, "every request, failure and duration kept")
    eq(list[#list].vus, 20, "a bucket keeps the most VUs it saw")
    -- shards: one series widened to 4 s, one at 1 s; merged in buckets of 4, VUs added across
    local fine = { { t = 1000, reqs = 1, failed = 0, vus = 3, duration = hdr.new():encode() },
                   { t = 1001, reqs = 2, failed = 1, vus = 5, duration = hdr.new():encode() } }
    local merged = series.rebucket({ list, fine }, 4)
    eq(merged[1].t, 1000)
    eq(merged[1].span, 4)
    eq(merged[1].reqs, list[1].reqs + 3)
    eq(merged[1].vus, list[1].vus + 5, "the most of each shard, added")
  end)
  series.MAX_SECONDS = saved
  if not ok then error(problem, 0) end
end)

test("the report counts a long run's rows by their span: per-second rates drawn, totals whole", function()
  local report = require "lunet.load.report"
  local html = report.html({ series = { { t = 0, reqs = 10, failed = 1, vus = 2, span = 4 }, { t = 4, reqs = 5, failed = 0, vus = 2, span = 4 } } })
  truthy(html:find("<b>60</b><span>requests</span>", 1, true), "(10 + 5) a second over 4 s each:\n" .. html:sub(1, 3000))
  truthy(html:find("failed (4)", 1, true), "failures too")
end)

-- Issue 47, item 6: `--duration 3` is seconds; a script that cannot be read is a usage error.
test("a plain number is seconds; a missing script exits 2", function()
  local options = require "lunet.load.options"
  eq({ options.duration("3", "--duration"), options.duration("2.5", "--duration"), options.duration("1m30s", "--duration") }, { 3, 2.5, 90 })
  local bad = select(2, options.duration("3x", "--duration"))
  h.truthy(bad and bad:find("is not a duration", 1, true), tostring(bad))
  local code, out = h.run(h.lunet() .. " load /nonexistent/nosuch.lua 2>&1")
  eq(code, 2, out)
  h.truthy(out:find("nosuch.lua", 1, true), out)
end)

-- Issue 47, item 6: a run ends with its last iteration, not at the ticker's next whole second
-- (5 iterations of 0.1 s took 1.01 s, and rates were computed over that).
test("a run ends with its last iteration: its rates are over the time it ran", function()
  local script = h.temp_file("options = { iterations = 5, vus = 1 }\nreturn function(vu) sleep(0.1) end\n", ".lua")
  local export = h.tmpname()
  local code, out = h.run(h.lunet() .. " load -q " .. script .. " --summary-export " .. export .. " 2>&1")
  eq(code, 0, out)
  local it = json.decode(h.read_file(export)).metrics.iterations
  local elapsed = it.count / it.rate
  truthy(elapsed >= 0.5 and elapsed < 0.95, "5 iterations of 0.1 s ran " .. elapsed .. " s, not a whole second")
end)

test("the summary shows every check's counts, a passing one's too (issue 47, item 6)", function()
  local summary = require "lunet.load.summary"
  local text = summary.text({ registry = require("lunet.load.metrics").registry(), elapsed = 1, trend_stats = { "avg" },
    checks = { { name = "status is 200", passes = 12, fails = 0 }, { name = "has a body", passes = 3, fails = 1 } } })
  truthy(text:find("     ✓ status is 200\n      ↳  100% — ✓ 12 / ✗ 0\n", 1, true), text)
  truthy(text:find("     ✗ has a body\n      ↳  75% — ✓ 3 / ✗ 1\n", 1, true), text)
end)

test("a failing iteration's traceback shows the user's frames, lunet's folded, as a script's (issue 47, item 6)", function()
  local script = h.temp_file("options = { iterations = 1, vus = 1 }\nlocal function deeper() error('boom') end\n" ..
    "return function(vu) deeper() end\n", ".lua")
  local code, out = h.run(h.lunet() .. " load -q " .. script .. " 2>&1")
  eq(code, 0, out)
  truthy(out:find(":2: in upvalue 'deeper'", 1, true) and out:find(":3: in function <", 1, true), "the user's frames:\n" .. out)
  truthy(not out:find("lua/lunet/", 1, true) and not out:find("'xpcall'", 1, true), "lunet's frames folded:\n" .. out)
  truthy(out:find("\t[lunet]: ", 1, true), "one [lunet] line in their place:\n" .. out)
end)
