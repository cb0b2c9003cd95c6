-- Values as text for test reports: show(v) writes a Lua-like constructor (keys sorted, one line
-- when it fits, cut when long), equal(a, b) is deep equality, diff(expected, actual) lists where
-- two values differ by path, and clean(s) makes any string safe for JSON, XML and YAML.
local json = require "lunet.json"
local M = {}

local KEYWORDS = {}
for w in string.gmatch("and break do else elseif end false for function goto if in local nil not or repeat return then true until while", "%a+") do
  KEYWORDS[w] = true
end

local function is_identifier(k)
  return type(k) == "string" and string.match(k, "^[%a_][%w_]*$") ~= nil and not KEYWORDS[k]
end
M.is_identifier = is_identifier

-- Text ------------------------------------------------------------------------------------

--- `s` as valid UTF-8 without control characters other than tab and newline: bytes that are
--- not UTF-8 and control characters become \xNN, so reports stay readable and well-formed.
function M.clean(s)
  s = tostring(s)
  if utf8.len(s) == nil then
    local out, i, n = {}, 1, #s
    while i <= n do
      local c = string.byte(s, i)
      local len = c < 0x80 and 1 or (c >= 0xC2 and c <= 0xDF) and 2 or (c >= 0xE0 and c <= 0xEF) and 3
        or (c >= 0xF0 and c <= 0xF4) and 4 or nil
      local piece = len and string.sub(s, i, i + len - 1)
      if piece and #piece == len and utf8.len(piece) == 1 then
        out[#out + 1] = piece
        i = i + len
      else
        out[#out + 1] = string.format("\\x%02X", c)
        i = i + 1
      end
    end
    s = table.concat(out)
  end
  s = string.gsub(s, "\r\n", "\n")
  return (string.gsub(s, "[%z\1-\8\11-\31\127]", function(c) return string.format("\\x%02X", string.byte(c)) end))
end

--- Cuts `s` to at most `max` bytes (on a UTF-8 boundary) with a note of what was left out.
function M.cut(s, max)
  if #s <= max then return s end
  local stop = max
  while stop > 0 and string.byte(s, stop + 1) and string.byte(s, stop + 1) >= 0x80 and string.byte(s, stop + 1) < 0xC0 do
    stop = stop - 1
  end
  return string.sub(s, 1, stop) .. string.format("… (%d more bytes)", #s - stop)
end

local ESC = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }

--- A string as a one-line Lua literal; bytes that are not UTF-8 as \xNN.
local function quote(s, max)
  local cutoff
  if max and #s > max then
    cutoff = #s
    local stop = max
    while stop > 0 and (string.byte(s, stop + 1) or 0) >= 0x80 and string.byte(s, stop + 1) < 0xC0 do stop = stop - 1 end
    s = string.sub(s, 1, stop)
  end
  local body = string.gsub(s, '[%c"\\]', function(c) return ESC[c] or string.format("\\%03d", string.byte(c)) end)
  if utf8.len(body) == nil then
    body = M.clean(body)
  end
  local q = '"' .. body .. '"'
  if cutoff then q = q .. string.format("… (%d bytes)", cutoff) end
  return q
end
M.quote = quote

--- A number as the shortest text that reads back as the same number.
local function number(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
  local s
  for digits = 14, 17 do
    s = string.format("%." .. digits .. "g", v)
    if tonumber(s) == v then break end
  end
  if not string.find(s, "[%.eEn]") then s = s .. ".0" end
  return s
end

-- Objects lunet makes, told apart by their metatable's __name.
local function kind_of(v)
  local mt = getmetatable(v)
  if type(mt) == "table" then
    local name = rawget(mt, "__name")
    if type(name) == "string" then return name, mt end
  end
  return nil, mt
end

function M.is_response(v)
  return type(v) == "table" and (kind_of(v)) == "lunet.Response"
end

function M.is_error(v)
  return type(v) == "table" and (kind_of(v)) == "lunet.Error"
end

--- The response a value stands for: a response, or an error (or anything) carrying one.
function M.response_of(v)
  if M.is_response(v) then return v end
  if type(v) == "table" and not M.is_response(v) then
    local ok, r = pcall(function() return v.response end)
    if ok and M.is_response(r) then return r end
  end
  return nil
end

local function atom(v, max)
  local t = type(v)
  if t == "string" then return quote(v, max) end
  if t == "number" then return number(v) end
  if t == "nil" or t == "boolean" then return tostring(v) end
  if v == (json and json.null) then return "json.null" end
  local name, mt = kind_of(v)
  if name == "lunet.Response" then
    local ok, s = pcall(function()
      return string.format("<response %d %s: %s %s>", v.status, v.reason or "", v.request.method, v.request.url)
    end)
    return ok and s or "<response>"
  end
  if name == "lunet.Error" then
    return "<error " .. tostring(v) .. ">"
  end
  if t == "table" and not (type(mt) == "table" and rawget(mt, "__tostring")) then return nil end
  local ok, s = pcall(tostring, v)
  if not ok then s = t end
  if t == "function" then return "<function>" end
  return "<" .. s .. ">"
end

local TYPE_ORDER = { number = 1, string = 2, boolean = 3 }

local function sorted_keys(t)
  local keys = {}
  for k in next, t do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return (TYPE_ORDER[ta] or 9) < (TYPE_ORDER[tb] or 9) end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end
M.sorted_keys = sorted_keys

-- The length of the sequence part 1..n of t when every key up to n is there.
local function sequence_length(t)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  return n
end

local function key_text(k, max)
  if is_identifier(k) then return k end
  return "[" .. (atom(k, max) or "<table>") .. "]"
end

-- A table on one line, or nil when it would be longer than `room`. `seen` holds the tables
-- being shown (a cycle prints <cycle>).
local function oneline(x, room, depth, max_depth, seen)
  local a = atom(x, 200)
  if a then return (#a <= room) and a or nil end
  if seen[x] then return "<cycle>" end
  if depth > max_depth then return "{…}" end
  local n = sequence_length(x)
  local keys = sorted_keys(x)
  if #keys == 0 then return "{}" end
  seen[x] = true
  local parts, used = {}, 4
  for i = 1, n do
    local s = oneline(rawget(x, i), room - used, depth + 1, max_depth, seen)
    if not s then seen[x] = nil; return nil end
    parts[#parts + 1] = s
    used = used + #s + 2
  end
  for _, k in ipairs(keys) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      local s = oneline(rawget(x, k), room - used, depth + 1, max_depth, seen)
      if not s then seen[x] = nil; return nil end
      s = key_text(k, 60) .. " = " .. s
      parts[#parts + 1] = s
      used = used + #s + 2
    end
    if used > room then seen[x] = nil; return nil end
  end
  seen[x] = nil
  local s = "{ " .. table.concat(parts, ", ") .. " }"
  return (#s <= room) and s or nil
end

-- Text kept to its first `lines` lines, saying how many more there were (or that it was cut).
local function first_lines(s, lines, cut)
  local n, stop = 0, nil
  for pos in string.gmatch(s, "()\n") do
    n = n + 1
    if n == lines then stop = pos end
  end
  if stop and n > lines then
    s = string.sub(s, 1, stop) .. (cut and "… (cut)" or string.format("… (%d more lines)", n - lines + 1))
  end
  return s
end

--- A value as text. opts: width (one-line limit, 72), max (total length, 2000), depth (6),
--- lines (at most this many lines; all by default).
function M.show(v, opts)
  opts = opts or {}
  local width, max, max_depth = opts.width or 72, opts.max or 2000, opts.depth or 6
  local out, size, cut = {}, 0, false
  local seen = {}

  local function emit(s)
    if cut then return end
    if size + #s > max then
      out[#out + 1] = M.cut(s, math.max(0, max - size))
      cut = true
      return
    end
    out[#out + 1] = s
    size = size + #s
  end

  local function multiline(x, indent, depth)
    local a = atom(x, 400)
    if a then emit(a); return end
    if seen[x] then emit("<cycle>"); return end
    local one = oneline(x, width - #indent, depth, max_depth, seen)
    if one then emit(one); return end
    if depth > max_depth then emit("{…}"); return end
    seen[x] = true
    local inner = indent .. "  "
    local n = sequence_length(x)
    emit("{\n")
    for i = 1, n do
      if cut then break end
      emit(inner)
      multiline(rawget(x, i), inner, depth + 1)
      emit(",\n")
    end
    for _, k in ipairs(sorted_keys(x)) do
      if cut then break end
      if not (math.type(k) == "integer" and k >= 1 and k <= n) then
        emit(inner .. key_text(k, 60) .. " = ")
        multiline(rawget(x, k), inner, depth + 1)
        emit(",\n")
      end
    end
    emit(indent .. "}")
    seen[x] = nil
  end

  multiline(v, "", 1)
  local s = table.concat(out)
  if opts.lines then s = first_lines(s, opts.lines, cut) end
  return s
end

-- Equality -------------------------------------------------------------------------------

local function plain_table(v)
  if type(v) ~= "table" then return false end
  local name = kind_of(v)
  return name ~= "lunet.Response" and name ~= "lunet.Error"
end
M.plain_table = plain_table

--- Deep equality: tables by content (metatables ignored, cycles allowed), NaN equals NaN.
function M.equal(a, b)
  local assumed = {}
  local function eq(x, y)
    if x == y then return true end
    local tx, ty = type(x), type(y)
    if tx == "number" and ty == "number" then return x ~= x and y ~= y end
    if not (plain_table(x) and plain_table(y)) then return false end
    local pairs_seen = assumed[x]
    if pairs_seen and pairs_seen[y] then return true end
    if not pairs_seen then pairs_seen = {}; assumed[x] = pairs_seen end
    pairs_seen[y] = true
    for k, v in next, x do
      local w = rawget(y, k)
      if w == nil or not eq(v, w) then return false end
    end
    for k in next, y do
      if rawget(x, k) == nil then return false end
    end
    return true
  end
  return eq(a, b)
end

--- Where two strings first differ: "at byte N (line L, column C)" and the two lines there.
function M.string_difference(expected, actual)
  local n = math.min(#expected, #actual)
  local i = 1
  while i <= n and string.byte(expected, i) == string.byte(actual, i) do i = i + 1 end
  local before = string.sub(actual, 1, i - 1)
  local line = select(2, string.gsub(before, "\n", "")) + 1
  local column = i - (string.match(before, ".*()\n") or 0)
  local function line_at(s)
    local start = (string.match(string.sub(s, 1, i - 1), ".*()\n") or 0) + 1
    local stop = string.find(s, "\n", i, true) or (#s + 1)
    return string.sub(s, start, stop - 1)
  end
  local lines = { string.format("strings differ at byte %d (line %d, column %d)", i, line, column) }
  if i > n then
    if #expected > #actual then
      lines[#lines + 1] = "  actual ends there; expected goes on with " .. quote(string.sub(expected, i), 80)
    else
      lines[#lines + 1] = "  expected ends there; actual goes on with " .. quote(string.sub(actual, i), 80)
    end
  elseif string.find(expected, "\n", 1, true) or string.find(actual, "\n", 1, true) then
    lines[#lines + 1] = "  expected line: " .. quote(line_at(expected), 200)
    lines[#lines + 1] = "  actual line:   " .. quote(line_at(actual), 200)
  end
  return table.concat(lines, "\n")
end

--- How `actual` differs from `expected`: a list of "path: ..." lines (at most `limit`, 20),
--- for tables compared by content. Paths are Lua-like: items[1].id, ["a b"].
function M.diff(expected, actual, limit)
  limit = limit or 20
  local lines, more = {}, 0
  local function add(s)
    if #lines < limit then lines[#lines + 1] = s else more = more + 1 end
  end
  local function short(v) return M.show(v, { width = 60, max = 200 }) end
  local function path_of(prefix, k)
    if is_identifier(k) then return prefix == "" and k or (prefix .. "." .. k) end
    return prefix .. "[" .. (atom(k, 60) or "<table>") .. "]"
  end
  local visiting = {}
  local function walk(e, a, path)
    if M.equal(e, a) then return end
    if plain_table(e) and plain_table(a) and not visiting[e] then
      visiting[e] = true
      local keys, present = {}, {}
      for k in next, e do keys[#keys + 1] = k; present[k] = true end
      for k in next, a do if not present[k] then keys[#keys + 1] = k end end
      table.sort(keys, function(x, y)
        local tx, ty = type(x), type(y)
        if tx ~= ty then return (TYPE_ORDER[tx] or 9) < (TYPE_ORDER[ty] or 9) end
        if tx == "number" or tx == "string" then return x < y end
        return tostring(x) < tostring(y)
      end)
      for _, k in ipairs(keys) do
        local ev, av = rawget(e, k), rawget(a, k)
        local p = path_of(path, k)
        if av == nil then add(p .. ": missing (expected " .. short(ev) .. ")")
        elseif ev == nil then add(p .. ": not expected (got " .. short(av) .. ")")
        else walk(ev, av, p) end
      end
      visiting[e] = nil
      return
    end
    local where = path == "" and "value" or path
    local es, as = short(e), short(a)
    if es == as then es, as = es .. " (" .. type(e) .. ")", as .. " (" .. type(a) .. ")" end
    add(where .. ": expected " .. es .. ", got " .. as)
  end
  walk(expected, actual, "")
  if more > 0 then lines[#lines + 1] = string.format("… and %d more differences", more) end
  return lines
end

return M
