-- `lunet load` end to end, as a child process against the local servers: each executor's
-- schedule (counts, and timing within a tolerance), dropped iterations, setup and teardown,
-- checks, a failing iteration, thresholds and exit codes, the JSON outputs, Ctrl-C, and usage
-- errors before any request. (The pure parts, hdr, thresholds, executors and options, are
-- load_units_test.lua's.)
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local HOSTILE = h.env("LUNET_HOSTILE")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs `lunet load` on a script made of `source` (NGINX and HOSTILE set in it) with `args`;
-- returns the exit status, stdout, stderr and the summary export (a table, or nil).
local function load(source, args, env)
  local script = h.temp_file(string.format("local NGINX, HOSTILE = %q, %q\n", NGINX, HOSTILE) .. source, ".lua")
  local export, err = h.tmpname(), h.tmpname()
  local code, out = h.run("{ " .. (env or "") .. " " .. q(LUNET) .. " load " .. q(script) .. " --quiet --summary-export " .. q(export) ..
    " " .. (args or "") .. " 2>" .. q(err) .. "; }")
  local text = h.read_file(export)
  local ok, t = pcall(json.decode, text or "")
  return code, out, h.read_file(err) or "", ok and t or nil
end

local function count(export, name) return export and export.metrics[name] and export.metrics[name].count end

test("constant-vus: VUs loop for the duration; iterations, VUs and the summary", function()
  local code, out, err, ex = load([[
options = { scenarios = { s = { executor = "constant-vus", vus = 3, duration = "1s" } } }
return function(vu) vu.session:get(NGINX .. "/small.txt"); sleep(0.1) end]])
  eq(code, 0, err .. out)
  local n = count(ex, "iterations")
  truthy(n >= 24 and n <= 33, "3 VUs x ~10 iterations of 0.1 s in 1 s: " .. tostring(n))
  eq(count(ex, "http_reqs"), n, "one request an iteration")
  eq(ex.metrics.vus_max.value, 3, "vus_max")
  truthy(out:find("http_req_duration%.+: avg=") and out:find("iterations%.+: " .. n), "the summary:\n" .. out)
end)

test("per-vu-iterations and shared-iterations: exact counts; vu.id and vu.iteration", function()
  local code, out, err, ex = load([[
options = { scenarios = {
  each = { executor = "per-vu-iterations", vus = 3, iterations = 5 },
  shared = { executor = "shared-iterations", vus = 4, iterations = 10, start_time = "0.1s" } } }
seen = {}
return function(vu)
  seen[vu.scenario .. vu.id] = vu.iteration
  metrics.counter("by_scenario"):add(1, { which = vu.scenario })
  if vu.scenario == "each" and vu.id == 3 and vu.iteration == 5 then
    local n = 0
    for k in pairs(seen) do if k:find("^each") then n = n + 1 end end
    metrics.gauge("each_vus"):add(n)
  end
end]])
  eq(code, 0, err .. out)
  eq(count(ex, "iterations"), 25, "5 x 3 + 10")
  eq(ex.metrics.by_scenario.count, 25, "the custom counter")
  eq(ex.metrics.each_vus.value, 3, "three VUs in 'each', ids 1 to 3")
  eq(ex.metrics.vus_max.value, 7, "3 + 4 VUs, ids unique across scenarios")
end)

test("ramping-vus: VUs follow the stages up and down", function()
  local code, out, err, ex = load([[
options = { scenarios = { r = { executor = "ramping-vus", start_vus = 0,
  stages = { { duration = "0.6s", target = 4 }, { duration = "0.4s", target = 4 }, { duration = "0.4s", target = 0 } } } } }
return function(vu) metrics.gauge("vu_id"):add(vu.id); sleep(0.05) end]])
  eq(code, 0, err .. out)
  eq(ex.metrics.vu_id.max, 4, "four VUs at the top")
  eq(ex.metrics.vus_max.value, 4, "no more")
  local n = count(ex, "iterations")
  truthy(n > 20 and n < 100, "iterations through the ramp: " .. tostring(n))
end)

test("constant-arrival-rate: the rate is kept; none dropped while VUs are free", function()
  local code, out, err, ex = load([[
options = { scenarios = { a = { executor = "constant-arrival-rate", rate = 50, time_unit = "1s", duration = "1s", pre_allocated_vus = 5 } } }
return function(vu) vu.session:get(NGINX .. "/small.txt"); sleep(0.01) end]])
  eq(code, 0, err .. out)
  eq(count(ex, "iterations"), 50, "50 a second for a second")
  eq(count(ex, "dropped_iterations") or 0, 0, "none dropped (the metric has no sample)")
end)

test("arrival rate without free VUs: iterations are dropped, never started late", function()
  local code, out, err, ex = load([[
options = { scenarios = { a = { executor = "constant-arrival-rate", rate = 100, duration = "0.5s", pre_allocated_vus = 1, max_vus = 2 } } }
return function(vu) sleep(0.2) end]])
  eq(code, 0, err .. out)
  local done, dropped = count(ex, "iterations"), count(ex, "dropped_iterations")
  eq(done + dropped, 50, "every scheduled iteration ran or was dropped: " .. done .. " + " .. dropped)
  truthy(done <= 6 and dropped >= 44, "two VUs busy 0.2 s each can take about 6: " .. done)
  eq(ex.metrics.vus_max.value, 2, "the pool grew to max_vus")
end)

test("setup's value reaches every iteration and teardown; checks are counted and listed", function()
  local code, out, err, ex = load([[
options = { iterations = 6, vus = 2 }
function setup() return { token = http.get(NGINX .. "/small.txt").body } end
function teardown(data) io.stderr:write("teardown saw ", data.token) end
return function(vu, data)
  check(data, { ["token is there"] = function(d) return d.token ~= nil end,
                ["odd iteration"] = function() return vu.iteration % 2 == 1 end })
end]])
  eq(code, 0, err .. out)
  truthy(err:find("teardown saw hello", 1, true) or err:find("teardown saw ", 1, true), err)
  truthy(out:find("✓ token is there", 1, true) and out:find("✗ odd iteration", 1, true), out)
  eq({ ex.metrics.checks.passes, ex.metrics.checks.fails }, { 9, 3 }, "6 + 3 passed, 3 failed")
  eq(ex.root_group.checks["odd iteration"].fails, 3, "per check, as k6 exports it")
end)

test("an iteration that raises is counted and shown, and the run goes on", function()
  local code, out, err, ex = load([[
options = { iterations = 10, vus = 1 }
return function(vu) if vu.iteration % 2 == 0 then error("boom " .. vu.iteration) end end]])
  eq(code, 0, err .. out)
  eq(count(ex, "iterations"), 10, "all ten ran")
  eq(count(ex, "iteration_failed"), 5, "five failed")
  truthy(err:find("iteration") and err:find("boom", 1, true) and err:find("traceback", 1, true), "the first failures with their traceback:\n" .. err)
end)

test("thresholds: a crossed one exits 99 and is marked; the export says it failed, as k6's does", function()
  local code, out, err, ex = load([[
options = { iterations = 20, vus = 2, thresholds = {
  http_req_duration = { "p(95) < 10000" }, http_req_failed = { "rate > 0.5" },
  ["http_req_duration{name:small}"] = { "max < 10000" } } }
return function(vu) vu.session:get(NGINX .. "/small.txt", { tags = { name = "small" } }) end]])
  eq(ex.metrics.http_req_failed.value, 0, "every request served (the failed rate is what crosses)")
  eq(code, 99, err .. out)
  truthy(out:find("✓ http_req_duration", 1, true) and out:find("✗ http_req_failed", 1, true), out)
  truthy(out:find("{ name:small }", 1, true), "the sub-metric line:\n" .. out)
  eq(ex.metrics.http_req_failed.thresholds["rate > 0.5"], true, "true: failed")
  eq(ex.metrics.http_req_duration.thresholds["p(95) < 10000"], false, "false: passed")
  eq(ex.metrics["http_req_duration{name:small}"].thresholds["max < 10000"], false, "the sub-metric's")
  truthy(type(ex.metrics.http_req_duration["p(95)"]) == "number", "k6's field names")
end)

test("abort_on_fail stops the run early, exit 99", function()
  local t0 = os.time()
  local code, out, err = load([[
options = { vus = 2, duration = "20s", thresholds = {
  iterations = { { threshold = "count < 5", abort_on_fail = true } } } }
return function(vu) sleep(0.05) end]])
  eq(code, 99, err .. out)
  truthy(os.time() - t0 < 10, "stopped well before 20 s")
  truthy(err:find("abort_on_fail", 1, true), err)
end)

test("--out json: a record a second per metric and tag set, then each histogram; the command line wins", function()
  local file = h.tmpname()
  local code, out, err, ex = load([[
options = { vus = 9, iterations = 1000 }
return function(vu) vu.session:get(NGINX .. "/small.txt"); sleep(0.05) end]], "--vus 2 --duration 1.5s --out json=" .. q(file))
  eq(code, 0, err .. out)
  eq(ex.metrics.vus_max.value, 2, "--vus and --duration replaced the script's")
  local intervals, histogram = 0, nil
  for line in io.lines(file) do
    local r = json.decode(line)
    if r.type == "Interval" then intervals = intervals + 1 end
    if r.type == "Histogram" and r.metric == "http_req_duration" then histogram = r.data end
  end
  truthy(intervals > 0, "interval records")
  eq(histogram and histogram.count, count(ex, "http_reqs"), "the histogram holds every request")
end)

test("each VU keeps its own cookies across its iterations, as k6's do; cookies = false keeps none", function()
  local script = [[
options = { scenarios = { s = { executor = "per-vu-iterations", vus = 2, iterations = 3 } }, session = SESSION }
local HTTPBIN = os.getenv("LUNET_HTTPBIN")
return function(vu)
  if vu.iteration == 1 then vu.session:get(HTTPBIN .. "/cookies/set/who/vu" .. vu.id) end
  local r = vu.session:get(HTTPBIN .. "/cookies")
  print(string.format("VU %d ITERATION %d %s", vu.id, vu.iteration, r.json.cookies.who or "none"))
end]]
  local code, out, err = load((script:gsub("SESSION", "nil", 1)))
  eq(code, 0, err .. out)
  for id = 1, 2 do
    for it = 1, 3 do
      truthy(out:find(string.format("VU %d ITERATION %d vu%d\n", id, it, id)), string.format("VU %d, iteration %d: its own cookie:\n%s", id, it, out))
    end
  end
  code, out, err = load((script:gsub("SESSION", "{ cookies = false }", 1)))
  eq(code, 0, err .. out)
  eq(select(2, out:gsub("ITERATION %d none", "")), 6, "no cookie kept with cookies = false:\n" .. out)
  code, out, err = load((script:gsub("SESSION", "{ cookies = 'jar.txt' }", 1)))
  eq(code, 2, "a cookie file for every VU is a usage error: " .. err)
  truthy(err:find("options.session.cookies", 1, true), "named: " .. err)
end)

test("usage errors exit 2 before any request: an option, a threshold, an executor, a script without a function", function()
  local key = "load-usage-" .. math.random(1e9)
  local hit = HOSTILE .. "/hits/" .. key
  local cases = {
    { "options = { thresholds = { http_req_duration = { 'p99 < 2' } } }\nreturn function() http.get(%q) end", "is not a threshold" },
    { "options = { scenarios = { x = { executor = 'constant-vu', vus = 1 } } }\nreturn function() http.get(%q) end", "executor must be one of" },
    { "options = { scenarios = { x = { executor = 'constant-vus', vus = 1, duration = '1s', rate = 3 } } }\nreturn function() http.get(%q) end", "unknown option 'rate'" },
    { "options = { vus = 1, duration = 'soon' }\nreturn function() http.get(%q) end", "is not a duration" },
    { "local _ = %q\noptions = { iterations = 1 }", "must return the function" },
  }
  for _, c in ipairs(cases) do
    local code, out, err = load(string.format(c[1], hit))
    eq(code, 2, c[2] .. ": " .. err .. out)
    truthy(err:find(c[2], 1, true), "the message names the problem: " .. err)
  end
  local code, _, err = load("return function() end", "--vus many")
  eq(code, 2, err)
  code, _, err = load("return function() end", "--durration 1s")
  truthy(code == 2 and err:find("did you mean '--duration'", 1, true), err)
  eq(http.get(HOSTILE .. "/hits-count/" .. key).json.count, 0, "no request was sent")
end)

test("Ctrl-C stops gracefully: the summary so far, exit 130", function()
  local script = h.temp_file(string.format([[
options = { vus = 2, duration = "60s" }
return function(vu) vu.session:get(%q); sleep(0.05) end]], NGINX .. "/small.txt"), ".lua")
  local out_file, pid_file = h.tmpname(), h.tmpname()
  local t0 = os.time()
  local code = h.run("( " .. q(LUNET) .. " load " .. q(script) .. " --quiet > " .. q(out_file) .. " 2>&1 & echo $! > " .. q(pid_file) ..
    "; sleep 1; kill -INT $(cat " .. q(pid_file) .. "); wait $(cat " .. q(pid_file) .. ") )")
  eq(code, 130, h.read_file(out_file))
  truthy(os.time() - t0 < 15, "stopped at once, not after 60 s")
  local out = h.read_file(out_file)
  truthy(out:find("http_reqs", 1, true) and out:find("stopping", 1, true), "the summary so far:\n" .. out)
end)

h.done()
