-- JSON decode and encode speed on one document, in-process, timed with os.clock().
-- usage: lunet more_json.lua FILE [SECONDS [GC]]              (json.decode / json.encode)
--        lua5.4 more_json.lua FILE [SECONDS [GC]]             (lua-cjson: cjson.decode / cjson.encode)
--   SECONDS: the least CPU time each measure runs for (default 0.5); whole calls only
--   GC: "default" (leave the collector as the host set it), "incremental" or "generational"
-- decode: the document's bytes -> Lua tables, again and again;
-- encode: the tables decoded once -> JSON text, again and again.
-- Prints one line per measure:
--   "<decode|encode> codec=<name> bytes=<input bytes> out=<bytes> reps=<n> cpu=<s>"
-- (out: the length of what one call produced, the encoded text for encode).
local path = arg[1]
local seconds = tonumber(arg[2] or "0.5")
local gc = arg[3] or "default"
assert(path and seconds and seconds > 0, "usage: more_json.lua FILE [SECONDS [GC]]")
assert(gc == "default" or gc == "incremental" or gc == "generational", "GC is default, incremental or generational")
if gc ~= "default" then collectgarbage(gc) end

local codec, decode, encode
-- A plain read, not rawget: lunet provides its globals lazily (on first use), and lua5.4 has none.
local lunet_json = json
if type(lunet_json) == "table" and lunet_json.decode and lunet_json.null then
  codec, decode, encode = "lunet", lunet_json.decode, lunet_json.encode
else
  local cjson = require "cjson"
  codec, decode, encode = "cjson", cjson.decode, cjson.encode
end

local f = assert(io.open(path, "rb"))
local doc = f:read("a")
f:close()

-- A sanity check that both codecs read the document the same way: the items array and its
-- first record, and a round trip that decodes again to as many items.
local value = decode(doc)
assert(type(value) == "table" and type(value.items) == "table" and #value.items > 0, "no items array")
local first = value.items[1]
assert(first.id == 1 and type(first.about) == "string", "unexpected first record")
local text = encode(value)
local again = decode(text)
assert(#again.items == #value.items, "the round trip lost items")
again = nil

local lib = dofile((arg[0]:match("^(.*/)") or "") .. "more_lib.lua")
lib.measure("decode", codec, decode, doc, #doc, seconds)
lib.measure("encode", codec, encode, value, #doc, seconds)
