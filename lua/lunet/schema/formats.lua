-- The formats lunet.schema checks when formats are asserted (opts.formats): date, date-time
-- (RFC 3339), uuid, email (RFC 5321 mailbox), uri (RFC 3986, absolute), ipv4, ipv6, hostname
-- (RFC 1123, with xn-- labels decoded and checked as far as RFC 5892's exceptions and
-- contextual rules go without Unicode's tables), and OpenAPI's int32, int64, float, double,
-- byte (base64) and binary. Any other name is an annotation: never checked.
local hostname = require "lunet.schema.hostname"

local M = {}

local match, find, byte, tonumber, mtype = string.match, string.find, string.byte, tonumber, math.type

local DAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }

local function full_date(s)
  local y, m, d = match(s, "^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
  if not y then return false end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if m < 1 or m > 12 or d < 1 then return false end
  local leap = (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
  return d <= (m == 2 and leap and 29 or DAYS[m])
end

--- RFC 3339 full-time: hh:mm:ss[.frac] and Z or an offset; a leap second only at 23:59 UTC.
local function full_time(s)
  local h, mi, sec, rest = match(s, "^(%d%d):(%d%d):(%d%d)(.*)$")
  if not h then return false end
  rest = rest:gsub("^%.%d+", "", 1)
  local off = 0
  if rest ~= "Z" and rest ~= "z" then
    local sign, oh, om = match(rest, "^([+-])(%d%d):(%d%d)$")
    if not sign then return false end
    oh, om = tonumber(oh), tonumber(om)
    if oh > 23 or om > 59 then return false end
    off = (oh * 60 + om) * (sign == "+" and 1 or -1)
  end
  h, mi, sec = tonumber(h), tonumber(mi), tonumber(sec)
  if h > 23 or mi > 59 or sec > 60 then return false end
  if sec == 60 and ((h * 60 + mi - off) % 1440) ~= 23 * 60 + 59 then return false end
  return true
end

local function date_time(s)
  local d, t = match(s, "^(%d%d%d%d%-%d%d%-%d%d)[Tt](.*)$")
  return d ~= nil and full_date(d) and full_time(t)
end

local function ipv4(s)
  local a, b, c, d = match(s, "^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
  if not a then return false end
  for _, p in ipairs({ a, b, c, d }) do
    if #p > 3 or (#p > 1 and byte(p) == 48) or tonumber(p) > 255 then return false end
  end
  return true
end
M.ipv4 = ipv4

local function ipv6(s)
  if find(s, "[^%x:.]") then return false end
  local head, tail = s, nil
  local dc = find(s, "::", 1, true)
  if dc then
    head, tail = s:sub(1, dc - 1), s:sub(dc + 2)
    if find(tail, "::", 1, true) then return false end
  end
  local groups = 0
  local function part(p, last)
    if p == "" then return true end
    local items = {}
    for g in (p .. ":"):gmatch("([^:]*):") do items[#items + 1] = g end
    for i, g in ipairs(items) do
      if last and i == #items and find(g, ".", 1, true) then
        if not ipv4(g) then return false end
        groups = groups + 2
      elseif not match(g, "^%x%x?%x?%x?$") then
        return false
      else
        groups = groups + 1
      end
    end
    return true
  end
  if not part(head, tail == nil) or (tail and not part(tail, true)) then return false end
  if dc then return groups <= 7 end
  return groups == 8
end
M.ipv6 = ipv6

-- RFC 3986's character classes, for Lua patterns.
local UNRESERVED_SUB = "%w%-%._~!%$&'%(%)%*%+,;="

--- Whether every character of s is unreserved, a sub-delim, in `extra` or part of a %XX.
local function uri_chars(s, extra)
  if find(s, "%%") and find(s:gsub("%%%x%x", ""), "%%") then return false end
  return not find(s:gsub("%%%x%x", ""), "[^" .. UNRESERVED_SUB .. (extra or "") .. "]")
end

local function authority(a)
  local at = find(a, "@", 1, true)
  if at then
    if not uri_chars(a:sub(1, at - 1), ":") then return false end
    a = a:sub(at + 1)
  end
  local host, port
  if a:sub(1, 1) == "[" then
    local close = find(a, "]", 1, true)
    if not close then return false end
    host, port = a:sub(2, close - 1), a:sub(close + 1)
    if port ~= "" and not match(port, "^:%d*$") then return false end
    return ipv6(host) or match(host, "^[vV]%x+%.[" .. UNRESERVED_SUB .. ":]+$") ~= nil
  end
  host, port = match(a, "^(.-):(%d*)$")
  if not host then
    if find(a, ":", 1, true) then return false end
    host = a
  end
  return uri_chars(host)
end

local function uri(s)
  local scheme, rest = match(s, "^(%a[%w+.-]*):(.*)$")
  if not scheme then return false end
  local fragment
  local hash = find(rest, "#", 1, true)
  if hash then rest, fragment = rest:sub(1, hash - 1), rest:sub(hash + 1) end
  if fragment and not uri_chars(fragment, ":@/?") then return false end
  local q = find(rest, "?", 1, true)
  if q then
    if not uri_chars(rest:sub(q + 1), ":@/?") then return false end
    rest = rest:sub(1, q - 1)
  end
  if rest:sub(1, 2) == "//" then
    local slash = find(rest, "/", 3, true)
    if not authority(rest:sub(3, (slash or #rest + 1) - 1)) then return false end
    rest = slash and rest:sub(slash) or ""
  end
  return uri_chars(rest, ":@/")
end

--- RFC 5321: a dot-atom or quoted local part, then a host name or an address literal.
local function email(s)
  local loc, domain
  if byte(s) == 34 then   -- "quoted local part"
    local i = 2
    while i <= #s do
      local c = byte(s, i)
      if c == 92 then i = i + 1
      elseif c == 34 then break
      elseif c < 32 or c > 126 then return false end
      i = i + 1
    end
    if byte(s, i) ~= 34 or byte(s, i + 1) ~= 64 then return false end
    domain = s:sub(i + 2)
  else
    loc, domain = match(s, "^([^@]+)@(.*)$")
    if not loc or find(loc, "^%.") or find(loc, "%.$") or find(loc, "..", 1, true) then return false end
    if find(loc, "[^%w!#%$%%&'%*%+/=%?%^_`{|}~%.%-]") then return false end
  end
  local literal = match(domain, "^%[(.*)%]$")
  if literal then
    local v6 = match(literal, "^IPv6:(.*)$")
    if v6 then return ipv6(v6) end
    return ipv4(literal)
  end
  return hostname.check(domain)
end

local function uuid(s)
  return find(s, "^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") ~= nil
end

local function base64(s)
  if #s % 4 ~= 0 then return false end
  local body = s:gsub("==?$", "", 1)
  return not find(body, "[^%w%+/]")
end

local function in_range(lo, hi)
  return function(v)
    if mtype(v) == "integer" then return v >= lo and v <= hi end
    return v == math.floor(v) and v >= lo and v <= hi
  end
end

local INT64 = { kind = "number", text = "a 64-bit integer (int64)", check = function(v)
  if mtype(v) == "integer" then return true end
  return v == math.floor(v) and v >= -2 ^ 63 and v < 2 ^ 63
end }

local FORMATS = {
  date = { kind = "string", text = "a date (RFC 3339 full-date, YYYY-MM-DD)", check = full_date },
  ["date-time"] = { kind = "string", text = "a date-time (RFC 3339)", check = date_time },
  uuid = { kind = "string", text = "a UUID", check = uuid },
  email = { kind = "string", text = "an e-mail address", check = email },
  uri = { kind = "string", text = "an absolute URI (RFC 3986)", check = uri },
  ipv4 = { kind = "string", text = "an IPv4 address", check = ipv4 },
  ipv6 = { kind = "string", text = "an IPv6 address", check = ipv6 },
  hostname = { kind = "string", text = "a host name (RFC 1123)", check = hostname.check },
  int32 = { kind = "number", text = "a 32-bit integer (int32)", check = in_range(-2 ^ 31, 2 ^ 31 - 1) },
  int64 = INT64,
  float = { kind = "number", text = "a 32-bit float (float)", check = function(v) return v >= -3.4028234663852886e38 and v <= 3.4028234663852886e38 end },
  byte = { kind = "string", text = "base64 (byte)", check = base64 },
}
-- double and binary hold for every number and string: nothing to check

--- { kind = "string" | "number", text = "a date-time ...", check = fn(v) -> boolean }, or nil.
function M.get(name) return FORMATS[name] end

return M
