-- Writes the documents of the codecs benchmark (j), the same content every time for a given SIZE
-- (a fixed-seed generator of its own, as in more_json_gen.lua; a map's entries may come out in
-- another order, as Lua's string hashing is seeded per process):
--   DIR/doc.xml   an XML catalog of about SIZE bytes: a default and a prefixed namespace,
--                 attributes, nested elements, text with entity and character references, CDATA,
--                 raw UTF-8, empty elements, indentation between elements
--   DIR/doc.pb    a lunet.bench.Catalog message (more_codecs.proto) of about SIZE bytes: varints
--                 (signed, zigzag, enums, bools), fixed64, doubles and floats, strings, bytes,
--                 nested and repeated messages, packed numbers, a map
-- usage: lunet more_codecs_gen.lua SIZE DIR DESCRIPTOR_SET
--   (DESCRIPTOR_SET: protoc's output for more_codecs.proto; the message is written with
--   schema:encode, so run it with the lunet being measured or any that has protobuf)
-- prints "xml_bytes=<n> xml_items=<n> pb_bytes=<n> pb_items=<n>"
local size, dir, descriptors = math.tointeger(tonumber(arg[1] or "")), arg[2], arg[3]
assert(size and size > 0 and dir and descriptors, "usage: more_codecs_gen.lua SIZE DIR DESCRIPTOR_SET")

local lib = dofile((arg[0]:match("^(.*/)") or "") .. "more_lib.lua")
local rnd, pick = lib.generator()

local words = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
  "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra",
  "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "lunet", "swift", "curl",
  "naïve", "Grüße", "日本語" }
local function text(n)
  local parts = {}
  for i = 1, n do parts[i] = pick(words) end
  return table.concat(parts, " ")
end
local function float(scale) return (rnd(2000001) - 1000001) / 1000000 * scale end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  assert(f:write(bytes))
  assert(f:close())
end

-- XML: pieces of text content, already escaped as XML.
local escaped = { "fish &amp; chips", "a &lt; b &gt; c", "&quot;quoted&quot;", "it&apos;s",
  "caf&#233;", "&#x4E2D;&#x6587;", "emoji 🎉" }
local function xml_text(n)
  local parts = {}
  for i = 1, n do parts[i] = rnd(4) == 1 and pick(escaped) or pick(words) end
  return table.concat(parts, " ")
end
local function xml_item(id)
  local tags = {}
  for i = 1, rnd(5) do tags[i] = "<tag>" .. pick(words) .. "</tag>" end
  local friends = {}
  for i = 1, rnd(4) - 1 do
    friends[i] = string.format('\n      <friend id="%d" since="%d">%s</friend>', rnd(1000000),
      1500000000 + rnd(200000000), text(2))
  end
  return string.format(
    '  <item id="%d" m:kind="%s" active="%s">\n' ..
    '    <title>%s</title>\n' ..
    '    <price currency="%s">%.2f</price>\n' ..
    '    <tags>%s</tags>\n' ..
    '    <about>%s</about>\n' ..
    '    <m:note><![CDATA[raw <b>%s</b> & more]]></m:note>\n' ..
    '    <location lat="%.6f" lon="%.6f"/>\n' ..
    '    <friends>%s\n    </friends>\n' ..
    '    <empty/>\n' ..
    '  </item>\n',
    id, pick(words), rnd(2) == 1 and "true" or "false", xml_text(2 + rnd(3)), pick({ "EUR", "USD", "JPY" }),
    float(10000), table.concat(tags), xml_text(8 + rnd(16)), text(rnd(3)), float(90), float(180),
    table.concat(friends))
end
local parts = { '<?xml version="1.0" encoding="UTF-8"?>\n' ..
  '<catalog xmlns="urn:lunet:bench" xmlns:m="urn:lunet:meta" generator="more_codecs_gen.lua">\n' }
local total, xml_items = #parts[1] + 11, 0
while total < size do
  xml_items = xml_items + 1
  parts[#parts + 1] = xml_item(xml_items)
  total = total + #parts[#parts]
end
parts[#parts + 1] = "</catalog>\n"
local xml_doc = table.concat(parts)
write(dir .. "/doc.xml", xml_doc)

-- Protobuf: a Catalog of Records, grown until its encoding passes SIZE.
local schema = protobuf.load(assert(io.open(descriptors, "rb")):read("a"))
local kinds = { "ALPHA", "BRAVO", "CHARLIE" }
local function record(id)
  local tags, scores, friends, counts = {}, {}, {}, {}
  for i = 1, rnd(6) do tags[i] = pick(words) end
  for i = 1, rnd(12) do scores[i] = rnd(200001) - 100001 end
  for i = 1, rnd(4) - 1 do friends[i] = { id = rnd(1000000), name = text(2), since = 1500000000 + rnd(200000000) } end
  for _ = 1, rnd(3) do counts[pick(words)] = rnd(1000) end
  return {
    id = id, guid = string.format("%08x-%04x-%04x", rnd(0x7fffffff), rnd(0xffff), rnd(0xffff)),
    active = rnd(2) == 1, balance = float(10000), delta = rnd(2001) - 1001,
    big = rnd(0x7fffffff) * 4294967296 + rnd(0x7fffffff), name = text(2), about = text(8 + rnd(16)),
    tags = tags, scores = scores, location = { lat = float(90), lon = float(180), alt = float(5000) },
    friends = friends, kind = pick(kinds), blob = string.pack("<i8i8", rnd(0x7fffffff), id), counts = counts,
  }
end
local items, pb_bytes = {}, 0
local catalog = { generator = "more_codecs_gen.lua", items = items }
local batch = 100
repeat -- a batch of records, then as many more as the bytes per record so far say are missing
  for _ = 1, batch do items[#items + 1] = record(#items + 1) end
  pb_bytes = #schema:encode(catalog, "lunet.bench.Catalog")
  batch = math.max(1, math.ceil((size - pb_bytes) / (pb_bytes / #items)))
until pb_bytes >= size
write(dir .. "/doc.pb", schema:encode(catalog, "lunet.bench.Catalog"))
print(string.format("xml_bytes=%d xml_items=%d pb_bytes=%d pb_items=%d", #xml_doc, xml_items, pb_bytes, #items))
