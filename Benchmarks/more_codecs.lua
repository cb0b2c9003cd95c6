-- XML and protobuf decode and encode speed on one document, in-process, timed with os.clock()
-- (the codecs benchmark (j); more_json.lua is its JSON twin).
-- usage: lunet more_codecs.lua CODEC FILE SECONDS [DESCRIPTOR_SET]
--   CODEC: xml            xml.decode(FILE's bytes) / xml.encode(the element)
--          protobuf       protobuf.decode(bytes) / protobuf.encode(t): no schema, default options
--                         (nested messages stay strings)
--          protobuf_guess protobuf.decode(bytes, { guess = true }) / protobuf.encode(t): no schema,
--                         every nested message opened
--          schema         schema:decode(bytes, "lunet.bench.Catalog") / schema:encode(t, ...),
--                         the schema loaded from DESCRIPTOR_SET (more_codecs.proto)
--   SECONDS: the least CPU time each measure runs for; whole calls only
-- decode: the document's bytes -> Lua tables, again and again;
-- encode: the tables decoded once -> bytes, again and again.
-- Prints one line per measure: "<decode|encode> codec=<CODEC> bytes=<input bytes> out=<bytes> reps=<n> cpu=<s>"
-- (out: the length of what one encode produced). Runs in any lunet since the codecs came (the
-- baseline build of codecs.sh included): globals only, no newer API.
local codec, path, seconds, descriptors = arg[1], arg[2], tonumber(arg[3] or ""), arg[4]
assert(codec and path and seconds and seconds > 0, "usage: more_codecs.lua CODEC FILE SECONDS [DESCRIPTOR_SET]")

local function read(p)
  local f = assert(io.open(p, "rb"))
  local bytes = f:read("a")
  f:close()
  return bytes
end
local doc = read(path)

local decode, encode, check
if codec == "xml" then
  decode, encode = xml.decode, xml.encode
  check = function(v) return v.tag == "catalog" and #v.children > 0 end
elseif codec == "protobuf" then
  decode, encode = protobuf.decode, protobuf.encode
  check = function(v) return type(v[2]) == "table" and type(v[2][1]) == "string" end
elseif codec == "protobuf_guess" then
  local options = { guess = true }
  decode = function(bytes) return protobuf.decode(bytes, options) end
  encode = protobuf.encode
  check = function(v) return type(v[2]) == "table" and type(v[2][1]) == "table" end
elseif codec == "schema" then
  assert(descriptors, "schema needs DESCRIPTOR_SET")
  local schema = protobuf.load(read(descriptors))
  decode = function(bytes) return schema:decode(bytes, "lunet.bench.Catalog") end
  encode = function(t) return schema:encode(t, "lunet.bench.Catalog") end
  check = function(v) return type(v.items) == "table" and v.items[1].id == 1 end
else
  error("CODEC is xml, protobuf, protobuf_guess or schema")
end

-- Sanity: the document decodes to what the generator wrote, and what is encoded decodes again.
local value = decode(doc)
assert(check(value), "unexpected shape of the decoded " .. codec .. " document")
assert(check(decode(encode(value))), "the " .. codec .. " round trip changed the shape")

local lib = dofile((arg[0]:match("^(.*/)") or "") .. "more_lib.lua")
lib.measure("decode", codec, decode, doc, #doc, seconds)
lib.measure("encode", codec, encode, value, #doc, seconds)
