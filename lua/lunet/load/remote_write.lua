--- Prometheus remote write 1.0's body, before its snappy compression: a protobuf WriteRequest
--- (prompb: WriteRequest { repeated TimeSeries timeseries = 1 }, TimeSeries { repeated Label
--- labels = 1; repeated Sample samples = 2 }, Label { string name = 1; string value = 2 },
--- Sample { double value = 1; int64 timestamp = 2 }, milliseconds since the epoch). Pure: bytes
--- out. A series' labels are encoded once and kept by the caller (lunet.load.prometheus_series):
--- only the sample changes from one push to the next.
local M = {}

local char, pack, concat = string.char, string.pack, table.concat

--- A non-negative integer as a protobuf varint.
local function varint(n)
  if n < 0x80 then return char(n) end
  local out = {}
  while n >= 0x80 do
    out[#out + 1] = char((n & 0x7f) | 0x80)
    n = n >> 7
  end
  out[#out + 1] = char(n)
  return concat(out)
end
M.varint = varint

-- Field `field` of wire type 2 (length-delimited) holding `bytes`.
local function delimited(field, bytes) return char(field << 3 | 2) .. varint(#bytes) .. bytes end

--- The labels of a series as its TimeSeries' repeated Label fields: `labels` is a list of
--- { name, value } pairs; they are sorted by name here (the protocol requires it), and a label
--- with an empty value is left out (Prometheus treats it as absent).
function M.labels(labels)
  local sorted = {}
  for _, l in ipairs(labels) do if l[2] ~= "" then sorted[#sorted + 1] = l end end
  table.sort(sorted, function(a, b) return a[1] < b[1] end)
  local out = {}
  for i, l in ipairs(sorted) do out[i] = delimited(1, delimited(1, l[1]) .. delimited(2, l[2])) end
  return concat(out)
end

--- One TimeSeries field of the WriteRequest: encoded labels (M.labels), one sample.
function M.series(labels, value, timestamp_ms)
  local sample = "\9" .. pack("<d", value) .. "\16" .. varint(timestamp_ms)
  return delimited(1, labels .. delimited(2, sample))
end

--- The WriteRequest of a list of M.series pieces.
function M.request(series) return concat(series) end

return M
