-- The file name `lunet -d` saves to: the server's (Content-Disposition, RFC 6266) when it gives
-- one, else the URL's last path segment; never a path outside the current folder, never a
-- file that is already there (a `-1`, `-2`... suffix instead).
local url = require "lunet.url"

local M = {}

-- The name a server suggests, made safe: its last path segment (a server must not choose the
-- folder), no control characters, no leading dots (no hidden file, no "..") — what HTTPie
-- keeps too. nil when nothing usable is left.
local function safe(name)
  name = name:match("([^/\\]*)$"):gsub("%c", ""):gsub("^[%s.]+", ""):gsub("%s+$", "")
  if name == "" then return nil end
  if #name > 255 then name = name:sub(1, 255) end
  return name
end

-- Parameters of a Content-Disposition value: lower-case name -> value (quoted strings unquoted).
local function parameters(value)
  local params, pos = {}, value:find(";") or #value + 1
  while pos <= #value do
    local name, after = value:match("^;%s*([^=;%s]+)%s*=%s*()", pos)
    if not name then
      pos = (value:find(";", pos + 1) or #value + 1)
    else
      local v
      if value:sub(after, after) == '"' then
        local parts, i = {}, after + 1
        while i <= #value do
          local c = value:sub(i, i)
          if c == "\\" then parts[#parts + 1] = value:sub(i + 1, i + 1); i = i + 2
          elseif c == '"' then i = i + 1; break
          else parts[#parts + 1] = c; i = i + 1 end
        end
        v, pos = table.concat(parts), i
      else
        v = value:match("^[^;]*", after):gsub("%s+$", "")
        pos = after + #v
      end
      params[name:lower()] = params[name:lower()] or v
      pos = value:find(";", pos) or #value + 1
    end
  end
  return params
end

--- The file name a Content-Disposition value gives, or nil. `filename*` (RFC 8187:
--- charset'language'percent-encoded; UTF-8 taken as is) comes before `filename`.
function M.from_content_disposition(value)
  if type(value) ~= "string" then return nil end
  local p = parameters(value)
  local extended = p["filename*"]
  if extended then
    local charset, encoded = extended:match("^([^']*)'[^']*'(.*)$")
    if charset and (charset:lower() == "utf-8" or charset:lower() == "iso-8859-1" and not encoded:find("%%[89a-fA-F]")) then
      local name = safe(url.decode(encoded))
      if name then return name end
    end
  end
  return p.filename and safe(p.filename) or nil
end

local function exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

--- A name for `name` that no file has yet: the name itself, or with -1, -2... after it.
--- `resume`: the name as it is (the download continues that file).
function M.untaken(name, resume)
  if resume or not exists(name) then return name end
  for i = 1, 1000 do
    local candidate = name .. "-" .. i
    if not exists(candidate) then return candidate end
  end
  return name
end

--- The name the URL suggests: its last path segment, decoded ("index.html" for none).
function M.from_url(u)
  local path = (u:match("^%a[%w+.-]*://[^/?#]*([^?#]*)") or ""):gsub("/+$", "")
  local name = path:match("([^/]+)$") or "index.html"
  return safe(url.decode(name)) or "index.html"
end

return M
