-- Issue 46, item 1: a run whose requests hang can be stopped. A request that never answers
-- (the hostile server's /stall: headers, then nothing) held the run until start + duration +
-- graceful_stop, whatever the signal: 34 s after a second Ctrl-C, 50 s after SIGTERM. Now a
-- second Ctrl-C stops at once, SIGTERM (what Kubernetes sends) within graceful_stop, and
-- abort_on_fail at once, each with the summary and exports written.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end
local HOSTILE = h.env("LUNET_HOSTILE")
local now = require("lunet.core").now
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Starts `lunet load` on `source` in the background, sends `signals` ({ { after, name }, ... },
-- seconds from the start), waits for it: exit status, output, the seconds from the first signal
-- to the end, the summary export (a table or nil).
local function run_with_signals(source, signals)
  local script = h.temp_file(source, ".lua")
  local out, pid_file, export = h.tmpname(), h.tmpname(), h.tmpname()
  os.remove(export)
  local steps, at = {}, 0
  for _, s in ipairs(signals) do
    steps[#steps + 1] = string.format("sleep %.2f; kill -%s $(cat %s)", s[1] - at, s[2], q(pid_file))
    at = s[1]
  end
  local t0 = now()
  local code = h.run("( " .. q(LUNET) .. " load " .. q(script) .. " --quiet --summary-export " .. q(export) .. " > " .. q(out) ..
    " 2>&1 & echo $! > " .. q(pid_file) .. "; " .. table.concat(steps, "; ") .. "; wait $(cat " .. q(pid_file) .. ") )")
  local took = now() - t0 - signals[1][1]
  local text = h.read_file(export)
  return code, h.read_file(out) or "", took, text and json.decode(text) or nil
end

local HANGS = string.format([[
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "30s", graceful_stop = "20s" } } }
return function(vu) vu.session:get(%q) end]], HOSTILE .. "/stall")

test("a second Ctrl-C stops a run whose requests hang at once, with the summary written", function()
  local code, out, took, export = run_with_signals(HANGS, { { 1.5, "INT" }, { 1.8, "INT" } })
  eq(code, 130, out)
  truthy(took < 3, "at once after the second Ctrl-C, not at the schedule's end: " .. took .. " s")
  truthy(export and export.metrics, "the summary export was written")
end)

test("SIGTERM ends a run whose requests hang within graceful_stop", function()
  local code, out, took, export = run_with_signals(HANGS:gsub('graceful_stop = "20s"', 'graceful_stop = "2s"'), { { 1.5, "TERM" } })
  eq(code, 130, out)
  truthy(took >= 1.5 and took < 4.5, "within graceful_stop (2 s), not the 30 s schedule: " .. took .. " s")
  truthy(export and export.metrics, "the summary export was written")
end)

test("abort_on_fail stops a run whose other requests hang", function()
  local script = string.format([[
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "30s", graceful_stop = "20s" } },
            thresholds = { iterations = { { threshold = "count < 1", abort_on_fail = true } } } }
return function(vu)
  if vu.id == 1 then sleep(0.2) return end
  vu.session:get(%q)
end]], HOSTILE .. "/stall")
  local t0 = now()
  local code, out = h.run(q(LUNET) .. " load " .. h.temp_file(script, ".lua") .. " --quiet 2>&1")
  eq(code, 99, out)
  truthy(now() - t0 < 6, "stopped when the threshold was crossed: " .. (now() - t0) .. " s")
end)

-- Issue 46, item 3: a target that accepts and never answers is not a success.
test("a target that never answers: iterations counted as interrupted, thresholds over no sample fail (exit 99)", function()
  local script = h.temp_file(string.format([[
options = { scenarios = { s = { executor = "constant-vus", vus = 2, duration = "1s", graceful_stop = "1s" } },
            thresholds = { http_req_failed = { "rate < 0.01" }, http_req_duration = { "p(95) < 500" }, iterations = { "count < 1000" } } }
return function(vu) vu.session:get(%q) end]], HOSTILE .. "/stall"), ".lua")
  local export = h.tmpname()
  local t0 = now()
  local code, out = h.run(q(LUNET) .. " load " .. q(script) .. " --quiet --summary-export " .. q(export) .. " 2>&1")
  eq(code, 99, out)
  truthy(now() - t0 < 8, "bounded: " .. (now() - t0))
  local m = json.decode(assert(h.read_file(export))).metrics
  eq(m.interrupted_iterations and m.interrupted_iterations.count, 2, "both VUs' iterations were cut off")
  truthy(out:find("✗ http_req_failed", 1, true) and out:find("✗ http_req_duration", 1, true), out)
  truthy(out:find("✓ iterations", 1, true), "a counter with no sample counts 0: " .. out)
end)

-- Issue 46, item 4: an arrival-rate scenario that cannot keep its rate says so.
test("an open scenario out of VUs warns while it happens and says how many iterations were dropped", function()
  local script = h.temp_file([[
options = { scenarios = { s = { executor = "constant-arrival-rate", rate = 100, duration = "2s", pre_allocated_vus = 2, max_vus = 2 } } }
return function(vu) sleep(0.2) end]], ".lua")
  local export = h.tmpname()
  local code, out = h.run(q(LUNET) .. " load " .. q(script) .. " --quiet --summary-export " .. q(export) .. " 2>&1")
  eq(code, 0, out)
  truthy(out:find("s: insufficient VUs, all 2 busy", 1, true), "warned: " .. out)
  local dropped = json.decode(assert(h.read_file(export))).metrics.dropped_iterations.count
  truthy(dropped > 100, "most of the 200 due were dropped: " .. dropped)
  truthy(out:find(dropped .. " iterations dropped", 1, true), "said after the summary: " .. out)
end)

-- Issue 46, item 2: an iteration that never yields (a CPU-bound loop, even one inside pcall)
-- stops every timer of the one loop; its coroutine's hook stops it at the schedule's end and
-- graceful stop, at once on a second Ctrl-C, and within graceful_stop on SIGTERM.
local SPINS = [[
options = { scenarios = { s = { executor = "constant-vus", vus = 1, duration = "%s", graceful_stop = "%s" } } }
return function(vu) while true do pcall(function() while true do end end) end end]]

test("an iteration that never yields is stopped at the schedule's end and graceful stop, counted as interrupted", function()
  local script = h.temp_file(string.format(SPINS, "1s", "1s"), ".lua")
  local export = h.tmpname()
  local t0 = now()
  local code, out = h.run("timeout 60 " .. q(LUNET) .. " load " .. q(script) .. " --quiet --summary-export " .. q(export) .. " 2>&1")
  local took = now() - t0
  eq(code, 0, out)
  truthy(took < 6, "about 1 s + 1 s, not for ever: " .. took .. " s")
  local m = json.decode(assert(h.read_file(export))).metrics
  eq(m.interrupted_iterations and m.interrupted_iterations.count, 1, "the spinning iteration was cut off")
end)

test("a spinning iteration: a second Ctrl-C stops it at once, SIGTERM within graceful_stop", function()
  local code, out, took, export = run_with_signals(string.format(SPINS, "30s", "20s"), { { 1.5, "INT" }, { 1.8, "INT" } })
  eq(code, 130, out)
  truthy(took < 3, "at once after the second Ctrl-C: " .. took .. " s")
  truthy(export and export.metrics, "the summary export was written")
  code, out, took, export = run_with_signals(string.format(SPINS, "30s", "2s"), { { 1.5, "TERM" } })
  eq(code, 130, out)
  truthy(took < 5, "within graceful_stop (2 s): " .. took .. " s")
  truthy(export and export.metrics, "the summary export was written")
end)

-- Issue 46, item 2: setup and teardown that never yield are stopped at their timeouts too.
test("a spinning setup or teardown is stopped at setup_timeout / teardown_timeout", function()
  local function spins(hook)
    return "options = { iterations = 1, vus = 1, setup_timeout = '1s', teardown_timeout = '1s' }\n" ..
      "function " .. hook .. "() local n = 0 while true do n = n + 1 end end\n" ..
      "return function() end\n"
  end
  for _, hook in ipairs({ "setup", "teardown" }) do
    local script = h.temp_file(spins(hook), ".lua")
    local t0 = now()
    local code, out = h.run("timeout 60 " .. q(LUNET) .. " load " .. q(script) .. " --quiet 2>&1")
    local took = now() - t0
    truthy(code ~= 124, hook .. " ended before the test's own limit: " .. out)
    truthy(took < 10, hook .. ": about its 1 s timeout, not for ever: " .. took .. " s")
    truthy(out:find(hook .. " failed", 1, true), hook .. " is named as failed:\n" .. out)
  end
end)
