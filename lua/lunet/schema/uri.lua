-- URI references as JSON Schema uses them to name schemas ($id, $ref, $schema): resolving a
-- reference against a base (RFC 3986 section 5.2, with its dot-segment removal), splitting off
-- the fragment, and JSON pointers (RFC 6901) in both directions. Schemas are named by strings,
-- compared as written once resolved: no case or percent-encoding normalisation beyond dropping
-- an empty fragment, which is what the JSON Schema specification asks.
local M = {}

--- scheme, authority, path, query, fragment of a URI reference (nil for absent parts).
function M.split(s)
  local scheme, rest = s:match("^([%a][%w+.-]*):(.*)$")
  if not scheme then rest = s end
  local fragment
  local hash = rest:find("#", 1, true)
  if hash then rest, fragment = rest:sub(1, hash - 1), rest:sub(hash + 1) end
  local query
  local q = rest:find("?", 1, true)
  if q then rest, query = rest:sub(1, q - 1), rest:sub(q + 1) end
  local authority
  if rest:sub(1, 2) == "//" then
    local slash = rest:find("/", 3, true)
    authority = rest:sub(3, (slash or #rest + 1) - 1)
    rest = slash and rest:sub(slash) or ""
  end
  return scheme, authority, rest, query, fragment
end

local function remove_dot_segments(path)
  local out = {}
  local input = path
  while #input > 0 do
    if input:sub(1, 3) == "../" then input = input:sub(4)
    elseif input:sub(1, 2) == "./" then input = input:sub(3)
    elseif input:sub(1, 3) == "/./" then input = input:sub(3)
    elseif input == "/." then input = "/"
    elseif input:sub(1, 4) == "/../" or input == "/.." then
      input = input == "/.." and "/" or input:sub(4)
      out[#out] = nil
    elseif input == "." or input == ".." then input = ""
    else
      local seg = input:match("^/?[^/]*")
      out[#out + 1] = seg
      input = input:sub(#seg + 1)
    end
  end
  return table.concat(out)
end

local function join(scheme, authority, path, query, fragment)
  local t = {}
  if scheme then t[#t + 1] = scheme .. ":" end
  if authority then t[#t + 1] = "//" .. authority end
  t[#t + 1] = path
  if query then t[#t + 1] = "?" .. query end
  if fragment then t[#t + 1] = "#" .. fragment end
  return table.concat(t)
end

--- `ref` resolved against `base` (either may be relative; an empty base leaves ref as it is).
function M.resolve(base, ref)
  local rs, ra, rp, rq, rf = M.split(ref)
  if rs then return join(rs, ra, remove_dot_segments(rp), rq, rf) end
  if base == nil or base == "" then return ref end
  local bs, ba, bp, bq = M.split(base)
  local s, a, p, q = bs, ba, nil, nil
  if ra then
    a, p, q = ra, remove_dot_segments(rp), rq
  elseif rp == "" then
    p, q = bp, rq or bq
  else
    if rp:sub(1, 1) == "/" then
      p = remove_dot_segments(rp)
    elseif ba and bp == "" then
      p = remove_dot_segments("/" .. rp)
    else
      local dir = bp:match("^(.*/)") or ""
      p = remove_dot_segments(dir .. rp)
    end
    q = rq
  end
  return join(s, a, p, q, rf)
end

--- The URI without its fragment, and the fragment ("" when there is none).
function M.strip(u)
  local hash = u:find("#", 1, true)
  if not hash then return u, "" end
  return u:sub(1, hash - 1), u:sub(hash + 1)
end

--- A URI as schemas are keyed: resolved, with an empty fragment dropped.
function M.normalize(u)
  if u:sub(-1) == "#" then return u:sub(1, -2) end
  return u
end

local function unescape_pct(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- The tokens of a JSON pointer written in a URI fragment ("/a~1b/0" -> { "a/b", "0" }), or
--- nil when the fragment is not a pointer (a plain-name anchor).
function M.pointer_tokens(fragment)
  fragment = unescape_pct(fragment)
  if fragment == "" then return {} end
  if fragment:sub(1, 1) ~= "/" then return nil end
  local out = {}
  for tok in (fragment:sub(2) .. "/"):gmatch("([^/]*)/") do
    out[#out + 1] = (tok:gsub("~1", "/"):gsub("~0", "~"))
  end
  return out
end

local function escape_token(k)
  return (tostring(k):gsub("~", "~0"):gsub("/", "~1"))
end
M.escape_token = escape_token

--- A pointer with one more token: pointer .. "/" .. escaped token.
function M.child(pointer, token) return pointer .. "/" .. escape_token(token) end

return M
