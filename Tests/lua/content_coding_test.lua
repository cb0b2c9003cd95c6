-- Content codings are removed by lunet (ContentDecoder), the same on every libcurl: gzip,
-- x-gzip, deflate (zlib-wrapped or raw), br and zstd, stacked ones in reverse order, pieces as
-- they arrive (max_body and on_chunk see decoded bytes). A coding lunet does not know is handed
-- through with the field intact (cache_conformance_test.lua); bytes not in the coding named,
-- a coded body cut short and a zstd window past RFC 9659's 8 MB are kind protocol.
-- Origins: httpbin (/gzip, /deflate, /brotli) and Tests/servers/cache_server.py (codings applied in
-- order, bodies cut).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")

local server, pid, port = h.start_server("cache_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local ORIGIN = "http://127.0.0.1:" .. port

local keys = 0
--- A URL whose next replies are `replies` (Tests/servers/cache_server.py).
local function script(replies)
  keys = keys + 1
  local url = ORIGIN .. "/r/cc" .. keys .. "-" .. math.random(1e9)
  http.put(ORIGIN .. "/script/" .. url:match("/r/(.*)$"), { body = json.encode(replies) })
  return url
end

local TEXT = string.rep("lunet removes content codings itself. ", 2000)   -- 76 KB: several pieces

test("the request offers the codings lunet removes, and httpbin's gzip, deflate and br bodies arrive decoded", function()
  local sent = http.get(BIN .. "/headers").json.headers["Accept-Encoding"]
  eq(sent, "deflate, gzip, br, zstd", "Accept-Encoding")
  for _, path in ipairs({ "gzip", "deflate", "brotli" }) do
    local r = http.get(BIN .. "/" .. path)
    eq(r.status, 200, path)
    truthy(r.json and (r.json.gzipped or r.json.deflated or r.json.brotli), path .. " decoded to JSON: " .. r.body:sub(1, 40))
    truthy(r.headers["content-encoding"] ~= nil, path .. ": the field stays, naming what was removed")
  end
end)

test("each coding alone, raw deflate, zstd frames and stacked codings decode to the same bytes", function()
  local cases = {
    { "gzip" }, { "deflate" }, { "deflate-raw" }, { "zstd" }, { "deflate", "gzip" }, { "gzip", "zstd", "gzip" },
  }
  for _, codings in ipairs(cases) do
    local what = table.concat(codings, ", ")
    local r = http.get(script{ { codings = codings, body = TEXT } })
    eq({ r.status, #r.body, r.body == TEXT }, { 200, #TEXT, true }, what)
    -- Close-delimited (no Content-Length): decoded the same as it arrives.
    r = http.get(script{ { codings = codings, body = TEXT, length = false } })
    eq(r.body == TEXT, true, what .. " without a Content-Length")
  end
  local x = http.get(script{ { codings = { "gzip" }, coding_label = "X-Gzip", body = "x" } })
  eq(x.body, "x", "x-gzip is gzip, names compare without case")
end)

test("decompress = false and a download keep the coded bytes; HEAD and 304 with a coding have no body to decode", function()
  local url = script{ { codings = { "gzip" }, body = TEXT } }
  local raw = http.get(url, { decompress = false })
  eq({ raw.body:byte(1), raw.body:byte(2), raw.headers["content-encoding"] }, { 0x1f, 0x8b, "gzip" }, "decompress = false")
  eq(http.head(url).status, 200, "HEAD")
  local nm = script{ { status = 304, headers = { { "Content-Encoding", "gzip" } } } }
  eq(http.get(nm).status, 304, "304")
end)

test("max_body counts decoded bytes and on_chunk gets decoded pieces", function()
  local url = script{ { codings = { "gzip" }, body = TEXT } }
  local e = fails("too_large", function() http.get(url, { max_body = 10000 }) end, "76 KB decoded over max_body 10000")
  truthy(e.message:find("max_body", 1, true), e.message)
  local pieces = {}
  local r = http.get(url, { on_chunk = function(c) pieces[#pieces + 1] = c end })
  eq({ r.status, table.concat(pieces) == TEXT }, { 200, true }, "on_chunk saw the decoded body")
end)

test("bytes that are not in the coding named, a coded body cut short and a zstd window over 8 MB are kind protocol", function()
  local e = fails("protocol", function() http.get(script{ { codings = { "garbage" }, body = TEXT } }) end, "not gzip")
  truthy(e.message:find("not in the gzip coding", 1, true), e.message)
  e = fails("protocol", function() http.get(script{ { codings = { "gzip" }, body = TEXT, length = false, drop_tail = 20 } }) end,
    "gzip cut short, close-delimited")
  truthy(e.message:find("cut short", 1, true) and e.message:find("gzip", 1, true), e.message)
  e = fails("protocol", function() http.get(script{ { codings = { "zstd" }, zstd_window_log = 27, body = "x" } }) end, "zstd window 128 MB")
  truthy(e.message:find("zstd", 1, true), e.message)
  eq(http.get(script{ { codings = { "zstd" }, zstd_window_log = 23, body = "x" } }).body, "x", "an 8 MB window is taken")
  eq(http.stats().transfers, 0, "nothing left in flight")
end)

test("a body in a coding lunet does not remove keeps the coding and the field; so does a stack of more than four", function()
  local r = http.get(script{ { headers = { { "Content-Encoding", "x-custom" } }, body = "CODED" } })
  eq({ r.body, r.headers["content-encoding"] }, { "CODED", "x-custom" }, "x-custom")
  local deep = { "gzip", "gzip", "gzip", "gzip", "gzip" }
  r = http.get(script{ { codings = deep, body = "deep" } })
  eq({ r.status, r.headers["content-encoding"] }, { 200, "gzip, gzip, gzip, gzip, gzip" }, "five codings: handed through")
  eq({ r.body:byte(1), r.body:byte(2) }, { 0x1f, 0x8b }, "as it arrived")
end)
