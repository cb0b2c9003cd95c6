-- The WHATWG event-stream format (HTML, "Server-sent events", "Parsing an event stream"), as a
-- pure incremental parser: feed it pieces of a body as they arrive, get events back. No I/O.
--
--   local p = sse_parser.new()
--   for _, ev in ipairs(p:feed(piece)) do ... end   -- ev = { type =, data =, id =, retry = }
--
-- Lines end in CR, LF or CRLF, and a CRLF may be split across two pieces; a leading BOM is
-- dropped once; fields may be split anywhere. An event without its closing blank line when the
-- stream ends is discarded, as the standard says.
--
-- Speed: streams carry hundreds of thousands of small events, so feed() takes each line apart
-- with one anchored pattern (field, the optional colon and space, value) and keeps its state in
-- locals while it runs; a per-line method call and three string copies per line cost 4x.
local find, byte, sub, concat = string.find, string.byte, string.sub, table.concat

local M = {}

local Parser = {}
Parser.__index = Parser

local BOM = "\239\187\191"
-- A line: the field (up to a colon or the line's end), the colon and one space if present, the
-- value. A line without a colon leaves the value empty (the whole line is the field); a line
-- starting with a colon has an empty field and is a comment; an empty line matches nothing.
local LINE = "^([^:\r\n]*):? ?([^\r\n]*)"

function M.new()
  return setmetatable({
    buffer = "",          -- bytes of an unfinished line
    skip_lf = false,      -- the last piece ended in CR: a LF starting the next one is that line's end
    at_start = true,      -- a BOM is dropped only at the very start of the stream
    data = {}, data_n = 0, event_type = "", id_buffer = nil,
    last_event_id = "",   -- kept across events (and reconnects: the client sends it back)
    retry = nil,          -- the last valid `retry` value, in milliseconds
  }, Parser)
end

--- Feeds a piece of the body; returns the list of events it completed (possibly empty).
function Parser:feed(piece)
  local out, n_out = {}, 0
  if self.at_start and piece ~= "" then
    local text = self.buffer .. piece
    if #text < 3 and sub(BOM, 1, #text) == text then
      self.buffer = text      -- too short to tell whether it is a BOM
      return out
    end
    self.at_start = false
    if sub(text, 1, 3) == BOM then text = sub(text, 4) end
    self.buffer, piece = "", text
  end
  if self.skip_lf then
    self.skip_lf = false
    if byte(piece, 1) == 10 then piece = sub(piece, 2) end
  end
  local text = self.buffer ~= "" and self.buffer .. piece or piece
  local len = #text
  local data, data_n, event_type, id_buffer = self.data, self.data_n, self.event_type, self.id_buffer
  local pos = 1
  while pos <= len do
    local _, e, field, value = find(text, LINE, pos)
    local ending = byte(text, e + 1)
    if not ending then break end   -- the line is not complete yet
    local next_pos = e + 2
    if ending == 13 then
      if e + 1 == len then
        self.skip_lf = true   -- the LF of a CRLF may come in the next piece
      elseif byte(text, e + 2) == 10 then
        next_pos = e + 3
      end
    end
    if e < pos then
      -- An empty line dispatches. The id seen in this event becomes the last event id even
      -- with no data.
      if id_buffer ~= nil then self.last_event_id, id_buffer = id_buffer, nil end
      if data_n > 0 then
        n_out = n_out + 1
        out[n_out] = { type = event_type ~= "" and event_type or "message",
                       data = data_n == 1 and data[1] or concat(data, "\n", 1, data_n),
                       id = self.last_event_id }
        -- A long multi-line event's lines are not kept alive until later events overwrite them.
        if data_n > 16 then data = {} end
        data_n = 0
      end
      event_type = ""
    elseif field == "data" then
      data_n = data_n + 1
      data[data_n] = value
    elseif field == "event" then
      event_type = value
    elseif field == "id" then
      if not find(value, "\0", 1, true) then id_buffer = value end
    elseif field == "retry" then
      if find(value, "^%d+$") then self.retry = tonumber(value) end
    end
    -- a comment (empty field after a colon) and any other field are ignored
    pos = next_pos
  end
  self.data, self.data_n, self.event_type, self.id_buffer = data, data_n, event_type, id_buffer
  self.buffer = pos <= len and sub(text, pos) or ""
  return out
end

--- The stream ended: what is left is an unfinished event, which is discarded.
function Parser:finish()
  self.buffer, self.data, self.data_n, self.event_type, self.id_buffer, self.skip_lf = "", {}, 0, "", nil, false
end

return M
