-- The report's seconds (issue 47, item 6): a run starts and ends inside a wall-clock second, so
-- its first and last buckets are partial; the report shows them per second of the time the run
-- was in them (a constant load is flat, not a ramp), and a sliver of a second joins its
-- neighbour. The VUs chart starts with the VUs the run started with, not 0.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local json = require "lunet.json"
local hdr = require "lunet.load.hdr"
local report_model = require "lunet.load.report_model"
local metrics = require "lunet.load.metrics"

local function bucket(t, reqs, vus) return { t = t, reqs = reqs, failed = 0, vus = vus, duration = hdr.new() } end

local function rates(model)
  local out = {}
  for i, s in ipairs(model.series) do out[i] = math.floor(s.reqs * 100 + 0.5) / 100 end
  return out
end

test("partial first and last seconds are shown per second of the time the run was in them", function()
  -- 10 requests a second from 100.5 to 103.5: 5 in [100, 101), 10, 10, 5 in [103, 104).
  local model = report_model.build({ registry = metrics.registry(), started = 100.5, ended = 103.5, elapsed = 3,
    series = { bucket(100, 5, 2), bucket(101, 10, 2), bucket(102, 10, 2), bucket(103, 5, 2) } })
  eq(rates(model), { 10, 10, 10, 10 }, "a constant load is flat")
end)

test("a sliver of a second (under a quarter) joins its neighbour", function()
  -- Started at 100.9: 1 request in [100, 101); ended at 102.1: 1 request in [102, 103).
  local model = report_model.build({ registry = metrics.registry(), started = 100.9, ended = 102.1, elapsed = 1.2,
    series = { bucket(100, 1, 2), bucket(101, 10, 2), bucket(102, 1, 2) } })
  eq(#model.series, 1, "the slivers joined the whole second")
  eq(rates(model), { 10 }, "12 requests over 1.2 s")
end)

test("without a start (an older result), buckets count as whole seconds", function()
  local model = report_model.build({ registry = metrics.registry(), elapsed = 2, series = { bucket(100, 5, 1), bucket(101, 10, 1) } })
  eq(rates(model), { 5, 10 }, "as before")
end)

test("a run's first second holds the VUs it started with", function()
  local script = h.temp_file("options = { vus = 3, duration = '1.5s' }\nreturn function(vu) sleep(0.05) end\n", ".lua")
  local out = h.tmpname()
  local code, text = h.run(h.lunet() .. " load -q " .. script .. " --out json=" .. out .. " 2>&1")
  eq(code, 0, text)
  local last
  for line in io.lines(out) do last = line end
  local series = json.decode(last).data.series
  truthy(#series >= 2, "seconds: " .. #series)
  eq(series[1].vus, 3, "the first second's VUs")
end)
