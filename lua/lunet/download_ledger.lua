-- What a download's part file holds, as a record kept beside it (NAME.part.meta, JSON):
--
--   { url =, etag =, last_modified =, length = (nil while unknown),
--     segments = { { first =, last = (nil: to the end), done = bytes on disk from first }, ... } }
--
-- Segments cover [0, length) in order, without gaps or overlaps. `done` only ever counts bytes
-- that were on disk before the record was written (the writer syncs the part file's data first),
-- so a resume fetches exactly what is missing. Pure: tables in, tables out; no I/O.
local json = require "lunet.json"

local M = {}

local function integer(v) return math.type(v) == "integer" end

--- A record for a new download of `length` bytes in `n` segments (one when the length is not
--- known): every segment empty.
function M.new(url, etag, last_modified, length, n)
  local segments = {}
  if not length or n <= 1 then
    segments[1] = { first = 0, last = length and length - 1 or nil, done = 0 }
  else
    local size = math.ceil(length / n)
    for i = 1, n do
      local first, last = (i - 1) * size, math.min(length, i * size) - 1
      if first <= last then segments[#segments + 1] = { first = first, last = last, done = 0 } end
    end
  end
  return { url = url, etag = etag, last_modified = last_modified, length = length, segments = segments }
end

--- The record in `text` if it can be trusted for `url` and a part file of `part_size` bytes;
--- else nil and why. A record that says more is on disk than the part file could hold, whose
--- segments overlap, leave gaps or run past the length, or that has no validator, is not.
function M.load(text, url, part_size)
  if type(text) ~= "string" then return nil, "no record" end
  local ok, r = pcall(json.decode, text)
  if not ok or type(r) ~= "table" then return nil, "the record is not JSON" end
  if r.url ~= url then return nil, "the record is for another URL" end
  if type(r.etag) ~= "string" and type(r.last_modified) ~= "string" then return nil, "no validator to resume with" end
  if r.length ~= nil and (not integer(r.length) or r.length <= 0) then return nil, "a bad length" end
  local segs = r.segments
  if type(segs) ~= "table" or #segs == 0 then return nil, "no segments (written by an older lunet, or cut short)" end
  local expect = 0
  for i, s in ipairs(segs) do
    if type(s) ~= "table" or not integer(s.first) or not integer(s.done) then return nil, "a malformed segment" end
    if s.first ~= expect then return nil, "segments overlap or leave a gap" end
    if s.last == nil then
      if i ~= #segs or r.length ~= nil then return nil, "an open segment where the length is known" end
    elseif not integer(s.last) or s.last < s.first or (r.length and s.last >= r.length) then
      return nil, "a segment outside the length"
    end
    local size = s.last and (s.last - s.first + 1) or math.huge
    if s.done < 0 or s.done > size then return nil, "a segment says more is done than it holds" end
    if s.done > 0 and s.first + s.done > (part_size or 0) then return nil, "the part file is shorter than the record says" end
    expect = s.last and s.last + 1 or expect
  end
  if r.length and expect ~= r.length then return nil, "the segments do not cover the length" end
  return r
end

--- The ranges still to fetch: { segment =, from =, to = (nil: to the end) }, in order.
function M.missing(r)
  local out = {}
  for _, s in ipairs(r.segments) do
    local size = s.last and (s.last - s.first + 1)
    if not size or s.done < size then
      out[#out + 1] = { segment = s, from = s.first + s.done, to = s.last }
    end
  end
  return out
end

--- Bytes on disk, by the record.
function M.done(r)
  local n = 0
  for _, s in ipairs(r.segments) do n = n + s.done end
  return n
end

--- True when every byte of a known length is on disk.
function M.complete(r)
  return r.length ~= nil and #M.missing(r) == 0
end

--- The record as JSON (keys in a fixed order, so equal records are equal texts).
function M.encode(r)
  local segs = {}
  for i, s in ipairs(r.segments) do
    segs[i] = string.format('{"first":%d,%s"done":%d}', s.first, s.last and string.format('"last":%d,', s.last) or "", s.done)
  end
  local fields = { '"url":' .. json.encode(r.url) }
  if r.etag then fields[#fields + 1] = '"etag":' .. json.encode(r.etag) end
  if r.last_modified then fields[#fields + 1] = '"last_modified":' .. json.encode(r.last_modified) end
  if r.length then fields[#fields + 1] = string.format('"length":%d', r.length) end
  fields[#fields + 1] = '"segments":[' .. table.concat(segs, ",") .. "]"
  return "{" .. table.concat(fields, ",") .. "}\n"
end

return M
