--- Second by second figures of a `lunet load` run, on the wall clock: requests, failed requests,
--- the most VUs running, and an HDR histogram of the requests' durations. A run keeps them when
--- something will read them (--out json's result record, --result-line, --report): the report
--- draws them, and `lunet load merge` adds shards' seconds that fall on the same wall-clock
--- second (shards started together with --start-at), histograms bucket by bucket.
---
--- Bounded: past MAX_SECONDS buckets the series doubles its step (2 s, 4 s, ...), each bucket
--- then holding its `span` seconds from an epoch second that is a multiple of it, so that
--- shards' buckets still line up. A second's histogram holds up to ~10 KB: kept whole, a run
--- grew by ~36 MB an hour, without end.
local hdr = require "lunet.load.hdr"

local M = {}

--- The buckets a series keeps at most (an hour of seconds, ~36 MB at worst).
M.MAX_SECONDS = 3600

local floor = math.floor
local record = hdr.record

--- A series whose monotonic time `mono0` (core.now) is wall-clock time `wall0` (core.wall_time).
function M.new(wall0, mono0)
  return { seconds = {}, offset = wall0 - mono0, step = 1, count = 0 }
end

local function empty(t) return { t = t, reqs = 0, failed = 0, vus = 0, duration = hdr.new() } end

--- Adds bucket `b` into `into` (a bucket of the same or a wider span): counts add, the most VUs
--- is the larger, histograms merge exactly.
local function absorb(into, b)
  into.reqs, into.failed = into.reqs + b.reqs, into.failed + b.failed
  if b.vus > into.vus then into.vus = b.vus end
  into.duration:merge(b.duration)
end

-- Twice the step: each bucket joins the one its second now falls in.
local function widen(s)
  s.step = s.step * 2
  local old = s.seconds
  s.seconds, s.count = {}, 0
  for sec, b in pairs(old) do
    local k = sec - sec % s.step
    local into = s.seconds[k]
    if into then absorb(into, b) else s.seconds[k], s.count = b, s.count + 1 end
  end
end

-- The bucket of epoch second `sec`, made when new.
local function bucket(s, sec)
  local k = sec - sec % s.step
  local b = s.seconds[k]
  if b then return b end
  b = empty()
  s.seconds[k], s.count = b, s.count + 1
  if s.count > M.MAX_SECONDS then
    widen(s)
    return s.seconds[sec - sec % s.step]
  end
  return b
end

--- One request that ended at monotonic time `t`, `us` microseconds long.
function M.add(s, t, us, failed)
  local sec = floor(s.offset + t)
  local b = s.seconds[sec - sec % s.step] or bucket(s, sec)
  b.reqs = b.reqs + 1
  if failed then b.failed = b.failed + 1 end
  record(b.duration, us)
end

--- The VUs running at monotonic time `t` (the bucket keeps the most it saw).
function M.note_vus(s, t, vus)
  local b = bucket(s, floor(s.offset + t))
  if vus > b.vus then b.vus = vus end
end

--- The buckets in order, for JSON: { { t = epoch second, reqs, failed, vus, duration = hdr
--- encoded, span = seconds (only when over 1) }, ... }.
function M.encode(s)
  local list = {}
  for sec, b in pairs(s.seconds) do
    list[#list + 1] = { t = sec, reqs = b.reqs, failed = b.failed, vus = b.vus, duration = b.duration:encode(),
                        span = s.step > 1 and s.step or nil }
  end
  table.sort(list, function(a, b) return a.t < b.t end)
  return list
end

--- Encoded buckets (a shard's, or several shards') in buckets of `span` seconds: within a
--- shard the most VUs is the larger, across shards (`sum_vus`) the VUs add. Decoded histograms.
function M.rebucket(lists, span)
  local by = {}
  for _, list in ipairs(lists) do
    local mine = {}
    for _, b in ipairs(list) do
      local k = b.t - b.t % span
      mine[k] = mine[k] or empty(k)
      absorb(mine[k], { reqs = b.reqs, failed = b.failed, vus = b.vus,
                        duration = getmetatable(b.duration) and b.duration or hdr.decode(b.duration) })
    end
    for k, b in pairs(mine) do
      local into = by[k] or empty(k)
      by[k] = into
      local vus = into.vus + b.vus   -- across shards the VUs add
      absorb(into, b)
      into.vus = vus
    end
  end
  local out = {}
  for _, b in pairs(by) do
    if span > 1 then b.span = span end
    out[#out + 1] = b
  end
  table.sort(out, function(a, b) return a.t < b.t end)
  return out
end

return M
