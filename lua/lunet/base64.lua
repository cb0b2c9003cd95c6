--- Base64 (RFC 4648), one place for lunet's uses: HAR bodies, Basic credentials, Kubernetes
--- binaryData, gRPC's -bin metadata and status details.
local M = {}

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local VALUE = {}
for i = 1, #B64 do VALUE[B64:byte(i)] = i - 1 end
VALUE[("-"):byte()], VALUE[("_"):byte()] = 62, 63   -- the URL alphabet reads too

--- `s` encoded, padded with "=".
function M.encode(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = string.byte(s, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local c1, c2 = (n >> 18) & 63, (n >> 12) & 63
    local c3, c4 = (n >> 6) & 63, n & 63
    out[#out + 1] = string.sub(B64, c1 + 1, c1 + 1) .. string.sub(B64, c2 + 1, c2 + 1) ..
      (b and string.sub(B64, c3 + 1, c3 + 1) or "=") .. (c and string.sub(B64, c4 + 1, c4 + 1) or "=")
  end
  return table.concat(out)
end

--- `s` decoded (padded or not, either alphabet, whitespace ignored); nil for anything else.
function M.decode(s)
  s = s:gsub("[=%s]", "")
  local out, bits, n = {}, 0, 0
  for i = 1, #s do
    local v = VALUE[s:byte(i)]
    if not v then return nil end
    bits, n = ((bits << 6) | v) & 0xFFFFFF, n + 6
    if n >= 8 then
      n = n - 8
      out[#out + 1] = string.char((bits >> n) & 0xFF)
    end
  end
  return table.concat(out)
end

return M
