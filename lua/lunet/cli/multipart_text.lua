--- A multipart/form-data body as text, for --offline: what HTTPie prints there (the body itself,
--- files read), where a request that is sent has libcurl build it and stream file parts from
--- disk. Pure but for `read(path)`, passed in (a file's bytes, or nil and a message).
local M = {}

--- A boundary as HTTPie's: 32 hex digits, random (math.random: Lua 5.4 seeds it per state).
function M.boundary()
  local digits = {}
  for i = 1, 32 do digits[i] = string.format("%x", math.random(0, 15)) end
  return table.concat(digits)
end

local function quoted(s) return (s:gsub('[\\"]', "\\%0"):gsub("\r", "%%0D"):gsub("\n", "%%0A")) end

--- The body of `parts` (build.lua's: { name, data } or { name, file, content_type }) with
--- `boundary`; nil and a message when a file cannot be read.
function M.body(parts, boundary, read, type_of)
  local out = {}
  for _, p in ipairs(parts) do
    out[#out + 1] = "--" .. boundary .. "\r\n"
    if p.file then
      local bytes, err = read(p.file)
      if not bytes then return nil, string.format("'%s@%s': %s", p.name, p.file, err) end
      local filename = p.file:match("[^/]*$")
      out[#out + 1] = string.format('Content-Disposition: form-data; name="%s"; filename="%s"\r\n', quoted(p.name), quoted(filename))
      out[#out + 1] = "Content-Type: " .. (p.content_type or type_of(p.file) or "application/octet-stream") .. "\r\n\r\n"
      out[#out + 1] = bytes
    else
      out[#out + 1] = string.format('Content-Disposition: form-data; name="%s"\r\n\r\n', quoted(p.name))
      out[#out + 1] = p.data
    end
    out[#out + 1] = "\r\n"
  end
  out[#out + 1] = "--" .. boundary .. "--\r\n"
  return table.concat(out)
end

return M
