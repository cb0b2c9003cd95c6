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
-- A line that has not ended is kept as a list of pieces, joined once when its end arrives:
-- joining and scanning it again on every piece was quadratic (20 MiB in 1 KiB pieces took
-- 15 s of CPU). Work is linear in the bytes fed.
--
-- Memory: an event (its data lines and the line still arriving) holds at most `max_event`
-- bytes (16 MiB unless given); past that feed raises kind too_large. Without a bound a server
-- that never sends the blank line grows the event until memory runs out.
local find, byte, sub, concat = string.find, string.byte, string.sub, table.concat
local errors = require "lunet.errors"

local M = {}

M.DEFAULT_MAX_EVENT = 16 * 1024 * 1024

local Parser = {}
Parser.__index = Parser

local BOM = "\239\187\191"
-- A line: the field (up to a colon or the line's end), the colon and one space if present, the
-- value. A line without a colon leaves the value empty (the whole line is the field); a line
-- starting with a colon has an empty field and is a comment; an empty line matches nothing.
local LINE = "^([^:\r\n]*):? ?([^\r\n]*)"

function M.new(max_event)
  return setmetatable({
    buffer = "",          -- the first bytes, while they may still be a BOM
    partial = nil,        -- the pieces of an unfinished line (a list), nil when none
    partial_len = 0,
    skip_lf = false,      -- the last piece ended in CR: a LF starting the next one is that line's end
    at_start = true,      -- a BOM is dropped only at the very start of the stream
    data = {}, data_n = 0, data_bytes = 0, event_type = "", id_buffer = nil,
    last_event_id = "",   -- kept across events (and reconnects: the client sends it back)
    retry = nil,          -- the last valid `retry` value, in milliseconds
    max_event = max_event or M.DEFAULT_MAX_EVENT,
  }, Parser)
end

local function too_large(self)
  error(errors.new("too_large", string.format("an event is larger than max_event (%d bytes): the server sent no blank line to end it",
    self.max_event)), 0)
end

-- The text a piece makes ready to be read line by line: after a BOM at the very start, after
-- the LF of a CRLF split between pieces, joined to the unfinished line before it. Nil when
-- there is no line end yet (the piece is kept).
local function ready_text(self, piece)
  if self.at_start and piece ~= "" then
    local text = self.buffer .. piece
    if #text < 3 and sub(BOM, 1, #text) == text then
      self.buffer = text      -- too short to tell whether it is a BOM
      return nil
    end
    self.at_start = false
    if sub(text, 1, 3) == BOM then text = sub(text, 4) end
    self.buffer, piece = "", text
  end
  if self.skip_lf then
    self.skip_lf = false
    if byte(piece, 1) == 10 then piece = sub(piece, 2) end
  end
  local partial = self.partial
  if not partial then return piece end
  partial[#partial + 1] = piece
  if not find(piece, "[\r\n]") then
    -- Still no line end: keep the piece, look at nothing again.
    self.partial_len = self.partial_len + #piece
    if self.data_bytes + self.partial_len > self.max_event then too_large(self) end
    return nil
  end
  self.partial, self.partial_len = nil, 0
  return concat(partial)
end

--- Feeds a piece of the body; returns the list of events it completed (possibly empty).
--- Raises kind too_large when the event being received passes max_event bytes.
--- The loop over lines is one function on purpose: the event being built lives in locals
--- while a piece is read (a field is one table store, not a call and a store in self).
function Parser:feed(piece)
  local out, n_out = {}, 0
  local text = ready_text(self, piece)
  if not text then return out end
  local len = #text
  local data, data_n, data_bytes, event_type, id_buffer = self.data, self.data_n, self.data_bytes, self.event_type, self.id_buffer
  local max_event = self.max_event
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
      data_bytes = 0
      event_type = ""
    elseif field == "data" then
      data_n = data_n + 1
      data[data_n] = value
      data_bytes = data_bytes + #value + 1
      if data_bytes > max_event then
        self.data, self.data_n, self.data_bytes = {}, 0, 0
        too_large(self)
      end
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
  self.data, self.data_n, self.data_bytes, self.event_type, self.id_buffer = data, data_n, data_bytes, event_type, id_buffer
  if pos <= len then
    self.partial, self.partial_len = { sub(text, pos) }, len - pos + 1
    if data_bytes + self.partial_len > max_event then too_large(self) end
  end
  return out
end

--- The stream ended: what is left is an unfinished event, which is discarded.
function Parser:finish()
  self.buffer, self.data, self.data_n, self.data_bytes, self.event_type, self.id_buffer, self.skip_lf = "", {}, 0, 0, "", nil, false
  self.partial, self.partial_len = nil, 0
end

return M
