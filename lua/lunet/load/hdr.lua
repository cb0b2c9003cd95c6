--- An HDR histogram (Gil Tene's High Dynamic Range histogram) for `lunet load`'s latencies:
--- integer microseconds from 1 µs to 1 hour, 3 significant digits. A value lands in a bucket no
--- wider than 1/1024 of it, so every percentile read back is within 0.1% of the true one, and
--- two histograms merge exactly (their counts add). Recording is a few integer operations and
--- one table store. Exact min, max, sum and count are kept beside the counts.
---
--- Layout (HdrHistogram's): sub-buckets of 2048 values; bucket b holds values of magnitude
--- 2^(b+10) .. 2^(b+11) in 1024 sub-buckets of width 2^b (bucket 0 holds 0 .. 2047 in 2048).
--- counts[index] for index 0 .. (buckets + 1) * 1024 - 1; absent entries are 0.
local M = {}

local SUB_HALF_MAG = 10                 -- log2 of the half count
local SUB_HALF = 1 << SUB_HALF_MAG      -- 1024
local SUB_MASK = (SUB_HALF << 1) - 1    -- 2047
M.HIGHEST = 3600 * 1000000              -- one hour in microseconds

-- The index of the highest bit set in x (x >= 1; x < 2^32 here).
local function msb(x)
  local n = 0
  if x >= 0x10000 then x = x >> 16; n = n + 16 end
  if x >= 0x100 then x = x >> 8; n = n + 8 end
  if x >= 0x10 then x = x >> 4; n = n + 4 end
  if x >= 4 then x = x >> 2; n = n + 2 end
  if x >= 2 then n = n + 1 end
  return n
end

--- The counts index of integer value v (0 <= v <= HIGHEST).
local function index_of(v)
  local bucket = msb(v | SUB_MASK) - SUB_HALF_MAG
  local sub = v >> bucket
  return ((bucket + 1) << SUB_HALF_MAG) + sub - SUB_HALF
end
M.index_of = index_of

--- The lowest value that lands at counts index i.
local function value_at(i)
  local bucket = (i >> SUB_HALF_MAG) - 1
  local sub = (i & (SUB_HALF - 1)) + SUB_HALF
  if bucket < 0 then
    sub = sub - SUB_HALF
    bucket = 0
  end
  return sub << bucket
end
M.value_at = value_at

--- The highest value that lands in the same bucket as v (what HdrHistogram reports).
local function highest_equivalent(v)
  local bucket = msb(v | SUB_MASK) - SUB_HALF_MAG
  return value_at(index_of(v)) + (1 << bucket) - 1
end
M.highest_equivalent = highest_equivalent

local H = {}
H.__index = H

function M.new()
  return setmetatable({ counts = {}, count = 0, sum = 0, min = math.huge, max = -math.huge, clamped = 0 }, H)
end

local floor, HIGHEST = math.floor, M.HIGHEST

--- Records a value in microseconds (a number; rounded to an integer; negative counts as 0,
--- past an hour as an hour and in `clamped`). A plain function as well as a method
--- (hdr.record(h, us)): `lunet load` records several values a request, and the index is
--- worked out inline (msb and index_of, written out) to keep that to a few operations.
local function record(self, us)
  if us ~= us then return end   -- NaN: no value to keep
  local v = floor(us + 0.5)
  if v < 0 then v = 0 elseif v > HIGHEST then v = HIGHEST; self.clamped = self.clamped + 1 end
  local i
  if v < 2048 then
    i = v
  else
    local x, n = v, 0
    if x >= 0x10000 then x = x >> 16; n = 16 end
    if x >= 0x100 then x = x >> 8; n = n + 8 end
    if x >= 0x10 then x = x >> 4; n = n + 4 end
    if x >= 4 then x = x >> 2; n = n + 2 end
    if x >= 2 then n = n + 1 end
    local bucket = n - SUB_HALF_MAG
    i = ((bucket + 1) << SUB_HALF_MAG) + (v >> bucket) - SUB_HALF
  end
  local counts = self.counts
  counts[i] = (counts[i] or 0) + 1
  self.count = self.count + 1
  self.sum = self.sum + v
  if v < self.min then self.min = v end
  if v > self.max then self.max = v end
end
M.record = record
H.record = record

--- Adds every count of `other` (merging two histograms exactly).
function H:merge(other)
  local counts = self.counts
  for i, c in pairs(other.counts) do counts[i] = (counts[i] or 0) + c end
  self.count = self.count + other.count
  self.sum = self.sum + other.sum
  self.clamped = self.clamped + other.clamped
  if other.min < self.min then self.min = other.min end
  if other.max > self.max then self.max = other.max end
  return self
end

-- The indexes that hold counts, in order.
local function sorted_indexes(counts)
  local list = {}
  for i in pairs(counts) do list[#list + 1] = i end
  table.sort(list)
  return list
end

--- The value (microseconds) at percentile p (0..100), as HdrHistogram gives it: the highest
--- value equivalent to the one whose rank reaches p% of the count, kept within the exact min
--- and max. nil when empty.
function H:percentile(p)
  if self.count == 0 then return nil end
  local rank = math.max(1, math.floor(p / 100 * self.count + 0.5))
  local seen = 0
  for _, i in ipairs(sorted_indexes(self.counts)) do
    seen = seen + self.counts[i]
    if seen >= rank then
      local v = highest_equivalent(value_at(i))
      if v > self.max then v = self.max end
      if v < self.min then v = self.min end
      return v
    end
  end
  return self.max
end

--- Several percentiles in one pass: { [p] = value } for each p of the list.
function H:percentiles(list)
  local out = {}
  if self.count == 0 then return out end
  local wanted = {}
  for _, p in ipairs(list) do wanted[#wanted + 1] = { p = p, rank = math.max(1, math.floor(p / 100 * self.count + 0.5)) } end
  table.sort(wanted, function(a, b) return a.rank < b.rank end)
  local k, seen = 1, 0
  for _, i in ipairs(sorted_indexes(self.counts)) do
    seen = seen + self.counts[i]
    while k <= #wanted and seen >= wanted[k].rank do
      local v = highest_equivalent(value_at(i))
      out[wanted[k].p] = math.max(self.min, math.min(v, self.max))
      k = k + 1
    end
    if k > #wanted then break end
  end
  return out
end

function H:mean()
  if self.count == 0 then return nil end
  return self.sum / self.count
end

--- A compact form for JSON: the exact figures and the counts as [index, count, ...] pairs.
function H:encode()
  local pairs_ = {}
  for _, i in ipairs(sorted_indexes(self.counts)) do
    pairs_[#pairs_ + 1] = i
    pairs_[#pairs_ + 1] = self.counts[i]
  end
  return { unit = "us", count = self.count, sum = self.sum, min = self.count > 0 and self.min or nil,
           max = self.count > 0 and self.max or nil, clamped = self.clamped, counts = pairs_ }
end

--- A histogram back from encode()'s form.
function M.decode(t)
  local h = M.new()
  for k = 1, #t.counts, 2 do h.counts[t.counts[k]] = t.counts[k + 1] end
  h.count, h.sum, h.clamped = t.count, t.sum, t.clamped or 0
  h.min, h.max = t.min or math.huge, t.max or -math.huge
  return h
end

return M
