-- Image facts from the first bytes of a file: format, width and height for PNG, JPEG, GIF and
-- WebP. Pure string work; the bytes are kept as they are.
local errors = require "lunet.errors"

local M = {}
local unpack = string.unpack

local function png(b)
  -- signature, then the IHDR chunk: length, "IHDR", width, height (big-endian)
  if #b < 24 or b:sub(13, 16) ~= "IHDR" then return nil, "a PNG without its IHDR header" end
  local w, h = unpack(">I4I4", b, 17)
  return w, h
end

local function gif(b)
  if #b < 10 then return nil, "a GIF cut off before its size" end
  local w, h = unpack("<I2I2", b, 7)
  return w, h
end

local function jpeg(b)
  -- walk the segments to the first start-of-frame marker (SOF0..SOF15 but DHT, JPG, DAC)
  local i = 3
  while i + 3 <= #b do
    if b:byte(i) ~= 0xFF then return nil, string.format("a JPEG with a broken segment at byte %d", i) end
    local marker = b:byte(i + 1)
    if marker == 0xFF then
      i = i + 1                                   -- fill byte
    elseif marker == 0xD8 or marker == 0x01 or (marker >= 0xD0 and marker <= 0xD7) then
      i = i + 2                                   -- markers without a length
    else
      if i + 3 > #b then break end
      local len = unpack(">I2", b, i + 2)
      if marker >= 0xC0 and marker <= 0xCF and marker ~= 0xC4 and marker ~= 0xC8 and marker ~= 0xCC then
        if i + 8 > #b then break end
        local h, w = unpack(">I2I2", b, i + 5)
        return w, h
      end
      i = i + 2 + len
    end
  end
  return nil, "a JPEG without a frame header"
end

local function webp(b)
  local chunk = b:sub(13, 16)
  if chunk == "VP8 " and #b >= 30 then
    local w, h = unpack("<I2I2", b, 27)
    return w & 0x3FFF, h & 0x3FFF
  elseif chunk == "VP8L" and #b >= 25 then
    local bits = unpack("<I4", b, 22)
    return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
  elseif chunk == "VP8X" and #b >= 30 then
    local w = unpack("<I3", b, 25)
    local h = unpack("<I3", b, 28)
    return w + 1, h + 1
  end
  return nil, "a WebP without a known image chunk"
end

--- { format = "png" | "jpeg" | "gif" | "webp", width, height, bytes }, or raises kind decode.
function M.decode(bytes)
  if type(bytes) ~= "string" then errors.argument(1, "image.decode", "string expected, got " .. type(bytes)) end
  local format, w, h, problem
  if bytes:sub(1, 8) == "\137PNG\r\n\26\n" then format = "png"; w, h = png(bytes)
  elseif bytes:sub(1, 3) == "\255\216\255" then format = "jpeg"; w, h = jpeg(bytes)
  elseif bytes:sub(1, 6) == "GIF87a" or bytes:sub(1, 6) == "GIF89a" then format = "gif"; w, h = gif(bytes)
  elseif bytes:sub(1, 4) == "RIFF" and bytes:sub(9, 12) == "WEBP" then format = "webp"; w, h = webp(bytes)
  else
    errors.raise("decode", "image: not a PNG, JPEG, GIF or WebP (starts with " .. string.format("%q", bytes:sub(1, 8)) .. ")")
  end
  if not w then
    problem = h
    errors.raise("decode", "image: " .. problem)
  end
  return { format = format, width = w, height = h, bytes = bytes }
end

return M
