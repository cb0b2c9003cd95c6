-- Shards of a `lunet load` test and their merge (docs/load.md, "Shards"): the pure split
-- (every executor's VUs, iterations and arrivals add up to the whole test, VU ids unique), then
-- N shard processes against nginx, merged: the same counts as the whole test and the same
-- percentiles as one histogram of every sample; and merge refusing files that are not one
-- test's shards, each once, whole.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local shard = require "lunet.load.shard"
local executors = require "lunet.load.executors"
local options = require "lunet.load.options"
local hdr = require "lunet.load.hdr"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local SCENARIOS = {
  shared = { executor = "shared-iterations", vus = 5, iterations = 103 },
  per_vu = { executor = "per-vu-iterations", vus = 7, iterations = 3 },
  constant = { executor = "constant-vus", vus = 10, duration = "5s" },
  ramp = { executor = "ramping-vus", start_vus = 1, stages = { { duration = "4s", target = 13 }, { duration = "3s", target = 2 } } },
  rate = { executor = "constant-arrival-rate", rate = 37, time_unit = "1s", duration = "3s", pre_allocated_vus = 2, max_vus = 9 },
  ramp_rate = { executor = "ramping-arrival-rate", start_rate = 5, time_unit = "1s", pre_allocated_vus = 4, max_vus = 4,
                stages = { { duration = "2s", target = 40 }, { duration = "2s", target = 3 } } },
}

local function plans(n)
  local whole = options.plan({ scenarios = SCENARIOS })
  local parts = {}
  for i = 0, n - 1 do parts[i] = shard.apply(options.plan({ scenarios = SCENARIOS }), i, n) end
  return whole, parts
end

local function scenario(plan, name) for _, sc in ipairs(plan.scenarios) do if sc.name == name then return sc end end end

test("the split: each executor's shards add up to the whole test, for 1 to 7 shards", function()
  for n = 1, 7 do
    local whole, parts = plans(n)
    for name in pairs(SCENARIOS) do
      local w = scenario(whole, name)
      local vus, its, dues = 0, 0, {}
      for i = 0, n - 1 do
        local sc = scenario(parts[i], name)
        if w.executor == "shared-iterations" then
          vus, its = vus + sc.vus, its + sc.iterations
          truthy(sc.iterations == 0 or sc.vus > 0, "no shard has iterations and no VU to run them")
        elseif w.executor == "per-vu-iterations" or w.executor == "constant-vus" then vus = vus + sc.vus end
      end
      if w.executor == "shared-iterations" then eq({ vus, its }, { w.vus, w.iterations }, name .. ": VUs and the pool, " .. n .. " shards") end
      if w.executor == "per-vu-iterations" or w.executor == "constant-vus" then eq(vus, w.vus, name .. ": VUs, " .. n .. " shards") end
      local length = executors.length(w)
      for step = 0, math.floor(length * 20) do
        local t = step / 20
        local sum_vus, sum_due = 0, 0
        for i = 0, n - 1 do
          local sc = scenario(parts[i], name)
          if executors.OPEN[w.executor] then sum_due = sum_due + executors.due(sc, t)
          elseif w.executor == "ramping-vus" then sum_vus = sum_vus + executors.vus_at(sc, t) end
        end
        if executors.OPEN[w.executor] then
          if sum_due ~= executors.due(w, t) then eq(sum_due, executors.due(w, t), name .. ": iterations due at " .. t .. " s, " .. n .. " shards") end
        elseif w.executor == "ramping-vus" and sum_vus ~= executors.vus_at(w, t) then
          eq(sum_vus, executors.vus_at(w, t), name .. ": VUs at " .. t .. " s, " .. n .. " shards")
        end
      end
      if executors.OPEN[w.executor] then
        -- every iteration of the whole test is one shard's, at the same time
        for k = 1, executors.due(w, length) do
          local i = (k - 1) % n
          local local_k = (k - 1) // n + 1
          local at = executors.due_time(scenario(parts[i], name), local_k)
          if math.abs(at - executors.due_time(w, k)) > 1e-9 then eq(at, executors.due_time(w, k), name .. ": iteration " .. k .. "'s time") end
        end
      end
    end
  end
end)

test("VU ids are unique across shards; vu.shard says which", function()
  local seen = {}
  for i = 0, 3 do
    for local_id = 1, 50 do
      local id = shard.vu_id(local_id, { index = i, count = 4 })
      truthy(not seen[id], "id " .. id .. " once")
      seen[id] = true
    end
  end
  for id = 1, 200 do truthy(seen[id], "ids 1 to 200 all used: " .. id) end
end)

test("--shard, --shards with JOB_COMPLETION_INDEX, --start-at: parsed, and bad ones named", function()
  local args = require "lunet.load.args"
  local function env(t) return function(k) return t[k] end end
  local c = args.parse({ "s.lua", "--shard", "2/5" }, env({}))
  eq({ c.shard_index, c.shard_count }, { 2, 5 }, "--shard I/N")
  c = args.parse({ "s.lua", "--shards", "4" }, env({ JOB_COMPLETION_INDEX = "3" }))
  eq({ c.shard_index, c.shard_count }, { 3, 4 }, "the index from Kubernetes")
  c = args.parse({ "s.lua" }, env({ JOB_COMPLETION_INDEX = "1", LUNET_SHARDS = "2" }))
  eq({ c.shard_index, c.shard_count }, { 1, 2 }, "LUNET_SHARDS")
  c = args.parse({ "s.lua", "--start-at", "2026-11-28T06:30:00.5+01:00" }, env({}))
  eq(c.start_at, 1795843800.5, "RFC 3339 with an offset and a fraction")
  local function refused(argv, e, needle)
    local ok, err = pcall(args.parse, argv, env(e or {}))
    truthy(not ok and type(err) == "table" and err.usage:find(needle, 1, true), needle .. ": " .. tostring(ok or err.usage))
  end
  refused({ "s.lua", "--shard", "5/5" }, nil, "shard 5 is not one of 0 to 4")
  refused({ "s.lua", "--shard", "1" }, nil, "--shard takes I/N")
  refused({ "s.lua", "--shard", "0/0" }, nil, "from 1 to 10000")
  refused({ "s.lua", "--shards", "3" }, nil, "which shard is this one?")
  refused({ "s.lua", "--shards", "3" }, { JOB_COMPLETION_INDEX = "3" }, "shard 3 is not one of 0 to 2")
  refused({ "s.lua", "--start-at", "tomorrow" }, nil, "--start-at takes an RFC 3339 time")
  refused({ "s.lua", "--start-at", "2026-13-01T00:00:00Z" }, nil, "--start-at takes")
end)

-- The test the shards run: deterministic counts, and a custom trend whose every sample the
-- script also writes to the file VALUES names (one file a process), so the test knows every
-- sample of every shard and can work out the exact percentiles itself.
local function shard_script()
  return h.temp_file(string.format([[
local values = metrics.trend("known_values")
options = { scenarios = {
  shared = { executor = "shared-iterations", vus = 4, iterations = 61 },
  per_vu = { executor = "per-vu-iterations", vus = 5, iterations = 4 },
  rate = { executor = "constant-arrival-rate", rate = 40, time_unit = "1s", duration = "1s", pre_allocated_vus = 6, max_vus = 6 },
}, thresholds = { known_values = { "p(50) < 1000000" }, http_req_failed = { "rate < 0.5" } } }
local log = assert(io.open(os.getenv("VALUES"), "w"))
return function(vu)
  vu.session:get(%q)
  local v = (vu.id * 7919 + vu.iteration * 104729) %% 99991 + 1
  values:add(v)
  log:write(v, "\n")
  log:flush()
end]], NGINX .. "/small.txt"))
end

local function run_shards(script, n, extra)
  local outs, pids = {}, {}
  local start = os.time() + 2
  local cmds = {}
  for i = 0, n - 1 do
    outs[i] = h.tmpname()
    cmds[#cmds + 1] = string.format("VALUES=%s.values JOB_COMPLETION_INDEX=%d %s load -q %s --shards %d --start-at %d --out json=%s %s >/dev/null 2>%s.err &",
      q(outs[i]), i, q(LUNET), q(script), n, start, q(outs[i]), extra or "", q(outs[i]))
  end
  h.run("{ " .. table.concat(cmds, " ") .. " wait; }")
  return outs, start
end

test("three shard processes, merged: the whole test's counts, and percentiles of every sample", function()
  local script = shard_script()
  local outs, start = run_shards(script, 3)
  local whole = h.tmpname()
  h.run("{ VALUES=" .. q(whole) .. ".values " .. q(LUNET) .. " load -q " .. q(script) .. " --out json=" .. q(whole) .. " >/dev/null 2>&1; }")
  local export, report = h.tmpname(), h.tmpname() .. ".html"
  local code, out = h.run("{ " .. q(LUNET) .. " load merge " .. q(outs[0]) .. " " .. q(outs[2]) .. " " .. q(outs[1]) ..
    " --summary-export " .. q(export) .. " --report " .. q(report) .. " 2>&1; }")
  eq(code, 0, out)
  local merged = json.decode(h.read_file(export))
  eq(merged.metrics.http_reqs.count, 61 + 20 + 40, "every request of the whole test, once")
  eq(merged.metrics.iterations.count, 121, "every iteration")
  -- Every sample the shards took, from their own logs: the exact percentiles, which the
  -- merge's must match within the histogram's precision (3 digits: 0.1%).
  local samples = {}
  for i = 0, 2 do
    for line in io.lines(outs[i] .. ".values") do samples[#samples + 1] = tonumber(line) end
    local last
    for line in io.lines(outs[i]) do last = line end
    local r = json.decode(last)
    eq(r.data.shard, { index = i, count = 3 }, "shard " .. i .. "'s record")
    truthy(r.data.series[1].t >= start, "shard " .. i .. " started at --start-at, not before")
  end
  table.sort(samples)
  eq(#samples, 121, "a sample an iteration")
  local kv = merged.metrics.known_values
  for _, p in ipairs({ 50, 90, 95, 99 }) do
    local exact = samples[math.max(1, math.ceil(p / 100 * #samples))]   -- nearest rank
    local got = p == 50 and kv.med or kv[string.format("p(%d)", p)]
    truthy(math.abs(got - exact) <= exact * 0.001 + 1e-9, string.format("p(%d): %s, every sample's %s", p, tostring(got), exact))
  end
  eq(kv.max, samples[#samples], "the max, exact")
  eq(kv.min, samples[1], "the min, exact")
  local wl
  for line in io.lines(whole) do wl = line end
  local wr = json.decode(wl)
  for _, m in ipairs(wr.data.metrics) do
    if m.name == "http_reqs" then
      local n = 0
      for _, sk in ipairs(m.sinks) do n = n + sk.state.sum end
      eq(n, merged.metrics.http_reqs.count, "as many requests as one process running the whole test")
    end
  end
  local html = h.read_file(report) or ""
  truthy(html:find("<svg", 1, true), "the merge's report has charts")
  -- An export in a missing directory: said with the path given, not a temporary file's name.
  local missing = h.tmpname() .. "-missing/x.json"
  code, out = h.run("{ " .. q(LUNET) .. " load merge " .. q(outs[0]) .. " " .. q(outs[2]) .. " " .. q(outs[1]) ..
    " --summary-export " .. q(missing) .. " 2>&1 >/dev/null; }")
  truthy(code ~= 0 and out:find("cannot write the summary export " .. missing .. ": No such file", 1, true)
    and not out:find(".lunet-", 1, true), "the path named, no temporary name: " .. out)
end)

test("merge refuses what is not one test's shards, each once and whole: exit 2, the file named", function()
  local script = shard_script()
  local outs = run_shards(script, 2)
  local other = h.temp_file((h.read_file(script)):gsub("iterations = 61", "iterations = 62"))
  local others = run_shards(other, 2)
  local function merge(...)
    local files = {}
    for _, f in ipairs({ ... }) do files[#files + 1] = q(f) end
    return h.run("{ " .. q(LUNET) .. " load merge " .. table.concat(files, " ") .. " 2>&1 >/dev/null; }")
  end
  local code, out = merge(outs[0], others[1])
  truthy(code == 2 and out:find("different tests", 1, true), "another test's shard: " .. out)
  code, out = merge(outs[0])
  truthy(code == 2 and out:find("shard 1 of 2 is missing", 1, true), "a shard missing: " .. out)
  code, out = merge(outs[0], outs[0], outs[1])
  truthy(code == 2 and out:find("shard 0 is given twice", 1, true), "a shard twice: " .. out)
  local text = h.read_file(outs[1])
  local cut = h.temp_file(text:sub(1, #text - 40))
  code, out = merge(outs[0], cut)
  truthy(code == 2 and out:find(cut, 1, true) and out:find("truncated or corrupt", 1, true), "a truncated file: " .. out)
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  local no_result = h.temp_file(table.concat(lines, "\n", 1, #lines - 1) .. "\n")
  code, out = merge(outs[0], no_result)
  truthy(code == 2 and out:find("no result record", 1, true), "a file without its result: " .. out)
  -- a histogram whose buckets no longer add up to its count
  local bent = lines[#lines]:gsub('"counts":%[(%d+),(%d+)', function(i, n) return '"counts":[' .. i .. "," .. (tonumber(n) + 1) end, 1)
  truthy(bent ~= lines[#lines], "a bucket was bent")
  local corrupt = h.temp_file(bent .. "\n")
  code, out = merge(outs[0], corrupt)
  truthy(code == 2 and out:find("corrupt result", 1, true) and out:find("/data/", 1, true), "a corrupt record, its place named: " .. out)
  -- a series bucket whose span is not a whole number of seconds it starts on (lunet.load.series)
  for _, span in ipairs({ 1.5, 0 }) do
    local record = json.decode(lines[#lines])
    record.data.series[1].span = span
    code, out = merge(outs[0], h.temp_file(json.encode(record) .. "\n"))
    truthy(code == 2 and out:find("/data/series/0", 1, true) and out:find("span", 1, true), "span " .. span .. ": " .. out)
  end
  code, out = merge(outs[0], h.temp_file(""))
  truthy(code == 2 and out:find("empty", 1, true), "an empty file: " .. out)
  code, out = merge(outs[0], outs[1])
  eq(code, 0, "the two right ones merge: " .. out)
end)

test("a crossed threshold on the merged figures exits 99, as one run would", function()
  local script = h.temp_file(string.format([[
options = { iterations = 10, vus = 2, thresholds = { http_req_failed = { "rate > 0.5" } } }
return function(vu) vu.session:get(%q) end]], NGINX .. "/small.txt"))
  local outs = run_shards(script, 2)
  local code, out = h.run("{ " .. q(LUNET) .. " load merge " .. q(outs[0]) .. " " .. q(outs[1]) .. " 2>&1; }")
  eq(code, 99, out)
  truthy(out:find("✗ http_req_failed", 1, true), out)
end)

test("--result-line: the result record is the last line of standard output, after the histogram", function()
  local script = h.temp_file(string.format([[
options = { iterations = 3, vus = 1 }
return function(vu) vu.session:get(%q) end]], NGINX .. "/small.txt"))
  local code, out = h.run("{ COLUMNS=60 " .. q(LUNET) .. " load -q " .. q(script) .. " --result-line 2>/dev/null; }")
  eq(code, 0, out)
  local histogram = out:match("http_req_duration histogram:\n(.-)\n\n")
  truthy(histogram and histogram:find("ms [", 1, true), "the summary ends with the latency histogram:\n" .. out)
  for line in histogram:gmatch("[^\n]+") do
    truthy(utf8.len(line) <= 60 and not line:find("\27", 1, true), "within COLUMNS=60, no colour off a terminal: " .. line)
  end
  local last = out:match("([^\n]+)\n*$")
  local r = json.decode(last)
  eq(r.type, "Result", "a result record")
  local src = { { name = "stdout", text = last } }
  local m = assert(require("lunet.load.merge").combine(src))
  eq(m.registry:figures("http_reqs").count, 3, "and merge reads it")
end)

h.done()

-- Issue 46, items 5 and 6: a merge of shards one of which was stopped early exits 130 (never 0);
-- the script's name the files carry reaches the terminal escaped; a result line past the bound
-- is refused before it is held whole.
test("merge: an interrupted shard makes the exit status 130; the script's name is shown escaped; a huge line is refused", function()
  local script = h.temp_file(string.format([[
options = { iterations = 4, vus = 1 }
return function(vu) vu.session:get(%q) end]], NGINX .. "/small.txt"))
  local outs = run_shards(script, 2)
  local merge = require "lunet.load.merge"
  local function edited(path, change)
    local record = json.decode(assert(merge.last_line(path)))
    change(record.data)
    return h.temp_file(json.encode(record) .. "\n", ".json")
  end
  local stopped = edited(outs[1], function(d) d.interrupted = true end)
  local code, out = h.run("{ " .. q(LUNET) .. " load merge " .. q(outs[0]) .. " " .. q(stopped) .. " 2>&1; }")
  eq(code, 130, "an incomplete run is not a success: " .. out)
  truthy(out:find("stopped early", 1, true), out)
  local a = edited(outs[0], function(d) d.script = "x\27]0;pwned\7\27[2J.lua" end)
  local b = edited(outs[1], function(d) d.script = "x\27]0;pwned\7\27[2J.lua" end)
  code, out = h.run("{ " .. q(LUNET) .. " load merge " .. q(a) .. " " .. q(b) .. " 2>&1 >/dev/null; }")
  truthy(not out:find("\27", 1, true) and out:find("\\x1b]0;pwned", 1, true), "escaped: " .. out:gsub("%c", "?"))
  local big = h.tmpname()
  local f = assert(io.open(big, "wb"))
  f:write('{"type":"Result"}\n', string.rep("y", 3 << 20), "\n")
  f:close()
  local line, err = merge.last_line(big, 1 << 20)
  truthy(line == nil and err:find("over 1 MB", 1, true), "refused past the bound: " .. tostring(err))
  eq(#assert(merge.last_line(big)), 3 << 20, "read under the default bound")
end)

-- Issue 47, item 7: a shard with nothing to run (a test of fewer VUs than shards) says so.
test("a shard left with no VU says it has nothing to run", function()
  local script = h.temp_file([[
options = { vus = 1, duration = "1s" }
return function(vu) sleep(0.1) end]])
  local code, out = h.run("JOB_COMPLETION_INDEX=1 " .. q(LUNET) .. " load -q " .. q(script) .. " --shards 2 2>&1")
  eq(code, 0, out)
  truthy(out:find("shard 1 of 2 has nothing to run", 1, true), out)
  code, out = h.run("JOB_COMPLETION_INDEX=0 " .. q(LUNET) .. " load -q " .. q(script) .. " --shards 2 2>&1")
  truthy(code == 0 and not out:find("nothing to run", 1, true), "shard 0 has the VU: " .. out)
end)
