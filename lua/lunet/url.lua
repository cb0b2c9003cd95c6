-- URL helpers: percent-encoding, query strings, parsing and building (RFC 3986).
local errors = require "lunet.errors"

local M = {}

local function hex(c) return string.format("%%%02X", string.byte(c)) end

--- Percent-encodes everything but RFC 3986's unreserved characters.
function M.encode(s)
  if type(s) ~= "string" then
    if type(s) == "number" or type(s) == "boolean" then s = tostring(s)
    else errors.argument(1, "url.encode", "string expected, got " .. type(s)) end
  end
  return (string.gsub(s, "[^%w%-%._~]", hex))
end

--- Decodes %XX escapes (and "+" as a space when `plus` is true, as forms send it).
function M.decode(s, plus)
  if type(s) ~= "string" then errors.argument(1, "url.decode", "string expected, got " .. type(s)) end
  if plus then s = string.gsub(s, "+", " ") end
  return (string.gsub(s, "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

local function scalar(v, key)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then
    if math.type(v) == "float" and v == math.floor(v) and v > -2^53 and v < 2^53 then return string.format("%d", v) end
    return tostring(v)
  end
  if t == "boolean" then return tostring(v) end
  errors.argument(1, "url.query", "the value of '" .. tostring(key) .. "' is a " .. t .. "; use strings, numbers, booleans or lists of them")
end

--- A query string from a table: keys sorted (stable output), lists as repeated keys,
--- an ordered list of { name, value } pairs kept in its order.
function M.query(t)
  if type(t) == "string" then return t end
  if type(t) ~= "table" then errors.argument(1, "url.query", "table expected, got " .. type(t)) end
  local parts = {}
  if #t > 0 and type(t[1]) == "table" then
    for _, pair in ipairs(t) do
      parts[#parts + 1] = M.encode(tostring(pair[1])) .. "=" .. M.encode(scalar(pair[2], pair[1]))
    end
    return table.concat(parts, "&")
  end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local v = t[k]
    local name = M.encode(tostring(k))
    if type(v) == "table" then
      for _, item in ipairs(v) do parts[#parts + 1] = name .. "=" .. M.encode(scalar(item, k)) end
    else
      parts[#parts + 1] = name .. "=" .. M.encode(scalar(v, k))
    end
  end
  return table.concat(parts, "&")
end

--- Parses a query string into a table (repeated keys become lists).
function M.parse_query(s)
  local t = {}
  for pair in string.gmatch(s or "", "[^&]+") do
    local k, v = string.match(pair, "^([^=]*)=?(.*)$")
    k, v = M.decode(k, true), M.decode(v, true)
    local old = t[k]
    if old == nil then t[k] = v
    elseif type(old) == "table" then old[#old + 1] = v
    else t[k] = { old, v } end
  end
  return t
end

-- The host and port of an authority (after any "user:pass@"): an IP literal in brackets or a
-- name, then nothing or ":" and a port of digits, 0 to 65535, as WHATWG's URL parser and curl
-- accept it. Anything else raises: read leniently, it came back from build as another URL
-- (finding F3, docs/reliability.md).
local function host_and_port(hostport, s)
  local function bad(what, problem)
    errors.argument(1, "url.parse", "invalid " .. what .. " in '" .. s .. "': " .. problem)
  end
  local host, port
  if string.sub(hostport, 1, 1) == "[" then
    host, port = string.match(hostport, "^%[([^%[%]]*)%](.*)$")
    if not host then bad("IP literal", "no ']', or a '[' inside") end
    if port ~= "" and string.sub(port, 1, 1) ~= ":" then bad("authority", "'" .. port .. "' follows the IP literal") end
  else
    host, port = string.match(hostport, "^([^:]*)(.*)$")
    if string.find(host, "[%[%]]") then bad("host", "'[' or ']' outside an IP literal") end
  end
  port = string.sub(port, 2)
  if port == "" then return host, nil end
  if not string.match(port, "^%d+$") then bad("port", "'" .. port .. "' is not digits") end
  local n = tonumber(port)            -- a float when it has more digits than an integer holds
  if math.type(n) ~= "integer" or n > 65535 then bad("port", port .. " is above 65535") end
  return host, n
end

--- Splits a URL into scheme, user, password, host, port, path, query, fragment (and params,
--- the decoded query). Missing parts are nil. Raises an argument error when the authority has
--- no valid host and port (see host_and_port).
function M.parse(s)
  if type(s) ~= "string" then errors.argument(1, "url.parse", "string expected, got " .. type(s)) end
  local u = {}
  local rest = s
  rest = string.gsub(rest, "#(.*)$", function(f) u.fragment = f; return "" end)
  rest = string.gsub(rest, "%?(.*)$", function(q) u.query = q; return "" end)
  rest = string.gsub(rest, "^([%a][%w+%-.]*):", function(sc) u.scheme = string.lower(sc); return "" end)
  local authority, path = string.match(rest, "^//([^/]*)(.*)$")
  if authority then
    local userinfo, hostport = string.match(authority, "^(.*)@(.*)$")
    if userinfo then
      local user, pass = string.match(userinfo, "^([^:]*):(.*)$")
      u.user = M.decode(user or userinfo)
      u.password = pass and M.decode(pass) or nil
    else
      hostport = authority
    end
    u.host, u.port = host_and_port(hostport, s)
    rest = path
  end
  u.path = rest
  if u.query then u.params = M.parse_query(u.query) end
  return u
end

--- scheme://host:port of an absolute http(s) or other URL, lower-cased, with the scheme's
--- default port (80, 443) filled in; nil for a relative reference. For deciding whether two
--- URLs are one origin (where credentials may go), not for sending.
function M.origin(u)
  local scheme, authority = tostring(u):match("^(%a[%w+.-]*)://([^/?#]*)")
  if not scheme then return nil end
  scheme, authority = scheme:lower(), authority:gsub("^.*@", ""):lower()
  if not authority:match(":%d+$") then authority = authority .. (scheme == "https" and ":443" or ":80") end
  return scheme .. "://" .. authority
end

--- Builds a URL from the parts `parse` returns (`params` wins over `query`). Path, query and
--- fragment are written as given (percent-encoded already, as parse returns them); a path
--- that would read back as an authority or a scheme gets "/." or "./" before it.
function M.build(u)
  if type(u) ~= "table" then errors.argument(1, "url.build", "table expected, got " .. type(u)) end
  local s = ""
  if u.scheme then s = u.scheme .. ":" end
  local path = u.path or ""
  if u.host then
    s = s .. "//"
    if u.user then
      s = s .. M.encode(u.user)
      if u.password then s = s .. ":" .. M.encode(u.password) end
      s = s .. "@"
    end
    local bracket = string.find(u.host, ":", 1, true) and string.sub(u.host, 1, 1) ~= "["   -- IPv6
    s = s .. (bracket and ("[" .. u.host .. "]") or u.host)
    if u.port then
      local port = u.port
      if type(port) == "string" and string.match(port, "^%d+$") then port = tonumber(port) end
      port = type(port) == "number" and math.tointeger(port)
      if not port or port < 0 or port > 65535 then
        errors.argument(1, "url.build", "port must be an integer from 0 to 65535, got " .. tostring(u.port))
      end
      s = s .. ":" .. port
    end
    if path ~= "" and string.sub(path, 1, 1) ~= "/" then path = "/" .. path end
  elseif string.sub(path, 1, 2) == "//" then
    -- Without an authority, "//" would read back as one (RFC 3986 §3.3): "/." before it is
    -- the same path once dot segments are removed.
    path = "/." .. path
  elseif not u.scheme and string.match(path, "^[%a][%w+%-.]*:") then
    -- A first segment with a colon would read back as a scheme (RFC 3986 §4.2).
    path = "./" .. path
  end
  s = s .. path
  local q = u.params and M.query(u.params) or u.query
  if q and q ~= "" then s = s .. "?" .. q end
  if u.fragment then s = s .. "#" .. u.fragment end
  return s
end

--- `base` with `query` (a table or string) appended to its query string.
function M.with_query(base, query)
  local q = M.query(query)
  if q == "" then return base end
  local hash = string.find(base, "#", 1, true)
  local fragment = ""
  if hash then fragment = string.sub(base, hash); base = string.sub(base, 1, hash - 1) end
  local sep = string.find(base, "?", 1, true) and (string.sub(base, -1) == "?" and "" or "&") or "?"
  return base .. sep .. q .. fragment
end

return M
