--- A latency histogram for the terminal, drawn as `hey` draws it: one row per bucket of
--- latencies, "  1.234ms [  1203] ■■■■■■■■", each bar scaled to the fullest row. The rows
--- come from an HDR histogram's counts (hdr.lua, microseconds), so they add up to its count
--- exactly. The caller prints them under a heading of its own.
local hdr = require "lunet.load.hdr"

local M = {}

local BAR = "■"   -- 3 bytes, 1 column
local COLOR, RESET = "\27[36m", "\27[0m"

-- Rows are linear between the fastest and the slowest, as hey's, while those are within 100×
-- of each other. Past that (a 1 ms service with a 5 s timeout), linear rows put nearly every
-- request in the first row and leave the rest empty but one; rows in a geometric progression
-- keep a row for each order of magnitude, where the shape of a latency distribution is.
local LOG_RATIO = 100

-- The upper edges (microseconds) of the rows, from the fastest `lo` to the slowest `hi`.
local function edges(lo, hi, rows)
  local list = {}
  local base = math.max(lo, 1)
  local log = hi / base > LOG_RATIO
  for k = 1, rows do
    list[k] = log and base * (hi / base) ^ (k / rows) or lo + (hi - lo) * k / rows
  end
  list[rows] = hi   -- exact: no rounding may leave the slowest above the last edge
  return list, log
end

-- How many rows: as asked, but none narrower than the HDR bucket the slowest value is in
-- (narrower rows would be empty or full by where bucket boundaries fall, not by the data).
local function row_count(h, wanted)
  if h.max <= h.min then return 1 end
  local width = hdr.highest_equivalent(h.max) - hdr.value_at(hdr.index_of(h.max)) + 1
  return math.max(1, math.min(wanted, math.floor((h.max - h.min) / width)))
end

-- The row (1..#edge) of value v: the first whose upper edge is at or above it.
local function row_of(v, edge)
  local a, b = 1, #edge
  while a < b do
    local mid = (a + b) // 2
    if v <= edge[mid] then b = mid else a = mid + 1 end
  end
  return a
end

-- The count of each row. An HDR bucket's values are within 0.1% of each other; the bucket
-- goes to the row of its lowest value, kept within the exact min and max.
local function counts(h, edge)
  local out = {}
  for k = 1, #edge do out[k] = 0 end
  for i, c in pairs(h.counts) do
    local v = math.max(h.min, math.min(hdr.value_at(i), h.max))
    local k = row_of(v, edge)
    out[k] = out[k] + c
  end
  return out
end

--- The histogram's lines (an empty list when h has no value). opts: width (columns, default 80;
--- no line is wider, counting characters, not bytes), buckets (rows, default 10), color (bars
--- in one ANSI colour; pass false under NO_COLOR or off a terminal).
function M.lines(h, opts)
  opts = opts or {}
  if h.count == 0 then return {} end
  local width = opts.width or 80
  local edge = edges(h.min, h.max, row_count(h, opts.buckets or 10))
  local rows = counts(h, edge)
  local labels, label_w, most = {}, 0, 0
  for k, e in ipairs(edge) do
    labels[k] = string.format("%.3fms", e / 1000)
    label_w = math.max(label_w, #labels[k])
    most = math.max(most, rows[k])
  end
  local count_w = #string.format("%d", most)
  -- "  " label " [" count "] " then the bar, which gets the columns left
  local room = math.max(0, width - (2 + label_w + 2 + count_w + 2))
  local lines = {}
  for k = 1, #edge do
    local n = rows[k]
    local bar = most > 0 and math.floor(n / most * room + 0.5) or 0
    if n > 0 and bar == 0 and room > 0 then bar = 1 end   -- a row with requests shows some
    local text = BAR:rep(bar)
    if opts.color and bar > 0 then text = COLOR .. text .. RESET end
    lines[k] = string.format("  %" .. label_w .. "s [%" .. count_w .. "d]", labels[k], n) .. (bar > 0 and " " .. text or "")
  end
  return lines
end

return M
