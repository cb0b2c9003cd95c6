--- `lunet load`'s metrics as Prometheus series (docs/load.md, "Live metrics in Prometheus"):
--- what lunet.load.prometheus pushes. Pure: a registry (lunet.load.metrics) in, remote-write
--- series out (lunet.load.remote_write). Every value is the run's total so far, never a figure
--- of the last interval, so that the series of N shards add up exactly:
---   counter  lunet_NAME_total (a counter of bytes: lunet_NAME_bytes_total)
---   rate     lunet_NAME_total{result="true"|"false"} (checks: true is a passed check)
---   gauge    lunet_NAME
---   trend    a classic histogram: lunet_NAME_seconds_bucket{le}, _sum, _count for a trend of
---            durations (the HDR histogram's buckets summed under each le), lunet_NAME_bucket
---            ... in the trend's own unit for the others.
--- Labels: testid, shard, and each tag set's tags (scenario, name, method, status, ...), whose
--- number the registry already bounds. A tag whose name Prometheus would not take is renamed
--- (`my-tag` is my_tag), and one that collides with a label of the format's own (le, result,
--- testid, shard) is prefixed tag_.
local hdr = require "lunet.load.hdr"
local rw = require "lunet.load.remote_write"

local M = {}

--- The le bounds of a trend of durations, in seconds: 1, 2, 5 a decade from 0.5 ms to 60 s.
M.TIME_BUCKETS = { 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 60 }
--- ... and of any other trend, in its unit.
M.VALUE_BUCKETS = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 1000000 }

local RESERVED = { le = true, result = true, testid = true, shard = true, __name__ = true }

--- A tag's name as a Prometheus label name.
function M.label_name(name)
  local n = name:gsub("[^%w_]", "_")
  if n:match("^%d") then n = "_" .. n end
  if n == "" then n = "_" end
  if RESERVED[n] or n:sub(1, 2) == "__" then n = "tag_" .. n end
  return n
end

--- A bound as Prometheus writes one in le: 0.0005, 1, 60, +Inf.
local function le_text(b)
  if b == math.huge then return "+Inf" end
  return (string.format("%.10g", b))
end

--- A builder for one run: opts.labels (the run's own: { { "testid", ID }, { "shard", "0" } }),
--- opts.time_buckets (seconds; M.TIME_BUCKETS by default). It keeps each series' encoded
--- labels between pushes.
function M.new(opts)
  local time_buckets = opts.time_buckets or M.TIME_BUCKETS
  return setmetatable({ labels = opts.labels or {}, cache = {}, time_buckets = time_buckets,
                        bounds = { time = M.bounds(time_buckets, 1e6), other = M.bounds(M.VALUE_BUCKETS, 1000) } },
                      { __index = M })
end

--- Each le bound in the histogram's microseconds (a trend keeps value * 1000): { le, us } pairs,
--- +Inf last.
function M.bounds(list, scale)
  local out = {}
  for i, b in ipairs(list) do out[i] = { le = le_text(b), us = b * scale } end
  out[#out + 1] = { le = "+Inf", us = math.huge }
  return out
end

--- The cumulative count under each bound of `bounds` of HDR histogram h: a slot counts under the
--- first bound its lowest value is at most (a slot is at most 1/1024 of its value wide, so a
--- bound between a slot's ends moves a count by that much at most).
function M.cumulative(h, bounds)
  local counts = {}
  for i = 1, #bounds do counts[i] = 0 end
  local k = 1
  local i, c = hdr.next_slot(h, -1)
  while i do
    local v = hdr.value_at(i)
    while v > bounds[k].us do k = k + 1 end
    counts[k] = counts[k] + c
    i, c = hdr.next_slot(h, i)
  end
  for j = 2, #counts do counts[j] = counts[j] + counts[j - 1] end
  return counts
end

-- The encoded labels of one series: metric name, the run's labels, the tag set's, and `extra`
-- ({ name, value } or nil). Kept by name, tag key and extra, so each is encoded once a run.
function M:labels_of(name, tags, key, extra_name, extra_value)
  local ck = name .. "\0" .. key .. "\0" .. (extra_name or "") .. "\0" .. (extra_value or "")
  local bytes = self.cache[ck]
  if bytes then return bytes end
  local list = { { "__name__", name } }
  for _, l in ipairs(self.labels) do list[#list + 1] = l end
  for k, v in pairs(tags) do list[#list + 1] = { M.label_name(k), v } end
  if extra_name then list[#list + 1] = { extra_name, extra_value } end
  bytes = rw.labels(list)
  self.cache[ck] = bytes
  return bytes
end

--- Every series of `registry` at `ts` (milliseconds since the epoch): a list of encoded
--- TimeSeries (lunet.load.remote_write.series) and its length.
function M:collect(registry, ts)
  local out = {}
  local function add(name, tags, key, value, extra_name, extra_value)
    out[#out + 1] = rw.series(self:labels_of(name, tags, key, extra_name, extra_value), value, ts)
  end
  for _, mname in ipairs(registry.order) do
    local m = registry.metrics[mname]
    for key, s in pairs(m.sinks) do
      local tags = m.tags[key]
      if m.kind == "counter" then
        add("lunet_" .. mname .. (m.contains == "data" and "_bytes_total" or "_total"), tags, key, s.sum)
      elseif m.kind == "rate" then
        add("lunet_" .. mname .. "_total", tags, key, s.trues, "result", "true")
        add("lunet_" .. mname .. "_total", tags, key, s.total - s.trues, "result", "false")
      elseif m.kind == "gauge" then
        if s.value ~= nil then add("lunet_" .. mname, tags, key, s.value) end
      else
        local time = m.contains == "time"
        local base = "lunet_" .. mname .. (time and "_seconds" or "")
        local bounds = time and self.bounds.time or self.bounds.other
        local scale = time and 1e6 or 1000
        local counts = M.cumulative(s, bounds)
        for j, b in ipairs(bounds) do add(base .. "_bucket", tags, key, counts[j], "le", b.le) end
        add(base .. "_sum", tags, key, s.sum / scale)
        add(base .. "_count", tags, key, s.count)
      end
    end
  end
  return out, #out
end

return M
