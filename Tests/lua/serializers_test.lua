-- Request and response serializers, validation, charsets, custom serializers.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")

local tmpfile = h.temp_file

test("form, json and raw request serializers set their Content-Type unless the caller did", function()
  local f = http.post(BIN .. "/anything", { params = { a = "1", b = "two words" } })
  eq({ f.json.form, f.json.headers["Content-Type"] }, { { a = "1", b = "two words" }, "application/x-www-form-urlencoded" }, "form")
  local j = http.session{ request = "json" }:put(BIN .. "/anything", { params = { list = { 1, 2 }, ok = true } })
  eq({ j.json.json, j.json.headers["Content-Type"] }, { { list = { 1, 2 }, ok = true }, "application/json" }, "json")
  local own = http.post(BIN .. "/anything", { json = { a = 1 }, headers = { ["Content-Type"] = "application/vnd.x+json" } })
  eq(own.json.headers["Content-Type"], "application/vnd.x+json", "the caller's Content-Type wins")
  local raw = http.post(BIN .. "/anything", { body = "\0\1\2" })
  eq(raw.json.headers["Content-Type"], "application/octet-stream", "raw bytes without a type")
end)

test("params of GET, HEAD and DELETE go in the query string whatever the serializer", function()
  local s = http.session{ request = "json" }
  eq(s:get(BIN .. "/anything", { params = { q = "x" } }).json.args, { q = "x" }, "GET")
  eq(s:delete(BIN .. "/anything", { params = { id = 3 } }).json.args, { id = "3" }, "DELETE")
end)

test("multipart: fields, files streamed from disk, data parts with filenames", function()
  local path = tmpfile("file contents\n")
  local r = http.post(BIN .. "/post", { multipart = {
    name = "value", n = 3,
    doc = { file = path, content_type = "text/plain" },
    blob = { data = "bytes", filename = "x.bin" },
  } })
  eq(r.json.form, { name = "value", n = "3" }, "fields")
  eq(r.json.files, { doc = "file contents\n", blob = "bytes" }, "files")
  truthy(r.json.headers["Content-Type"]:find("^multipart/form%-data; boundary="), r.json.headers["Content-Type"])
  truthy(r:curl():find("-F 'doc=@" .. path, 1, true), r:curl())
  local e = fails("argument", function() http.post(BIN .. "/post", { multipart = { f = { file = "/no/such/file" } } }) end, "a missing file")
  truthy(e.message:find("/no/such/file", 1, true), e.message)
  fails("argument", function() http.post(BIN .. "/post", { multipart = { f = function() end } }) end, "a function part")
  local s = http.session{ request = "multipart" }
  eq(s:post(BIN .. "/post", { params = { a = "1" } }).json.form, { a = "1" }, "multipart as a session's request serializer")
  os.remove(path)
end)

test("response serializers: json, text, bytes, image, and compound lists", function()
  eq(http.session{ response = "json" }:get(BIN .. "/get?x=1").data.args.x, "1", "json")
  eq(http.session{ response = "text" }:get(NGINX .. "/sjis.txt").data, "こんにちは世界\n", "text with a charset")
  eq(http.session{ response = "bytes" }:get(NGINX .. "/small.txt").data, "hello, lunet\n", "bytes")
  local png = http.get(BIN .. "/image/png", { response = "image" }).data
  eq({ png.format, png.width, png.height }, { "png", 100, 100 }, "png")
  local jpeg = http.get(BIN .. "/image/jpeg", { response = "image" }).data
  eq({ jpeg.format, jpeg.width, jpeg.height }, { "jpeg", 239, 178 }, "jpeg")
  local webp = http.get(BIN .. "/image/webp", { response = "image" }).data
  eq(webp.format, "webp", "webp")
  truthy(#png.bytes > 0, "the bytes are kept")
  local compound = http.session{ response = { "json", "text" } }
  eq(compound:get(NGINX .. "/small.txt").data, "hello, lunet\n", "json fails, text succeeds")
  eq(compound:get(NGINX .. "/index.json").data.ok, true, "json succeeds first")
end)

test("a compound serializer chooses by Content-Type first, then falls back in order", function()
  -- An HTML page under { "xml", "text" } is text (it parses as XML, but xml does not accept
  -- text/html); JSON under { "text", "json" } is JSON.
  eq(type(http.session{ response = { "xml", "text" } }:get(BIN .. "/html").data), "string", "HTML: text, not an XML table")
  eq(type(http.session{ response = { "text", "json" } }:get(BIN .. "/get").data), "table", "JSON: json, not a string")
  eq(type(http.session{ response = { "text", "xml" } }:get(BIN .. "/xml").data), "table", "application/xml: xml")
  -- What each accepts: a media type, "type/*", a "+suffix"; parameters and case do not count.
  local S = http.serializers
  for _, c in ipairs({ { "json", "application/problem+json", true }, { "json", "Application/JSON; charset=utf-8", true },
                       { "json", "text/plain", false }, { "xml", "image/svg+xml", true }, { "text", "text/csv", true },
                       { "text", "application/json", false }, { "image", "image/webp", true }, { "bytes", "text/plain", false },
                       { "json", "application/json, text/html", true }, { "json", nil, false } }) do
    eq(S.accepts(S.response[c[1]], c[2]), c[3], c[1] .. " accepts " .. tostring(c[2]))
  end
  -- Per request too.
  eq(type(http.get(BIN .. "/html", { response = { "xml", "text" } }).data), "string", "a request's own list")
  -- Nothing accepts text/plain: the list in order (json fails, bytes decodes).
  eq(http.session{ response = { "json", "bytes" } }:get(NGINX .. "/small.txt").data, "hello, lunet\n", "fallback in order")
  -- The one that accepts fails: the others are tried.
  local www = h.env("LUNET_NGINX_WWW")
  local f = assert(io.open(www .. "/serializers-broken.json", "wb"))
  f:write("{not json")
  f:close()
  eq(http.session{ response = { "json", "text" } }:get(NGINX .. "/serializers-broken.json").data, "{not json", "json failed, text decoded")
  os.remove(www .. "/serializers-broken.json")
  -- A registered serializer accepts its content_types.
  http.serializers.register("lines", { content_types = { "text/plain" }, decode = function(body)
    local out = {}
    for line in body:gmatch("[^\n]+") do out[#out + 1] = line end
    return out
  end })
  eq(http.session{ response = { "text", "lines" } }:get(NGINX .. "/small.txt").data, "hello, lunet\n", "text accepts text/* and comes first")
  eq(http.session{ response = { "json", "lines" } }:get(NGINX .. "/small.txt").data, { "hello, lunet" }, "lines accepts text/plain")
  fails("argument", function() http.serializers.register("bad", { content_types = "text/plain", decode = function() end }) end, "content_types must be a list")
end)

test("decoding runs once per response", function()
  local calls = 0
  local s = http.session{ response = function(body) calls = calls + 1; return #body end }
  local r = s:get(NGINX .. "/small.txt")
  local _ = r.data, r.data, r.data
  eq(calls, 1, "the response serializer ran once")
  local j = http.get(NGINX .. "/index.json")
  truthy(rawequal(j.json, j.json), "r.json is decoded once and kept")
end)

test("validation: accept_status and accept_types, per session and per request", function()
  local s = http.session{ accept_status = { 200, 204 }, accept_types = { "application/json" } }
  eq(s:get(BIN .. "/get").status, 200, "accepted")
  local e = fails("status", function() s:get(BIN .. "/status/201") end, "201 is not in {200, 204}")
  eq(e.response.status, 201, "the error carries the response")
  e = fails("content_type", function() s:get(BIN .. "/html") end, "text/html")
  truthy(e.message:find("text/html", 1, true), e.message)
  eq(s:get(BIN .. "/status/418", { accept_status = false, accept_types = false }).status, 418, "a request turns validation off")
  eq(http.get(BIN .. "/status/404", { accept_status = { { 400, 499 } } }).status, 404, "a range")
  fails("status", function() http.get(BIN .. "/status/500", { accept_status = "2xx" }) end, "2xx per request")
  eq(http.get(BIN .. "/image/png", { accept_types = { "image/*" } }).status, 200, "a wildcard type")
end)

test("bad bodies: HTML declared JSON, a charset nobody knows, a custom serializer that raises", function()
  local e = fails("decode", function() http.session{ response = "json" }:get(BIN .. "/html") end, "HTML as JSON")
  eq(e.position, 1, "the position of the fault")
  eq(e.response.status, 200, "the response")
  e = fails("decode", function() return http.get(BIN .. "/response-headers?Content-Type=text/plain;+charset=klingon").text end, "an unknown charset")
  truthy(e.message:find("klingon", 1, true), e.message)
  e = fails("decode", function() http.get(NGINX .. "/small.txt", { response = function() error("no good") end }) end, "a custom serializer")
  truthy(e.message:find("no good", 1, true), e.message)
  e = fails("decode", function() http.get(NGINX .. "/small.txt", { response = "image" }) end, "text as an image")
  truthy(e.message:find("not a PNG", 1, true), e.message)
  fails("argument", function() http.session{ response = "klingon" } end, "an unknown serializer name")
end)

test("custom serializers registered from Lua work by name both ways", function()
  http.serializers.register("csv", {
    content_type = "text/csv",
    encode = function(rows)
      local lines = {}
      for _, row in ipairs(rows) do lines[#lines + 1] = table.concat(row, ",") end
      return table.concat(lines, "\n")
    end,
    decode = function(body)
      local rows = {}
      for line in body:gmatch("[^\n]+") do
        local row = {}
        for cell in line:gmatch("[^,]+") do row[#row + 1] = cell end
        rows[#rows + 1] = row
      end
      return rows
    end,
  })
  local s = http.session{ request = "csv", response = "csv" }
  local r = http.post(BIN .. "/anything", { params = { { "a", "b" }, { "1", "2" } }, request = "csv" })
  eq({ r.json.data, r.json.headers["Content-Type"] }, { "a,b\n1,2", "text/csv" }, "encoded")
  eq(s:get(BIN .. "/base64/YSxiCjEsMg==").data, { { "a", "b" }, { "1", "2" } }, "decoded")
  fails("argument", function() http.serializers.register("bad", { encode = function() end }) end, "encode without a content_type")
end)

h.done()
