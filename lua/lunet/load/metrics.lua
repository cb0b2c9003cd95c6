--- `lunet load`'s metrics: counters, gauges, rates and trends, each kept per set of tags, as
--- k6 keeps them (http_req_duration{name:login,status:200}). Pure: values in, figures out.
--- A trend keeps its samples in an HDR histogram (lunet.load.hdr: microseconds) and reports
--- milliseconds; a counter reports its total and its rate per second of the run.
local hdr = require "lunet.load.hdr"

local M = {}

M.KINDS = { counter = true, gauge = true, rate = true, trend = true }

local Registry = {}
Registry.__index = Registry

--- A registry; `interval = true` also keeps each sink's figures since the last take_interval().
function M.registry(opts)
  return setmetatable({ metrics = {}, order = {}, interval = opts and opts.interval or false }, Registry)
end

-- A tag set's key: its names and values in name order (every value a string).
local function tag_key(tags)
  local names = {}
  for k in pairs(tags) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for i, k in ipairs(names) do parts[i] = k .. "\0" .. tostring(tags[k]) end
  return table.concat(parts, "\1")
end
M.tag_key = tag_key

local function new_sink(kind)
  if kind == "counter" then return { sum = 0, n = 0 } end
  if kind == "gauge" then return { value = nil, min = math.huge, max = -math.huge } end
  if kind == "rate" then return { trues = 0, total = 0 } end
  return hdr.new()
end

--- The metric `name` of `kind` ("counter", "gauge", "rate", "trend"), made on first use;
--- `time` marks a trend of durations (shown in ms) and `data` a counter of bytes. A second
--- declaration with another kind is an error naming both.
function Registry:metric(name, kind, contains)
  local m = self.metrics[name]
  if m then
    if m.kind ~= kind then error(string.format("metric '%s' is a %s, not a %s", name, m.kind, kind), 3) end
    return m
  end
  if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
    error(string.format("a metric name is letters, digits and _, got %s", tostring(name)), 3)
  end
  m = { name = name, kind = kind, contains = contains or "default", sinks = {}, tags = {}, interval = {} }
  self.metrics[name] = m
  self.order[#self.order + 1] = name
  return m
end

-- The sink of metric m for the tag set whose key is `key` (tags: the set itself).
local function sink_of(m, key, tags, interval)
  local s = m.sinks[key]
  if not s then
    s = new_sink(m.kind)
    m.sinks[key] = s
    local copy = {}
    for k, v in pairs(tags) do copy[k] = tostring(v) end
    m.tags[key] = copy
  end
  if interval then
    local i = m.interval[key]
    if not i then i = new_sink(m.kind); m.interval[key] = i end
    return s, i
  end
  return s
end

local function add_to(kind, s, value)
  if kind == "counter" then
    s.sum = s.sum + value
    s.n = s.n + 1
  elseif kind == "gauge" then
    s.value = value
    if value < s.min then s.min = value end
    if value > s.max then s.max = value end
  elseif kind == "rate" then
    s.total = s.total + 1
    if value then s.trues = s.trues + 1 end
  else
    s:record(value * 1000)   -- trends take milliseconds; the histogram keeps microseconds
  end
end

--- The sink of metric m for a tag set (its key made with tag_key), for a caller that adds to it
--- itself, many times (lunet.load.vu's per-request path); nil when the registry keeps interval
--- sinks too (then every sample goes through add).
function Registry:sink(m, tags, key)
  if self.interval then return nil end
  return (sink_of(m, key, tags))
end

--- Adds a sample to metric m under `tags` (a table), or under the tag set whose key `key` the
--- caller made already with tag_key (the per-request path: no sorting per sample).
function Registry:add(m, value, tags, key)
  key = key or tag_key(tags)
  local s, i = sink_of(m, key, tags, self.interval)
  add_to(m.kind, s, value)
  if i then add_to(m.kind, i, value) end
end

-- Merges sink b into a (a new sink of the kind when a is nil).
local function merged(kind, a, b)
  a = a or new_sink(kind)
  if kind == "counter" then a.sum, a.n = a.sum + b.sum, a.n + b.n
  elseif kind == "gauge" then
    if b.value ~= nil then a.value = b.value end
    a.min, a.max = math.min(a.min, b.min), math.max(a.max, b.max)
  elseif kind == "rate" then a.trues, a.total = a.trues + b.trues, a.total + b.total
  else a:merge(b) end
  return a
end

-- Whether tag set `tags` holds every name and value of `filter`.
local function matches(tags, filter)
  for k, v in pairs(filter) do if tags[k] ~= tostring(v) then return false end end
  return true
end

-- The figures of one (merged) sink, in the units the summary shows. elapsed: seconds of the
-- run, for a counter's rate; percentiles: the p values wanted.
local function figures(m, s, elapsed, percentiles)
  if m.kind == "counter" then
    return { count = s.sum, rate = elapsed > 0 and s.sum / elapsed or 0 }
  elseif m.kind == "gauge" then
    return { value = s.value, min = s.value and s.min or nil, max = s.value and s.max or nil }
  elseif m.kind == "rate" then
    return { rate = s.total > 0 and s.trues / s.total or 0, passes = s.trues, fails = s.total - s.trues, total = s.total }
  end
  if s.count == 0 then return { count = 0, p = {} } end
  local ps = s:percentiles(percentiles)
  local p = {}
  for k, v in pairs(ps) do p[k] = v / 1000 end
  return { count = s.count, avg = s:mean() / 1000, min = s.min / 1000, max = s.max / 1000,
           med = (s:percentiles({ 50 })[50]) / 1000, p = p }
end

--- The figures of metric `name` over every tag set that holds `filter` (all when nil): for a
--- trend { count, avg, min, med, max, p = { [N] = ms } } in milliseconds, a counter { count,
--- rate }, a rate { rate, passes, fails }, a gauge { value, min, max }. nil for an unknown metric.
function Registry:figures(name, filter, elapsed, percentiles)
  local m = self.metrics[name]
  if not m then return nil end
  local total
  for key, s in pairs(m.sinks) do
    if not filter or matches(m.tags[key], filter) then total = merged(m.kind, total, s) end
  end
  return figures(m, total or new_sink(m.kind), elapsed or 0, percentiles or { 90, 95, 99 }), m
end

--- The samples since the last call, per metric and tag set: a list of { metric, kind, tags,
--- figures } (counters' rate per second of `seconds`); the interval sinks start again.
function Registry:take_interval(seconds, percentiles)
  local out = {}
  for _, name in ipairs(self.order) do
    local m = self.metrics[name]
    for key, s in pairs(m.interval) do
      out[#out + 1] = { metric = name, kind = m.kind, tags = m.tags[key], figures = figures(m, s, seconds, percentiles or { 95, 99 }) }
    end
    m.interval = {}
  end
  return out
end

--- Every trend's histogram over all its tag sets, merged (for the final JSON record).
function Registry:histograms()
  local out = {}
  for _, name in ipairs(self.order) do
    local m = self.metrics[name]
    if m.kind == "trend" then
      local total = hdr.new()
      for _, s in pairs(m.sinks) do total:merge(s) end
      out[name] = total
    end
  end
  return out
end

-- A sink's state for JSON (no infinities: a gauge never set has no min or max).
local function encode_sink(kind, s)
  if kind == "counter" then return { sum = s.sum, n = s.n } end
  if kind == "rate" then return { trues = s.trues, total = s.total } end
  if kind == "gauge" then
    return { value = s.value, min = s.value ~= nil and s.min or nil, max = s.value ~= nil and s.max or nil }
  end
  return s:encode()
end

--- Every metric and tag set's state, for a result record: { { name, kind, contains, sinks =
--- { { tags, state }, ... } }, ... } in the order the metrics were made.
function Registry:encode()
  local out = {}
  for _, name in ipairs(self.order) do
    local m = self.metrics[name]
    local sinks = {}
    for key, sk in pairs(m.sinks) do sinks[#sinks + 1] = { tags = m.tags[key], state = encode_sink(m.kind, sk) } end
    out[#out + 1] = { name = name, kind = m.kind, contains = m.contains, sinks = sinks }
  end
  return out
end

--- Adds a result record's metrics (Registry:encode's form, already checked) into this
--- registry: counters and rates add, histograms add bucket by bucket, and a gauge adds its
--- value, min and max (the shards' VUs running at the end, and what they allocated, add up).
function Registry:absorb(encoded)
  for _, e in ipairs(encoded) do
    local m = self:metric(e.name, e.kind, e.contains)
    for _, sk in ipairs(e.sinks) do
      local key = tag_key(sk.tags)
      local into = sink_of(m, key, sk.tags, false)
      local st = sk.state
      if e.kind == "counter" then into.sum, into.n = into.sum + st.sum, into.n + st.n
      elseif e.kind == "rate" then into.trues, into.total = into.trues + st.trues, into.total + st.total
      elseif e.kind == "gauge" then
        if st.value ~= nil then
          into.value = (into.value or 0) + st.value
          into.min = (into.min == math.huge and 0 or into.min) + st.min
          into.max = (into.max == -math.huge and 0 or into.max) + st.max
        end
      else into:merge(hdr.decode(st)) end
    end
  end
end

return M
