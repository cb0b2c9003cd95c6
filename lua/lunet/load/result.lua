--- A `lunet load` run's result record: one JSON object that holds everything `lunet load merge`
--- needs to put shards back together exactly: which test and shard it is, every metric's state
--- per tag set (counters' sums, rates' counts, histograms' buckets), the checks, the first
--- failures, and the run's seconds (lunet.load.series). It is the last line of an `--out json`
--- file, and with --result-line the last line of standard output (a Kubernetes pod's log).
---
--- `check` reads one back as a hostile file: a record that is not whole, or whose numbers do
--- not add up, is refused with the place it went wrong, never merged into a wrong total.
local hdr = require "lunet.load.hdr"

local M = {}

M.VERSION = 1

--- The record of a finished run. `r` holds: test (lunet.load.shard.identity), script, shard
--- ({ index, count }), started (wall-clock seconds), elapsed, interrupted, aborted, plan,
--- checks (the list), failures (the run's table by message), registry, series (encoded).
function M.build(r)
  local failures = {}
  for _, f in pairs(r.failures or {}) do
    failures[#failures + 1] = { message = f.message, count = f.count, scenario = f.scenario, order = f.order }
  end
  table.sort(failures, function(a, b) return a.order < b.order end)
  for _, f in ipairs(failures) do f.order = nil end
  return {
    type = "Result", version = M.VERSION,
    data = {
      test = r.test, script = r.script, shard = r.shard, started = r.started, elapsed = r.elapsed,
      interrupted = r.interrupted or false, aborted = r.aborted or false,
      thresholds = r.plan.thresholds, trend_stats = r.plan.trend_stats,
      checks = r.checks, failures = failures, metrics = r.registry:encode(), series = r.series or {},
    },
  }
end

-- Checking ------------------------------------------------------------------------------------

local function bad(where, fmt, ...) error({ place = where, problem = string.format(fmt, ...) }, 0) end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end
-- A whole number, up to 2^53 (a histogram's counts and sums are kept as integers and added in
-- C; past 2^53 a number read from JSON is no longer exact anyway).
local function whole(v) return finite(v) and v >= 0 and math.floor(v) == v and v <= 2 ^ 53 end

local function need(cond, where, fmt, ...) if not cond then bad(where, fmt, ...) end end

local KINDS = { counter = true, gauge = true, rate = true, trend = true }

-- A histogram as hdr.encode writes it: its buckets in order, counts that add up to `count`.
local function check_hdr(h, where)
  need(type(h) == "table" and type(h.counts) == "table", where, "not a histogram")
  need(whole(h.count) and whole(h.sum) and whole(h.clamped or 0), where, "count, sum or clamped is not a whole number")
  local counts, total, last = h.counts, 0, -1
  need(#counts % 2 == 0, where, "its counts are not index and count pairs")
  local top = hdr.index_of(hdr.HIGHEST)
  for k = 1, #counts, 2 do
    local i, n = counts[k], counts[k + 1]
    need(whole(i) and i > last and i <= top, where, "bucket index %s is out of order or range", tostring(i))
    need(whole(n) and n > 0, where, "bucket %d has count %s", i, tostring(n))
    total, last = total + n, i
  end
  need(total == h.count, where, "its buckets hold %d values, its count says %d", total, h.count)
  if h.count > 0 then need(whole(h.min) and whole(h.max) and h.min <= h.max, where, "min or max is missing or not a whole number") end
end

local function check_state(kind, st, where)
  need(type(st) == "table", where, "no state")
  if kind == "counter" then need(finite(st.sum) and whole(st.n), where, "a counter needs sum and n")
  elseif kind == "rate" then need(whole(st.trues) and whole(st.total) and st.trues <= st.total, where, "a rate needs trues <= total")
  elseif kind == "gauge" then
    if st.value ~= nil then need(finite(st.value) and finite(st.min) and finite(st.max), where, "a gauge needs value, min and max") end
  else check_hdr(st, where) end
end

local function check_tags(tags, where)
  need(type(tags) == "table", where, "tags are not a table")
  for k, v in pairs(tags) do need(type(k) == "string" and type(v) == "string", where, "a tag is not a string") end
end

local function check_metrics(list)
  need(type(list) == "table", "/data/metrics", "not a list")
  local seen = {}
  for i, m in ipairs(list) do
    local where = "/data/metrics/" .. (i - 1)
    need(type(m) == "table" and type(m.name) == "string" and m.name:match("^[%a_][%w_]*$"), where, "no metric name")
    need(not seen[m.name], where, "metric %s twice", m.name)
    seen[m.name] = true
    need(KINDS[m.kind], where, "%s: kind %s", m.name, tostring(m.kind))
    need(type(m.sinks) == "table", where, "%s: no tag sets", m.name)
    for j, sk in ipairs(m.sinks) do
      local w = where .. "/sinks/" .. (j - 1)
      need(type(sk) == "table", w, "not a tag set")
      check_tags(sk.tags, w .. "/tags")
      check_state(m.kind, sk.state, w .. "/state")
    end
  end
end

local function check_series(list)
  need(type(list) == "table", "/data/series", "not a list")
  local last
  for i, b in ipairs(list) do
    local where = "/data/series/" .. (i - 1)
    need(type(b) == "table" and whole(b.t) and (not last or b.t > last), where, "its second is missing or out of order")
    need(whole(b.reqs) and whole(b.failed) and whole(b.vus) and b.failed <= b.reqs, where, "reqs, failed or vus is not a count")
    need(b.span == nil or (whole(b.span) and b.span >= 1 and b.t % b.span == 0), where, "its span is not a whole number of seconds its second starts")
    check_hdr(b.duration, where .. "/duration")
    need(b.duration.count == b.reqs, where, "%d requests but %d durations", b.reqs, b.duration.count)
    last = b.t
  end
end

--- The record's data when `record` (a decoded JSON value) is a whole, consistent result;
--- otherwise nil and what is wrong, with its place as a JSON pointer.
function M.check(record)
  local ok, err = pcall(function()
    need(type(record) == "table" and record.type == "Result", "", "not a lunet load result record")
    need(record.version == M.VERSION, "/version", "version %s (this lunet reads %d)", tostring(record.version), M.VERSION)
    local d = record.data
    need(type(d) == "table", "/data", "missing")
    need(type(d.test) == "string" and d.test:match("^%x+$"), "/data/test", "no test identity")
    need(type(d.shard) == "table" and whole(d.shard.index) and whole(d.shard.count) and d.shard.count >= 1 and d.shard.index < d.shard.count,
      "/data/shard", "not a shard I of N")
    need(finite(d.started) and finite(d.elapsed) and d.elapsed >= 0, "/data/started", "start or length missing")
    need(type(d.thresholds) == "table" and type(d.trend_stats) == "table", "/data/thresholds", "missing")
    need(type(d.checks) == "table", "/data/checks", "missing")
    for i, c in ipairs(d.checks) do
      need(type(c) == "table" and type(c.name) == "string" and whole(c.passes) and whole(c.fails), "/data/checks/" .. (i - 1), "not a check")
    end
    need(type(d.failures) == "table", "/data/failures", "missing")
    for i, f in ipairs(d.failures) do
      need(type(f) == "table" and type(f.message) == "string" and whole(f.count) and f.count >= 1 and type(f.scenario) == "string",
        "/data/failures/" .. (i - 1), "not a failure (message, count, scenario)")
    end
    check_metrics(d.metrics)
    check_series(d.series)
  end)
  if ok then return record.data end
  if type(err) == "table" and err.problem then return nil, (err.place ~= "" and (err.place .. ": ") or "") .. err.problem end
  error(err, 0)
end

return M
