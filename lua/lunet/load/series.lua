--- Second by second figures of a `lunet load` run, on the wall clock: requests, failed requests,
--- the most VUs running, and an HDR histogram of the requests' durations. A run keeps them when
--- something will read them (--out json's result record, --result-line, --report): the report
--- draws them, and `lunet load merge` adds shards' seconds that fall on the same wall-clock
--- second (shards started together with --start-at), histograms bucket by bucket.
local hdr = require "lunet.load.hdr"

local M = {}

local floor = math.floor
local record = hdr.record

--- A series whose monotonic time `mono0` (core.now) is wall-clock time `wall0` (core.wall_time).
function M.new(wall0, mono0)
  return { seconds = {}, offset = wall0 - mono0 }
end

local function second(s, sec)
  local b = s.seconds[sec]
  if not b then
    b = { reqs = 0, failed = 0, vus = 0, duration = hdr.new() }
    s.seconds[sec] = b
  end
  return b
end

--- One request that ended at monotonic time `t`, `us` microseconds long.
function M.add(s, t, us, failed)
  local b = s.seconds[floor(s.offset + t)] or second(s, floor(s.offset + t))
  b.reqs = b.reqs + 1
  if failed then b.failed = b.failed + 1 end
  record(b.duration, us)
end

--- The VUs running at monotonic time `t` (the second keeps the most it saw).
function M.note_vus(s, t, vus)
  local b = second(s, floor(s.offset + t))
  if vus > b.vus then b.vus = vus end
end

--- The seconds in order, for JSON: { { t = epoch second, reqs, failed, vus, duration = hdr encoded }, ... }.
function M.encode(s)
  local list = {}
  for sec, b in pairs(s.seconds) do
    list[#list + 1] = { t = sec, reqs = b.reqs, failed = b.failed, vus = b.vus, duration = b.duration:encode() }
  end
  table.sort(list, function(a, b) return a.t < b.t end)
  return list
end

return M
