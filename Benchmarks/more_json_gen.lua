-- Writes a JSON document of about SIZE bytes for the JSON benchmark (f), the same bytes every
-- time for a given SIZE (a fixed-seed generator of its own, not math.random, so lua5.4 versions
-- agree): an object holding metadata and an array of records mixing nested objects, arrays,
-- strings with escapes (\" \\ \/ \n \t \r \b \f \uXXXX, a surrogate pair) and raw UTF-8,
-- integers (small, negative, 64-bit), floats (fixed, with exponents), booleans and null.
-- usage: lua5.4 more_json_gen.lua SIZE OUT    (SIZE in bytes; prints "bytes=<n> records=<n>")
local size, out = math.tointeger(tonumber(arg[1] or "")), arg[2]
assert(size and size > 0 and out, "usage: more_json_gen.lua SIZE OUT")

local lib = dofile((arg[0]:match("^(.*/)") or "") .. "more_lib.lua")
local rnd, pick = lib.generator()

local words = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
  "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra",
  "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "lunet", "swift", "curl" }
-- Pieces of JSON string contents, already escaped as JSON text.
local escaped = { [[\"quoted\"]], [[back\\slash]], [[a\/b]], [[line\nbreak]], [[tab\there]],
  [[cr\r]], [[\b\f]], [[caf\u00e9]], [[\u4e2d\u6587]], [[smile \ud83d\ude00]], "naïve", "Grüße",
  "日本語", "emoji 🎉", [[\u0001ctl]] }

local function text(nwords, escapes)
  local parts = {}
  for i = 1, nwords do
    if escapes and rnd(4) == 1 then parts[i] = pick(escaped) else parts[i] = pick(words) end
  end
  return table.concat(parts, " ")
end

local function float(scale, digits)
  return string.format("%." .. digits .. "f", (rnd(2000001) - 1000001) / 1000000 * scale)
end

local function record(id)
  local tags = {}
  for i = 1, rnd(6) do tags[i] = '"' .. pick(words) .. '"' end
  local scores = {}
  for i = 1, rnd(8) do
    local k = rnd(4)
    if k == 1 then scores[i] = tostring(rnd(1000))
    elseif k == 2 then scores[i] = tostring(-rnd(100000))
    elseif k == 3 then scores[i] = float(100, 3)
    else scores[i] = string.format("%d.%de%s%d", rnd(9), rnd(999), pick({ "-", "+", "" }), rnd(30)) end
  end
  local friends = {}
  for i = 1, rnd(4) - 1 do
    friends[i] = string.format('{"id":%d,"name":"%s %s","since":%d}', rnd(1000000), pick(words), pick(words),
      1500000000 + rnd(200000000))
  end
  return string.format(
    '{"id":%d,"guid":"%08x-%04x-%04x","active":%s,"balance":%s,"ratio":%s,"big":%d,"name":"%s",' ..
    '"about":"%s","tags":[%s],"scores":[%s],"location":{"lat":%s,"lon":%s,"alt":%s},' ..
    '"friends":[%s],"parent":%s,"matrix":[[%d,%d],[%d,%d]],"note":"%s"}',
    id, rnd(0x7fffffff), rnd(0xffff), rnd(0xffff), rnd(2) == 1 and "true" or "false",
    float(10000, 2), float(1, 6), rnd(0x7fffffff) * 4294967296 + rnd(0x7fffffff), text(2, false),
    text(8 + rnd(16), true), table.concat(tags, ","), table.concat(scores, ","),
    float(90, 6), float(180, 6), float(5000, 1), table.concat(friends, ","),
    rnd(3) == 1 and "null" or tostring(rnd(id)), rnd(10), rnd(10), rnd(10), rnd(10), text(rnd(3), true))
end

local head = string.format('{"generator":"more_json_gen.lua","size":%d,"version":1.5,"empty":{},"none":[],"items":[', size)
local parts, n, total = { head }, 0, #head + 2
while total < size do
  n = n + 1
  local r = record(n)
  parts[#parts + 1] = (n > 1 and "," or "") .. r
  total = total + #r + (n > 1 and 1 or 0)
end
parts[#parts + 1] = "]}"
local doc = table.concat(parts)
local f = assert(io.open(out, "wb"))
assert(f:write(doc))
assert(f:close())
print(string.format("bytes=%d records=%d", #doc, n))
