--- An HDR histogram (Gil Tene's High Dynamic Range histogram) for `lunet load`'s latencies:
--- integer microseconds from 1 µs to 1 hour, 3 significant digits. A value lands in a bucket no
--- wider than 1/1024 of it, so every percentile read back is within 0.1% of the true one, and
--- two histograms merge exactly (their counts add). Exact min, max, sum and count are kept
--- beside the counts.
---
--- The counts live in C (Sources/CLunetLua/hdr_histogram.c, core.hdr_open): a histogram is a
--- userdata, and recording a value is one call (a run records seven a request, six of them in
--- one call through a group). Its fields read as they did from a table: h.count, h.sum, h.min,
--- h.max (math.huge and -math.huge while empty), h.clamped, and h.counts, a new table
--- { [index] = count } each time it is read.
---
--- Layout (HdrHistogram's): sub-buckets of 2048 values; bucket b holds values of magnitude
--- 2^(b+10) .. 2^(b+11) in 1024 sub-buckets of width 2^b (bucket 0 holds 0 .. 2047 in 2048).
--- counts[index] for index 0 .. (buckets + 1) * 1024 - 1; absent entries are 0.
local native = select(2, ...).hdr_open()   -- lunet.core, from the module's loader

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

local H = native.methods
local next_slot = native.next
--- next_slot(h, i): the next counts index after i (-1: the first) that holds a count, and the
--- count; nil past the last.
M.next_slot = next_slot

--- A new, empty histogram.
M.new = native.new

--- Records a value in microseconds (a number; rounded to an integer; negative counts as 0,
--- past an hour as an hour and in `clamped`; NaN is not kept). A plain function as well as a
--- method (hdr.record(h, us)).
M.record = native.record
H.record = native.record

--- group(list): a group of the 1 to 16 histograms of `list`, in its order;
--- record_group(g, us1, us2, ...): us1 into the group's first histogram, us2 into its second,
--- ...: the several values of one request in one call, which checks one argument (the group)
--- instead of each histogram. A group keeps its histograms alive.
M.group = native.group
M.record_group = native.record_group

--- Adds every count of `other` (merging two histograms exactly); returns self.
H.merge = native.merge

--- The value (microseconds) at percentile p (0..100), as HdrHistogram gives it: the highest
--- value equivalent to the one whose rank reaches p% of the count, kept within the exact min
--- and max. nil when empty.
function H:percentile(p)
  return self:percentiles({ p })[p]
end

--- Several percentiles in one pass over the counts, in order: { [p] = value } for each p.
function H:percentiles(list)
  local out = {}
  local count = self.count
  if count == 0 then return out end
  local min, max = self.min, self.max
  local wanted = {}
  for _, p in ipairs(list) do wanted[#wanted + 1] = { p = p, rank = math.max(1, math.floor(p / 100 * count + 0.5)) } end
  table.sort(wanted, function(a, b) return a.rank < b.rank end)
  local k, seen = 1, 0
  local i, c = next_slot(self, -1)
  while i and k <= #wanted do
    seen = seen + c
    while k <= #wanted and seen >= wanted[k].rank do
      out[wanted[k].p] = math.max(min, math.min(highest_equivalent(value_at(i)), max))
      k = k + 1
    end
    i, c = next_slot(self, i)
  end
  for j = k, #wanted do out[wanted[j].p] = max end   -- counts short of a rank (not from record)
  return out
end

function H:mean()
  if self.count == 0 then return nil end
  return self.sum / self.count
end

--- A compact form for JSON: the exact figures and the counts as [index, count, ...] pairs.
function H:encode()
  local pairs_ = {}
  local i, c = next_slot(self, -1)
  while i do
    pairs_[#pairs_ + 1] = i
    pairs_[#pairs_ + 1] = c
    i, c = next_slot(self, i)
  end
  local count = self.count
  return { unit = "us", count = count, sum = self.sum, min = count > 0 and self.min or nil,
           max = count > 0 and self.max or nil, clamped = self.clamped, counts = pairs_ }
end

--- A histogram back from encode()'s form (lunet.load.result has checked it).
function M.decode(t)
  local h = M.new()
  local add = native.add
  for k = 1, #t.counts, 2 do add(h, t.counts[k], t.counts[k + 1]) end
  local some = t.count > 0   -- an empty one's min and max may be absent, or JSON's null
  native.set_figures(h, t.count, t.sum, some and t.min or nil, some and t.max or nil, t.clamped or 0)
  return h
end

return M
