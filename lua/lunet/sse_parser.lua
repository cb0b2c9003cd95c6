-- The WHATWG event-stream format (HTML, "Server-sent events", "Parsing an event stream"), as a
-- pure incremental parser: feed it pieces of a body as they arrive, get events back. No I/O.
--
--   local p = sse_parser.new()
--   for _, ev in ipairs(p:feed(piece)) do ... end   -- ev = { type =, data =, id =, retry = }
--
-- Lines end in CR, LF or CRLF, and a CRLF may be split across two pieces; a leading BOM is
-- dropped once; fields may be split anywhere. An event without its closing blank line when the
-- stream ends is discarded, as the standard says.
local M = {}

local Parser = {}
Parser.__index = Parser

function M.new()
  return setmetatable({
    buffer = "",          -- bytes of an unfinished line
    skip_lf = false,      -- the last piece ended in CR: a LF starting the next one is that line's end
    at_start = true,      -- a BOM is dropped only at the very start of the stream
    data = {}, event_type = "", id_buffer = nil,
    last_event_id = "",   -- kept across events (and reconnects: the client sends it back)
    retry = nil,          -- the last valid `retry` value, in milliseconds
  }, Parser)
end

-- One complete line (without its end).
function Parser:line(text, out)
  if text == "" then
    -- Dispatch: the id seen in this event becomes the last event id even with no data.
    if self.id_buffer ~= nil then self.last_event_id = self.id_buffer end
    self.id_buffer = nil
    if #self.data > 0 then
      out[#out + 1] = { type = self.event_type ~= "" and self.event_type or "message",
                        data = table.concat(self.data, "\n"), id = self.last_event_id }
    end
    self.data, self.event_type = {}, ""
    return
  end
  if text:byte(1) == 58 then return end   -- ":" a comment
  local field, value
  local colon = text:find(":", 1, true)
  if colon then
    field, value = text:sub(1, colon - 1), text:sub(colon + 1)
    if value:byte(1) == 32 then value = value:sub(2) end   -- one leading space is not the value's
  else
    field, value = text, ""
  end
  if field == "data" then
    self.data[#self.data + 1] = value
  elseif field == "event" then
    self.event_type = value
  elseif field == "id" then
    if not value:find("\0", 1, true) then self.id_buffer = value end
  elseif field == "retry" then
    if value:match("^%d+$") then self.retry = tonumber(value) end
  end
  -- any other field is ignored
end

--- Feeds a piece of the body; returns the list of events it completed (possibly empty).
function Parser:feed(piece)
  local out = {}
  if self.at_start and piece ~= "" then
    local text = self.buffer .. piece
    if #text < 3 and ("\239\187\191"):sub(1, #text) == text then
      self.buffer = text      -- too short to tell whether it is a BOM
      return out
    end
    self.at_start = false
    if text:sub(1, 3) == "\239\187\191" then text = text:sub(4) end
    self.buffer, piece = "", text
  end
  if self.skip_lf then
    self.skip_lf = false
    if piece:byte(1) == 10 then piece = piece:sub(2) end
  end
  local text = self.buffer .. piece
  local pos = 1
  while true do
    local s, e = text:find("[\r\n]", pos)
    if not s then break end
    self:line(text:sub(pos, s - 1), out)
    if text:byte(s) == 13 then
      if s == #text then
        self.skip_lf = true   -- the LF of a CRLF may come in the next piece
      elseif text:byte(s + 1) == 10 then
        e = s + 1
      end
    end
    pos = e + 1
  end
  self.buffer = text:sub(pos)
  return out
end

--- The stream ended: what is left is an unfinished event, which is discarded.
function Parser:finish()
  self.buffer, self.data, self.event_type, self.id_buffer, self.skip_lf = "", {}, "", nil, false
end

return M
