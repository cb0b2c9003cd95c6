--- `lunet load script.lua [options]`: load tests written as k6 users write them, in Lua
--- (docs/load.md). The script sets `options` (scenarios, thresholds, ...), may define `setup`
--- and `teardown`, and returns the function one iteration of one VU runs: function(vu, data).
--- Its environment has `check`, `sleep`, `metrics` and everything a lunet script has.
--- main(argv) returns the exit status: 0; 99 when a threshold failed (k6's); 2 for a usage
--- error, before any request; 1 when the script, its setup or its teardown raised; 130 after
--- Ctrl-C (the summary so far printed first).
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"
local json = require "lunet.json"
local options = require "lunet.load.options"
local thresholds = require "lunet.load.thresholds"
local metrics = require "lunet.load.metrics"
local summary = require "lunet.load.summary"
local runner = require "lunet.load.runner"
local shard = require "lunet.load.shard"
local series_module = require "lunet.load.series"
local outputs = require "lunet.load.outputs"
local result = require "lunet.load.result"
local report_model = require "lunet.load.report_model"

local M = {}

local args = require "lunet.load.args"
M.usage, M.parse_args = args.usage, args.parse

-- The checks of the run, as the summary lists them: by name, in the order first seen.
local function new_checks() return { list = {}, by_name = {} } end

--- Tag sets a custom metric keeps apart (as lunet.load.vu bounds requests'): a script that puts
--- an id in a metric's tags would otherwise grow without bound. Past MAX_SETS, a new tag set is
--- recorded under its scenario and the tag `tags` = OTHER_TAGS, said once a metric.
M.MAX_SETS, M.OTHER_TAGS = 10000, "(other tag sets)"
--- Check names the summary lists: past MAX_CHECKS, a check of a new name is counted under
--- OTHER_CHECKS (said once).
M.MAX_CHECKS, M.OTHER_CHECKS = 1000, "(other checks)"

-- The tags, and their key, that metric m's sample under tags `t` is recorded with.
local function bounded_tags(state, m, t)
  local key = metrics.tag_key(t)
  if m.sinks[key] then return t, key end
  local n = (state.tag_sets[m] or 0) + 1
  if n <= M.MAX_SETS then
    state.tag_sets[m] = n
    return t, key
  end
  if n == M.MAX_SETS + 1 then
    state.tag_sets[m] = n
    io.stderr:write(string.format("lunet load: metric %s has %d tag sets: past them, new ones are recorded as tags = %q\n",
      m.name, M.MAX_SETS, M.OTHER_TAGS))
  end
  t = { scenario = t.scenario, tags = M.OTHER_TAGS }
  return t, metrics.tag_key(t)
end

-- A script's value as text (a check's name, a tag's value): itself when a string, else what
-- tostring makes of it, or its type when that raises: a name must never end the run.
local function as_text(v)
  if type(v) == "string" then return v end
  local ok, text = pcall(tostring, v)
  return ok and type(text) == "string" and text or ("(a " .. type(v) .. ")")
end

-- A script's tags into `t`, as text (keys that are not strings are left out).
local function copy_tags(t, tags)
  if not tags then return end
  for k, v in pairs(tags) do
    if type(k) == "string" then t[k] = as_text(v) end
  end
end

-- The script's environment: check, sleep, metrics, and the globals of any lunet script.
local function script_env(state)
  local env = setmetatable({}, { __index = _G })
  env.sleep = task.sleep
  env.check = function(value, checks, tags)
    if type(checks) ~= "table" then error("check(value, { name = function(value) ... end }) takes a table of checks", 2) end
    -- Each check's name as text (as_text), its function by that name.
    local names, fns = {}, {}
    for key, fn in pairs(checks) do
      local name = as_text(key)
      names[#names + 1] = name
      fns[name] = fn
    end
    table.sort(names)
    local vu = state.current()
    local all = true
    for _, name in ipairs(names) do
      local fn = fns[name]
      local ok, passed = true, fn
      if type(fn) == "function" then ok, passed = pcall(fn, value) end
      passed = ok and passed and true or false
      all = all and passed
      local c = state.checks.by_name[name]
      if not c and #state.checks.list >= M.MAX_CHECKS then   -- names with ids in them: bounded
        if not state.checks.by_name[M.OTHER_CHECKS] then
          io.stderr:write(string.format("lunet load: %d check names: past them, new ones are counted as %q\n", M.MAX_CHECKS, M.OTHER_CHECKS))
        end
        name = M.OTHER_CHECKS
        c = state.checks.by_name[name]
      end
      if not c then
        c = { name = name, passes = 0, fails = 0 }
        state.checks.by_name[name] = c
        state.checks.list[#state.checks.list + 1] = c
      end
      if passed then c.passes = c.passes + 1 else c.fails = c.fails + 1 end
      local t = { check = name, scenario = vu and vu.scenario or "setup" }
      copy_tags(t, tags)
      state.registry:add(state.checks_metric, passed, bounded_tags(state, state.checks_metric, t))
    end
    return all
  end
  local function custom(kind)
    return function(name, is_time)
      local m = state.registry:metric(name, kind, kind == "trend" and is_time and "time" or nil)
      return { name = name, add = function(_, value, tags)
        local t = {}
        local vu = state.current()
        if vu then t.scenario = vu.scenario end
        copy_tags(t, tags)
        if kind == "rate" then value = value and value ~= 0 end
        if kind ~= "rate" and type(value) ~= "number" then error(name .. ":add takes a number, got " .. type(value), 2) end
        state.registry:add(m, value, bounded_tags(state, m, t))
      end }
    end
  end
  env.metrics = { counter = custom("counter"), gauge = custom("gauge"), rate = custom("rate"), trend = custom("trend") }
  return env
end

-- Loads the script: its environment (with `options`, `setup`, `teardown`) and the iteration
-- function it returns (or its global `default`).
local function load_script(path, state)
  local env = script_env(state)
  local f, ferr = io.open(path, "rb")
  if not f then return nil, ferr, 2 end   -- no such script: a usage error, as k6's
  local text = f:read("a")
  f:close()
  state.script_text = text
  local chunk, err = load(text, "@" .. path, "t", env)
  if not chunk then return nil, err end
  local ok, ret = xpcall(chunk, function(e) return debug.traceback(errors.describe(e), 2) end)
  if not ok then return nil, ret end
  local fn = ret
  if fn == nil then fn = rawget(env, "default") end
  return env, fn
end

local function iso_now()
  local t = core.wall_time and core.wall_time() or os.time()
  return os.date("!%Y-%m-%dT%H:%M:%S", math.floor(t)) .. string.format(".%03dZ", math.floor((t % 1) * 1000))
end

local judge = thresholds.judge_all

--- Runs `lunet load` with argv (the words after `load`); returns the exit status.
local SUBCOMMANDS = { merge = "lunet.load.merge", k8s = "lunet.load.k8s", collect = "lunet.load.collect" }

function M.main(argv, io_opts)
  io_opts = io_opts or {}
  argv = argv or {}
  local stdout, stderr = io_opts.stdout or io.stdout, io_opts.stderr or io.stderr
  if SUBCOMMANDS[argv[1]] then
    return require(SUBCOMMANDS[argv[1]]).main(table.move(argv, 2, #argv, 1, {}), stdout, stderr)
  end
  local ok, c = pcall(M.parse_args, argv)
  if not ok then
    if type(c) == "table" and c.usage then stderr:write("lunet load: ", c.usage, "\n"); return 2 end
    error(c, 0)
  end
  if c.help then stdout:write(M.usage, "\n"); return 0 end
  return M.run(c, stdout, stderr)
end

-- The script loaded and checked: { env, plan, thresholds, fns, registry, state, current }, or
-- nil and the exit status (the problem said on stderr).
local function prepare(c, stderr)
  local registry = metrics.registry({ interval = c.out ~= nil })
  local current = setmetatable({}, { __mode = "k" })   -- coroutine -> its VU (lunet.load.runner)
  local state = { registry = registry, checks = new_checks(), checks_metric = registry:metric("checks", "rate"), tag_sets = {},
                  current = function() return current[coroutine.running()] end }
  local env, fn, status = load_script(c.script, state)
  if not env then stderr:write("lunet load: ", tostring(fn), "\n"); return nil, status or 1 end
  local plan, th_list
  local ok, err = pcall(function()
    plan = options.plan(rawget(env, "options"), { vus = c.vus, duration = c.duration, iterations = c.iterations, rate = c.rate })
    th_list = thresholds.parse(plan.thresholds)
  end)
  if ok and c.shard_count then
    shard.apply(plan, c.shard_index, c.shard_count)
    if shard.idle(plan) then
      stderr:write(string.format("lunet load: shard %d of %d has nothing to run: the test has fewer VUs than shards " ..
        "(give --vus at least --shards, or fewer shards)\n", c.shard_index, c.shard_count))
    end
  end
  if not ok then
    if type(err) == "table" and err.usage then stderr:write("lunet load: ", err.usage, "\n"); return nil, 2 end
    error(err, 0)
  end
  -- Each scenario's function: its exec (a global the script defines), else the returned one.
  local fns = {}
  for _, sc in ipairs(plan.scenarios) do
    local f = sc.exec and rawget(env, sc.exec) or fn
    if type(f) ~= "function" then
      stderr:write("lunet load: ", sc.exec and ("scenario '" .. sc.name .. "': exec names '" .. sc.exec .. "', which the script does not define as a function")
        or "the script must return the function an iteration runs: return function(vu, data) ... end", "\n")
      return nil, 2
    end
    fns[sc.name] = f
  end
  return { env = env, plan = plan, thresholds = th_list, fns = fns, registry = registry, state = state, current = current,
           test = shard.identity(state.script_text, plan, c.shard_count or 1) }
end

-- Runs a function of the script (setup, teardown) in a task with a timeout; its value, or nil
-- and the error with its traceback.
local function run_hook(fn, arg, timeout)
  -- One that never yields (`while true do end`) holds the loop, and with it the timeout's
  -- timer: the VUs' count hook (core.vu_hook) stops it once its time has passed.
  core.vu_stop_after(timeout + runner.HOOK_MARGIN)
  local t = task.spawn(function(a)
    core.vu_hook()
    return fn(a)
  end, arg)
  local ok, value = pcall(function() return t:timeout(timeout):await() end)
  core.vu_stop_after(nil)
  if ok then return true, value end
  return false, errors.describe(value) .. (t.traceback and ("\n" .. t.traceback) or "")
end

-- --out json's interval records: each metric's figures since the last ones (`out.since`, run
-- seconds) up to `t`; the ticker writes them once a second, the end of the run the rest.
local function write_intervals(registry, out, t)
  local seconds = math.max(t - out.since, 1e-3)
  out.since = t
  for _, rec in ipairs(registry:take_interval(seconds, { 95, 99 })) do
    local d = { time = iso_now(), tags = rec.tags, kind = rec.kind }
    for k, v in pairs(rec.figures) do
      if k == "p" then for pp, pv in pairs(v) do d[string.format("p(%g)", pp)] = pv end else d[k] = v end
    end
    out.file:write(json.encode({ type = "Interval", metric = rec.metric, data = d }), "\n")
  end
end

-- The ticker: once a second (twice on a terminal) the gauges, the live line, --out json's
-- interval records and abort_on_fail's thresholds. Returns its task; `live.aborted` says
-- whether a threshold stopped the run.
local function start_ticker(run, p, c, out_file, stderr, to_terminal, main, live)
  local registry, ps = p.registry, summary.percentiles(p.plan.trend_stats)
  local last_reqs, last_t, last_line = 0, 0, 0
  return task.spawn(function()
    while main.state == "pending" do
      task.sleep(to_terminal and 0.5 or 1)
      if main.state ~= "pending" then break end
      run:note_vus()
      local t = run:elapsed()
      -- The line only when it is written: its percentiles merge and sort every tag set's
      -- histogram of durations.
      local plain = not to_terminal and not c.quiet and t - last_line >= 10
      if to_terminal or plain then
        local f = registry:figures("http_req_duration", nil, t, { 50, 99 }) or { p = {} }
        local reqs = (registry:figures("http_reqs", nil, t) or { count = 0 }).count
        local rate = t > last_t and (reqs - last_reqs) / (t - last_t) or 0
        last_reqs, last_t = reqs, t
        local line = string.format("%s  vus=%d  req/s=%.0f  p50=%s  p99=%s  errors=%d",
          summary.duration(t * 1000), run.vus, rate, summary.duration(f.p and f.p[50]), summary.duration(f.p and f.p[99]), run.failure_count)
        if to_terminal then stderr:write("\r\27[K", line) else stderr:write("lunet load: ", line, "\n"); last_line = t end
      end
      if out_file and t - out_file.since >= 1 then write_intervals(registry, out_file, t) end
      -- abort_on_fail: judged from the second delay_abort_eval allows.
      for _, th in ipairs(p.thresholds) do
        if th.abort_on_fail and t >= th.delay_abort_eval and not live.aborted then
          local ff = registry:figures(th.metric, next(th.tags) and th.tags or nil, t, ps)
          if ff and thresholds.judge(th.expression, ff) == false then
            live.aborted = th
            stderr:write((to_terminal and "\n" or ""), "lunet load: threshold '", th.key, ": ", th.expression.source, "' crossed: stopping (abort_on_fail)\n")
            run:stop(0)
          end
        end
      end
    end
  end)
end

-- The end of a run: the iterations' first failures, the summary, the outputs and the result
-- record (--out json's last line, --result-line); the exit status.
local function finish(run, p, c, out_file, stdout, stderr, live, elapsed, clock)
  local registry = p.registry
  local passed, verdicts = judge(p.thresholds, registry, elapsed, summary.percentiles(p.plan.trend_stats))
  local view = { registry = registry, elapsed = elapsed, checks = p.state.checks.list, verdicts = verdicts,
                 trend_stats = p.plan.trend_stats, thresholds = p.thresholds }
  local failures = {}
  for _, f in pairs(run.failures) do failures[#failures + 1] = f end
  table.sort(failures, function(a, b) return a.order < b.order end)
  -- When the VUs started, on the wall clock (the report's first second is partial from there).
  local started = clock.wall0 + (run.started or clock.mono0) - clock.mono0
  local record
  if out_file or c.result_line then
    record = result.build({ test = p.test, script = c.script:match("[^/]*$"), plan = p.plan, registry = registry,
      shard = { index = c.shard_index or 0, count = c.shard_count or 1 }, started = started, elapsed = elapsed,
      interrupted = live.interrupted, aborted = live.aborted ~= nil, checks = p.state.checks.list,
      failures = run.failures, series = run.series and series_module.encode(run.series) })
  end
  if out_file then
    write_intervals(registry, out_file, elapsed)
    for name, h in pairs(registry:histograms()) do
      out_file.file:write(json.encode({ type = "Histogram", metric = name, data = h:encode() }), "\n")
    end
    out_file.file:write(json.encode(record), "\n")
    local closed, cerr = out_file.file:close()
    if not closed then stderr:write("lunet load: cannot write ", c.out, ": ", tostring(cerr), "\n") end
  end
  local written = outputs.conclude({
    failures = failures, view = view, notes = live.notes, summary_export = c.summary_export, report = c.report,
    result_line = c.result_line and record or nil,
    report_model = function()
      return report_model.build({ title = c.script:match("[^/]*$"), shards = 1, started = started, ended = started + elapsed,
        elapsed = elapsed, registry = registry,
        series = run.series and series_module.encode(run.series) or {}, checks = p.state.checks.list,
        thresholds = p.thresholds, passed = passed and not live.aborted })
    end,
  }, stdout, stderr)
  -- Dropped iterations are part of the verdict: a rate the run did not keep is said after the
  -- summary, whatever the thresholds say.
  local dropped = (registry:figures("dropped_iterations") or { count = 0 }).count
  if dropped > 0 then
    local its = (registry:figures("iterations") or { count = 0 }).count
    stderr:write(string.format("lunet load: %d iterations dropped (%.0f%% of those due): an open scenario ran out of VUs; raise max_vus\n",
      dropped, dropped * 100 / math.max(1, dropped + its)))
  end
  if live.interrupted then return 130 end
  if not passed or live.aborted then
    stderr:write("lunet load: thresholds crossed:")
    for _, th in ipairs(p.thresholds) do if not th.passed then stderr:write(" ", th.key, " ", th.expression.source, ";") end end
    stderr:write("\n")
    return 99
  end
  return written and 0 or 1
end

-- --out prometheus: the live output, its series labelled with the test and the shard.
local function start_prometheus(cfg, p, c, clock, stderr)
  local prometheus = require "lunet.load.prometheus"
  local testid = cfg.testid or prometheus.default_testid(p.test, c.start_at or clock.wall0)
  return prometheus.start(cfg, p.registry, { { "testid", testid }, { "shard", tostring(c.shard_index or 0) } }, stderr)
end

-- --start-at: waits (after setup) until the wall-clock time, so that every shard starts its
-- VUs, and its ramps, at the same moment. false when Ctrl-C came first.
local function wait_for_start(c, stderr, live)
  if not c.start_at then return true end
  local wait = c.start_at - core.wall_time()
  if wait < -1 then
    stderr:write(string.format("lunet load: --start-at was %.1f s ago: starting now, out of step with other shards\n", -wait))
    return true
  end
  if wait > 0 and not c.quiet then stderr:write(string.format("lunet load: starting in %.1f s (--start-at)\n", wait)) end
  while not live.interrupted do
    wait = c.start_at - core.wall_time()
    if wait <= 0 then return true end
    task.sleep(math.min(wait, 0.25))
  end
  return false
end

function M.run(c, stdout, stderr)
  local p, status = prepare(c, stderr)
  if not p then return status end
  for _, w in ipairs({ { "the summary export", c.summary_export }, { "the report", c.report } }) do
    local ok, werr = true, nil
    if w[2] then ok, werr = outputs.can_write(w[2]) end
    if not ok then stderr:write("lunet load: cannot write ", w[1], " ", w[2], ": ", tostring(werr), "\n"); return 2 end
  end
  local prometheus_cfg
  if c.prometheus then
    local perr
    prometheus_cfg, perr = require("lunet.load.prometheus").config(c.prometheus ~= true and c.prometheus or nil)
    if not prometheus_cfg then stderr:write("lunet load: ", perr, "\n"); return 2 end
  end
  local out_file
  if c.out then
    local f, ferr = io.open(c.out, "w")
    if not f then stderr:write("lunet load: cannot write ", c.out, ": ", tostring(ferr), "\n"); return 2 end
    out_file = { file = f, since = 0 }
  end
  -- setup: once, its value handed to every iteration.
  local data
  if type(rawget(p.env, "setup")) == "function" then
    local ok, value = run_hook(p.env.setup, nil, p.plan.setup_timeout)
    if not ok then stderr:write("lunet load: setup failed: ", value, "\n"); return 1 end
    data = value
  end
  local live = { interrupted = false, aborted = nil }
  core.on_interrupt(function() live.interrupted = true end)
  if not wait_for_start(c, stderr, live) then core.on_interrupt(nil) return 130 end
  -- The run's seconds, kept when something reads them (the result record, the report).
  local clock = { wall0 = core.wall_time(), mono0 = core.now() }
  local series = (c.out or c.result_line or c.report) and series_module.new(clock.wall0, clock.mono0) or nil
  local run = runner.new(p.plan, p.fns, p.registry, data, series, p.current)
  local to_terminal = core.isatty(2) and not c.quiet
  -- An open scenario that cannot keep its rate says so while it happens, as k6 does.
  run.on_dropped = function(sc, vus)
    stderr:write((to_terminal and "\n" or ""), string.format("lunet load: %s: insufficient VUs, all %d busy (max_vus): iterations are dropped, the rate is not kept\n",
      require("lunet.terminal_safe").line(sc.name), vus))
  end
  stderr:write(string.format("lunet load: %s, %d scenario%s, up to %s (with graceful stop)%s\n", c.script, #p.plan.scenarios,
    #p.plan.scenarios == 1 and "" or "s", summary.duration(options.length(p.plan) * 1000),
    c.shard_count and string.format(", shard %d of %d", c.shard_index, c.shard_count) or ""))
  core.on_interrupt(function()
    if live.interrupted then run:stop(0) return end   -- a second Ctrl-C: stop now
    live.interrupted = true
    stderr:write("\nlunet load: stopping (Ctrl-C again to stop at once)\n")
    run:stop(30)
  end)
  local main = run:start()
  local live_out = prometheus_cfg and start_prometheus(prometheus_cfg, p, c, clock, stderr)
  local ticker = start_ticker(run, p, c, out_file, stderr, to_terminal, main, live)
  pcall(main.await, main)
  -- The ticker sleeps up to a second between ticks: the run ends with its last iteration, not
  -- at the ticker's next whole second (what it would still do, finish does).
  if ticker.state == "pending" then ticker:cancel("the run ended") end
  pcall(ticker.await, ticker)
  core.vu_stop_after(nil)   -- the VUs' hook and its timer off: the run is over
  core.on_interrupt(nil)
  if to_terminal then stderr:write("\r\27[K") end
  local elapsed = run:elapsed()
  run:note_vus()
  if type(rawget(p.env, "teardown")) == "function" then
    local ok, value = run_hook(p.env.teardown, data, p.plan.teardown_timeout)
    if not ok then stderr:write("lunet load: teardown failed: ", value, "\n") end
  end
  -- The last push after teardown: the totals in Prometheus are the summary's.
  if live_out then live.notes = { require("lunet.load.prometheus").summary(live_out:finish()) } end
  return finish(run, p, c, out_file, stdout, stderr, live, elapsed, clock)
end

return M
