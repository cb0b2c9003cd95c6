--- What the HTML report (lunet.load.report) shows, from a run's or a merge's figures: the
--- seconds (requests, failures, VUs, latency percentiles), each request name's figures, the
--- checks and the thresholds' verdicts. Plain values; the report only draws them.
local hdr = require "lunet.load.hdr"

local M = {}

-- A bucket's share of the run, in seconds: its span, less what lies before the run started or
-- after it ended (the first and last seconds are partial: a run starts and ends inside one).
local function covered(b, started, ended)
  local span = b.span or 1
  if not started then return span end
  return math.max(0, math.min(b.t + span, ended) - math.max(b.t, started))
end

-- Under this share of a second, a first or last bucket joins its neighbour: a request or two in
-- a sliver of a second would draw as a spike.
local SLIVER = 0.25

-- `from` joined into `into`: counts add, the most VUs is the larger, histograms merge.
local function join(into, from)
  into.reqs, into.failed = into.reqs + from.reqs, into.failed + from.failed
  into.vus = math.max(into.vus, from.vus)
  local h = hdr.new()   -- a new one: the series' own histograms stay as they are
  h:merge(into.h)
  h:merge(from.h)
  into.h = h
  into.covered = into.covered + from.covered
end

-- The seconds, from their start: { t, reqs, failed, vus, p50, p95, p99 (ms, nil when none) },
-- requests and failures per second of the time the run was in the bucket (a long run's
-- bucket spans `span` seconds: lunet.load.series). `started` and `ended` (wall-clock) say
-- when the run was; without them (an older result) every bucket counts whole.
local function seconds(series, started, ended)
  if not (started and ended) then started, ended = nil, nil end
  local list = {}
  for _, b in ipairs(series) do
    list[#list + 1] = { t = b.t, span = b.span, reqs = b.reqs, failed = b.failed, vus = b.vus,
                        h = getmetatable(b.duration) and b.duration or hdr.decode(b.duration), covered = covered(b, started, ended) }
  end
  if #list > 1 and started and list[1].covered < SLIVER then
    local first = table.remove(list, 1)
    join(list[1], first)
  end
  if #list > 1 and started and list[#list].covered < SLIVER then join(list[#list - 1], table.remove(list)) end
  local out, first = {}, list[1] and list[1].t
  for _, b in ipairs(list) do
    local p = b.h.count > 0 and b.h:percentiles({ 50, 95, 99 }) or {}
    local per = b.covered > 0 and b.covered or (b.span or 1)
    out[#out + 1] = { t = b.t - first, reqs = b.reqs / per, failed = b.failed / per, vus = b.vus, span = b.span,
                      p50 = p[50] and p[50] / 1000, p95 = p[95] and p[95] / 1000, p99 = p[99] and p[99] / 1000 }
  end
  return out
end

-- Each request name and method: requests, failed ones, and the durations over every status.
local function names(registry)
  local reqs, failed, durations = registry.metrics.http_reqs, registry.metrics.http_req_failed, registry.metrics.http_req_duration
  if not reqs then return {} end
  local by = {}
  local function row(tags)
    local k = (tags.name or "") .. "\0" .. (tags.method or "")
    local r = by[k]
    if not r then
      r = { name = tags.name or "", method = tags.method or "", count = 0, failed = 0, h = hdr.new() }
      by[k] = r
    end
    return r
  end
  for key, s in pairs(reqs.sinks) do local r = row(reqs.tags[key]); r.count = r.count + s.sum end
  if failed then for key, s in pairs(failed.sinks) do local r = row(failed.tags[key]); r.failed = r.failed + s.trues end end
  if durations then for key, s in pairs(durations.sinks) do row(durations.tags[key]).h:merge(s) end end
  local list = {}
  for _, r in pairs(by) do
    local h = r.h
    if h.count > 0 then
      local p = h:percentiles({ 50, 95, 99 })
      r.avg, r.p50, r.p95, r.p99, r.max = h:mean() / 1000, p[50] / 1000, p[95] / 1000, p[99] / 1000, h.max / 1000
    end
    r.h = nil
    list[#list + 1] = r
  end
  table.sort(list, function(a, b)
    if a.count ~= b.count then return a.count > b.count end
    return a.name .. a.method < b.name .. b.method
  end)
  return list
end

--- The report's model (the shape lunet.load.report documents). `r` holds: title, shards,
--- started and ended (wall-clock seconds: the first shard's start, the last one's end), elapsed,
--- registry, series (encoded or live seconds, in order),
--- checks, thresholds (judged: each with key, expression.source and passed), passed.
function M.build(r)
  local ths = {}
  for _, th in ipairs(r.thresholds or {}) do
    ths[#ths + 1] = { key = th.key, expression = th.expression.source, passed = th.passed ~= false }
  end
  local checks = {}
  for _, c in ipairs(r.checks or {}) do checks[#checks + 1] = { name = c.name, passes = c.passes, fails = c.fails } end
  return {
    title = r.title, generated = os.date("!%Y-%m-%dT%H:%M:%SZ"), shards = r.shards or 1, elapsed = r.elapsed,
    passed = r.passed, series = seconds(r.series or {}, r.started, r.ended), names = names(r.registry), checks = checks, thresholds = ths,
  }
end

return M
