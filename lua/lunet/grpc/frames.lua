--- gRPC's length-prefixed messages (the gRPC over HTTP/2 protocol): each message goes as one
--- byte (1 when compressed), four bytes of length (big-endian), then the message. A reader takes
--- a body in pieces as they arrive and gives whole messages; a message longer than `max`
--- (gRPC's 4 MiB by default) is refused before it is read, never buffered.
local errors = require "lunet.errors"

local M = {}

M.DEFAULT_MAX = 4 * 1024 * 1024

--- One message framed.
function M.frame(bytes, compressed)
  return string.pack(">BI4", compressed and 1 or 0, #bytes) .. bytes
end

-- The checked length prefix at `pos` of `s`: its length and whether it is compressed.
local function prefix(s, pos, max)
  local flag, length = string.unpack(">BI4", s, pos)
  if flag > 1 then errors.raise("protocol", string.format("a gRPC message's first byte is %d, not 0 or 1: the server is not speaking gRPC", flag)) end
  if length > max then
    errors.raise("too_large", string.format("a gRPC message of %d bytes is over the limit of %d (max_message)", length, max), { limit = max })
  end
  return length, flag == 1
end

--- The messages of a whole body (a unary answer), as the reader gives them: one pass over the
--- string, no buffering; raises as the reader does for a message over `max` or cut short.
function M.messages(body, max)
  max = max or M.DEFAULT_MAX
  local out, pos, n = {}, 1, #body
  while pos <= n do
    if n - pos + 1 < 5 then
      errors.raise("protocol", string.format("the response ended inside a gRPC message (%d bytes of it missing)", 5 - (n - pos + 1)))
    end
    local length, compressed = prefix(body, pos, max)
    if n - pos + 1 - 5 < length then
      errors.raise("protocol", string.format("the response ended inside a gRPC message (%d bytes of it missing)", length - (n - pos + 1 - 5)))
    end
    out[#out + 1] = { bytes = body:sub(pos + 5, pos + 4 + length), compressed = compressed }
    pos = pos + 5 + length
  end
  return out
end

--- A reader: reader:feed(piece) returns the whole messages it completes, a list of
--- { bytes, compressed }; reader:finish() raises if a message was cut short. A piece is kept as
--- it came until the message waited for is complete (a 16 MB message in 16 KB pieces is joined
--- once); then the joined bytes are read with a position, so that many small messages in one
--- piece cost what the piece holds (reading each out of the rest of the piece copied that rest
--- every time: 64 KiB pieces of 1-byte messages cost 16 times what 4 KiB pieces did).
function M.reader(max)
  max = max or M.DEFAULT_MAX
  local pending, buffered = {}, 0   -- the unread pieces, and how many bytes they hold
  local need, compressed            -- the length of the message whose prefix has been read
  local r = {}
  function r:feed(piece)
    pending[#pending + 1] = piece
    buffered = buffered + #piece
    local out = {}
    if buffered < (need or 5) then return out end
    local s = #pending == 1 and pending[1] or table.concat(pending)
    local pos, n = 1, #s
    while true do
      if not need then
        if n - pos + 1 < 5 then break end
        need, compressed = prefix(s, pos, max)
        pos = pos + 5
      end
      if n - pos + 1 < need then break end
      out[#out + 1] = { bytes = s:sub(pos, pos + need - 1), compressed = compressed }
      pos = pos + need
      need = nil
    end
    local rest = pos == 1 and s or s:sub(pos)
    pending = rest == "" and {} or { rest }
    buffered = #rest
    return out
  end
  function r:finish()
    if need or buffered > 0 then
      errors.raise("protocol", string.format("the response ended inside a gRPC message (%d bytes of it missing)", (need or 5) - buffered))
    end
  end
  return r
end

return M
