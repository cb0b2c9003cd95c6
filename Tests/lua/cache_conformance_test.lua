-- The cache against what RFC 9111, RFC 9110 and RFC 5861 ask of a private cache (issue 19), each
-- test quoting the section it follows. The origins are httpbin and Tests/servers/cache_server.py, a
-- scripted server of these tests' own: a test says what it answers, reply by reply, then reads
-- back what it was sent. Every exchange is real HTTP over a socket.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")

local server, pid, port = h.start_server("cache_server.py")
local ORIGIN = "http://127.0.0.1:" .. port

local fresh_cache = h.fresh_cache

local keys = 0
--- A new key whose replies are `replies` (see Tests/servers/cache_server.py); returns its URL.
--- `replies` may be a function of the URL, for replies that name it.
local function script(replies)
  keys = keys + 1
  local key = "k" .. keys .. "-" .. math.random(1e9)
  local url = ORIGIN .. "/r/" .. key
  if type(replies) == "function" then replies = replies(url) end
  http.put(ORIGIN .. "/script/" .. key, { body = json.encode(replies) })
  return url, key
end
--- The requests the origin received for `key`, oldest first.
local function log(key) return http.get(ORIGIN .. "/log/" .. key).json end
--- A session with a fresh cache, and a key scripted with `replies`: (session, url, key).
local function scenario(replies)
  local url, key = script(replies)
  return http.session{ cache = fresh_cache() }, url, key
end

test("RFC 9111 §3.1: Set-Cookie is stored and returned with a hit, never applied to the jar again", function()
  -- §3.1: "Caches MUST include all received response header fields ... when storing a
  -- response"; only the Connection-named and proxy-authentication fields are excepted.
  -- The cookie is scoped to /cookies, so the cached URL's requests carry none either time: the
  -- cache keeps holders of different cookies apart (issue 33), and this is one holder.
  local s = http.session{ cache = fresh_cache(), cookies = true }
  local url = BIN .. "/response-headers?Cache-Control=max-age%3D60&Set-Cookie=flavour%3Dfirst%3B%20Path%3D%2Fcookies"
  eq(s:get(url).cache, "miss", "first")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "first" }, "the jar took the cookie from the network")
  s:get(BIN .. "/response-headers?Set-Cookie=flavour%3Dsecond%3B%20Path%3D%2Fcookies")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "second" }, "the server changed it")
  local hit = s:get(url)
  eq(hit.cache, "hit", "second")
  eq(hit.headers["set-cookie"], "flavour=first; Path=/cookies", "the stored Set-Cookie comes back with the hit")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "second" }, "and is not applied to the jar a second time")
end)

local function H(...) return { ... } end   -- a field: H("Name", "value")

test("RFC 9111 §4.3.4, §3.2: a 304 replaces the stored fields it carries, except Content-Length", function()
  -- §3.2: "the cache MUST add each header field in the provided response to the stored
  -- response, replacing field values that are already present, with the following exceptions:
  -- ... The Content-Length header field."
  local s, url, key = scenario{
    { headers = { H("Cache-Control", "max-age=0"), H("ETag", '"a"'), H("Content-Type", "text/plain"), H("X-Version", "1") },
      body = "stored body" },
    { status = 304, headers = { H("Cache-Control", "max-age=60"), H("ETag", '"a"'), H("Content-Type", "text/x-new"),
      H("X-Version", "2"), H("Content-Length", "999") } },
  }
  eq(s:get(url).cache, "miss", "first")
  local r = s:get(url)
  eq(r.cache, "revalidated", "second")
  eq(log(key)[2].headers["if-none-match"], '"a"', "validated with the stored ETag")
  eq({ r.body, r.headers["x-version"], r.headers["content-type"], r.headers["content-length"] },
     { "stored body", "2", "text/x-new", "11" }, "body, X-Version, Content-Type, Content-Length")
  local third = s:get(url)
  eq({ third.cache, third.headers["x-version"] }, { "hit", "2" }, "freshened by the 304's max-age, with its fields")
  eq(#log(key), 2, "the origin was asked twice")
end)

test("RFC 9111 §4.3.4: a 304 whose validator does not match updates nothing; the request is made again", function()
  -- §4.3.4: a strong validator in the 304 "identifies the selected representation for
  -- update"; a stored response with another validator is not it.
  local s, url, key = scenario{
    { headers = { H("Cache-Control", "max-age=0"), H("ETag", '"a"') }, body = "old" },
    { status = 304, headers = { H("Cache-Control", "max-age=60"), H("ETag", '"b"') } },
    { headers = { H("Cache-Control", "max-age=60"), H("ETag", '"b"') }, body = "new" },
  }
  s:get(url)
  local r = s:get(url)
  eq({ r.cache, r.body }, { "miss", "new" }, "the stored response was not freshened; the new one came")
  local sent = log(key)
  eq(#sent, 3, "asked again after the 304")
  eq(sent[3].headers["if-none-match"], nil, "without conditions")
  eq(s:get(url).body, "new", "the new response is the stored one now")
end)

test("RFC 9111 §4.3.5: a HEAD response freshens the stored GET it describes", function()
  -- §4.3.5: "the cache SHOULD update or invalidate each of its stored GET responses that could
  -- have been chosen for that request ... if the stored response and HEAD response have
  -- matching values for any received validator fields ... the cache SHOULD update the stored
  -- response".
  local s, url, key = scenario{
    { headers = { H("Cache-Control", "max-age=0"), H("ETag", '"a"'), H("X-Version", "1") }, body = "hello" },
    { headers = { H("Cache-Control", "max-age=60"), H("ETag", '"a"'), H("X-Version", "2") }, body = "hello" },
  }
  eq(s:get(url).cache, "miss", "GET")
  local head = s:head(url)
  eq({ head.cache, head.status, head.headers["x-version"] }, { "miss", 200, "2" }, "HEAD from the origin")
  local r = s:get(url)
  eq({ r.cache, r.body, r.headers["x-version"] }, { "hit", "hello", "2" }, "the stored GET, freshened with the HEAD's fields")
  eq(#log(key), 2, "GET and HEAD only")
end)

test("RFC 9111 §4.3.5: a HEAD response with another validator invalidates the stored GET", function()
  -- §4.3.5: "otherwise, the cache SHOULD consider the stored response to be stale".
  local s, url, key = scenario{
    { headers = { H("Cache-Control", "max-age=0"), H("ETag", '"a"') }, body = "hello" },
    { headers = { H("Cache-Control", "max-age=60"), H("ETag", '"b"') }, body = "changed" },
  }
  s:get(url)
  s:head(url)
  local r = s:get(url)
  eq({ r.cache, r.body }, { "miss", "changed" }, "fetched again")
  eq(log(key)[3].headers["if-none-match"], nil, "unconditionally: the stored GET was removed, not validated")
end)

test("RFC 9111 §5.2.1.7: only_if_cached with nothing stored fails with offline, or answers a 504 when asked to", function()
  -- §5.2.1.7: "If it receives this directive, a cache SHOULD either respond using a stored
  -- response consistent with the other constraints of the request or respond with a 504
  -- (Gateway Timeout) status code."
  local s, url, key = scenario{ { headers = { H("Cache-Control", "max-age=60") }, body = "stored" } }
  local e = fails("offline", function() s:get(url, { cache = "only_if_cached" }) end, "the default")
  truthy(e.message:find("only_if_cached", 1, true), e.message)
  local r = s:get(url, { cache = "only_if_cached", offline_miss = "504" })
  eq({ r.status, r.reason, r.cache }, { 504, "Gateway Timeout", "offline" }, "a synthesized 504")
  eq(r.headers["cache-control"], "no-store", "marked never to be stored")
  local directive = s:get(url, { headers = { ["Cache-Control"] = "only-if-cached" }, offline_miss = "504" })
  eq(directive.status, 504, "the request directive too")
  eq(s:head(url, { cache = "only_if_cached", offline_miss = "504" }).body, "", "a HEAD's has no body")
  eq(#log(key), 0, "the origin was never asked")
  fails("argument", function() s:get(url, { cache = "only_if_cached", offline_miss = "maybe" }) end)
  eq(s:get(url).cache, "miss", "stored now")
  eq(s:get(url, { cache = "only_if_cached", offline_miss = "504" }).body, "stored", "a stored response is still served")
end)

test("RFC 9110 §9.3.3: a POST response with explicit freshness and its own URL in Content-Location answers a later GET", function()
  -- RFC 9111 §4 lets a cache use a POST response for a later GET; RFC 9110 §9.3.3: "Responses
  -- to POST requests are only cacheable when they include explicit freshness information ...
  -- and a Content-Location header field that has the same value as the POST's target URI".
  local s, url, key = scenario(function(u) return {
    { headers = { H("Cache-Control", "max-age=60"), H("Content-Location", u) }, body = "made by the POST" },
  } end)
  eq(s:post(url, { body = "x" }).cache, "miss", "the POST")
  local r = s:get(url)
  eq({ r.cache, r.body }, { "hit", "made by the POST" }, "the GET is answered by the POST's response")
  eq(#log(key), 1, "one request reached the origin")
  local other, other_key = script{ { headers = { H("Cache-Control", "max-age=60") }, body = "no Content-Location" } }
  s:post(other, { body = "x" })
  eq(s:get(other).cache, "miss", "without Content-Location the POST's response is not reused")
  eq(#log(other_key), 2, "so the GET went to the origin")
end)

test("RFC 9110 §8.4: a content coding lunet cannot decode is handed through with the field intact, with and without the cache", function()
  -- §8.4: "Content-Encoding is primarily used to allow a representation's data to be
  -- compressed without losing the identity of its underlying media type"; a recipient that
  -- cannot decode a coding can still hand the data on with the field that names it.
  local url = script{ { headers = { H("Content-Encoding", "x-custom"), H("Cache-Control", "max-age=60") }, body = "ENCODED" } }
  local plain = http.get(url)
  eq({ plain.status, plain.body, plain.headers["content-encoding"] }, { 200, "ENCODED", "x-custom" }, "without a cache")
  local s = http.session{ cache = fresh_cache() }
  local first, second = s:get(url), s:get(url)
  eq({ first.cache, first.body, first.headers["content-encoding"] }, { "miss", "ENCODED", "x-custom" }, "stored as received")
  eq({ second.cache, second.body, second.headers["content-encoding"] }, { "hit", "ENCODED", "x-custom" }, "served as received")
  local mixed = script{ { headers = { H("Content-Encoding", "x-custom, gzip") }, body = "NOT GZIP" } }
  eq(http.get(mixed).body, "NOT GZIP", "a list with an unknown coding is handed through whole")
  -- Known codings are still decoded, also on the response after one that was handed through.
  local final = script{ { gzip = true, body = "decoded again" } }
  local redirect = script{ { status = 302, headers = { H("Location", final), H("Content-Encoding", "x-custom") }, body = "xx" } }
  eq(http.get(redirect).body, "decoded again", "gzip after a redirect that named x-custom")
  eq(http.get(final, { decompress = false }).headers["content-encoding"], "gzip", "decompress = false still hands gzip through")
end)

test("RFC 9112 §6.1: a transfer coding other than chunked, which lunet never asks for, is refused and nothing is stored", function()
  -- §7.4: a client says with TE which transfer codings besides chunked it will take; lunet
  -- sends no TE, so a response with another one is a server fault (kind protocol), the same on
  -- every libcurl (7.88 handed the body through still coded, 8.x refuses it).
  local url = script{ { raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: x-custom\r\nCache-Control: max-age=60\r\n\r\nRAW BODY" } }
  local e = fails("protocol", function() http.get(url) end, "Transfer-Encoding: x-custom")
  truthy(e.message:find("transfer codings cannot be removed", 1, true), e.message)
  local s = http.session{ cache = fresh_cache() }
  fails("protocol", function() s:get(url) end, "through a cache")
  fails("protocol", function() s:get(url) end, "again: nothing was stored")
  local chunked = script{ { headers = { H("Transfer-Encoding", "chunked") }, body = "4\r\nok!!\r\n0\r\n\r\n", length = false } }
  eq(s:get(chunked).body, "ok!!",
    "chunked alone is removed")
end)

--- Waits (a bounded number of loop turns) until `ready()` is true; returns whether it became so.
local function eventually(ready)
  for _ = 1, 500 do
    if ready() then return true end
    task.sleep(0.01)
  end
  return ready()
end

test("RFC 5861 §3: inside stale-while-revalidate a stale response is served at once and revalidated in the background", function()
  -- §3: "caches MAY serve the response in which it appears after it becomes stale, up to the
  -- indicated number of seconds"; "the cache SHOULD attempt to revalidate it while still
  -- serving stale responses".
  local c = fresh_cache()
  local s = http.session{ cache = c }
  local url, key = script{
    { headers = { H("Cache-Control", "max-age=1, stale-while-revalidate=600"), H("Age", "100"), H("ETag", '"v1"') }, body = "one" },
    { headers = { H("Cache-Control", "max-age=600"), H("ETag", '"v2"') }, body = "two" },
  }
  eq(s:get(url).cache, "miss", "stored, 99 s stale: inside the window")
  local r = s:get(url)
  eq({ r.cache, r.body }, { "stale", "one" }, "served at once from the stale entry")
  local again = s:get(url).cache
  truthy(again == "stale" or again == "hit", "a request while the revalidation runs is answered from storage too: " .. again)
  truthy(eventually(function() return #log(key) >= 2 and c:entries()[1].fresh end), "the background revalidation stored the new response")
  local sent = log(key)
  eq(#sent, 2, "one background request, however many stale answers")
  eq(sent[2].headers["if-none-match"], '"v1"', "a conditional GET")
  local fresh = s:get(url)
  eq({ fresh.cache, fresh.body }, { "hit", "two" }, "the next request sees the fresh one")
end)

test("RFC 5861 §3: past the stale-while-revalidate window the response is validated first", function()
  local s, url, key = scenario{
    { headers = { H("Cache-Control", "max-age=1, stale-while-revalidate=10"), H("Age", "100"), H("ETag", '"v1"') }, body = "one" },
    { status = 304, headers = { H("Cache-Control", "max-age=600"), H("ETag", '"v1"') } },
  }
  s:get(url)
  local r = s:get(url)
  eq({ r.cache, r.body }, { "revalidated", "one" }, "99 s stale, 10 s window: the server was asked first")
  eq(#log(key), 2, "validated once")
end)

test("RFC 9111 §4.2.4, RFC 5861 §4: a stale response answers when the server resets, closes or sends nothing", function()
  -- RFC 9111 §4.2.4: a cache may serve stale responses "when it is disconnected"; RFC 5861 §4:
  -- "stale-if-error ... when an error is encountered, a cached stale response MAY be used".
  for _, action in ipairs{ "reset", "empty", "cut" } do
    local s = http.session{ cache = fresh_cache() }
    local url = script{
      { headers = { H("Cache-Control", "max-age=0, stale-if-error=600"), H("ETag", '"v1"') }, body = "kept" },
      { action = action, headers = { H("ETag", '"v2"') }, body = "a body cut in half" },
    }
    s:get(url)
    local r = s:get(url)
    eq({ r.cache, r.status, r.body }, { "stale", 200, "kept" }, action)
  end
  -- must-revalidate forbids it (RFC 9111 §5.2.2.2).
  local s = http.session{ cache = fresh_cache() }
  local strict = script{
    { headers = { H("Cache-Control", "max-age=0, must-revalidate, stale-if-error=600"), H("ETag", '"v1"') }, body = "kept" },
    { action = "reset" },
  }
  s:get(strict)
  fails("protocol", function() s:get(strict) end, "must-revalidate: the failure")
end)

test("RFC 5861 §4: stale-if-error answers a 500, 502, 503 or 504 inside its window, not outside it", function()
  local s = http.session{ cache = fresh_cache() }
  local url = script{
    { headers = { H("Cache-Control", "max-age=0, stale-if-error=600"), H("ETag", '"v1"') }, body = "kept" },
    { status = 503, body = "down" },
  }
  s:get(url)
  local r = s:get(url)
  eq({ r.cache, r.status, r.body }, { "stale", 200, "kept" }, "a 503 inside the window")
  local short = script{
    { headers = { H("Cache-Control", "max-age=0, stale-if-error=5"), H("Age", "100") }, body = "kept" },
    { status = 503, body = "down" },
  }
  s:get(short)
  local late = s:get(short)
  eq({ late.cache, late.status }, { "miss", 503 }, "outside the window the error is the answer")
  local plain = script{ { headers = { H("Cache-Control", "max-age=0") }, body = "kept" }, { status = 500, body = "down" } }
  s:get(plain)
  eq(s:get(plain).status, 500, "without stale-if-error a 500 is the answer")
  local asked = s:get(plain, { headers = { ["Cache-Control"] = "stale-if-error=600" } })
  eq({ asked.cache, asked.body }, { "stale", "kept" }, "the request's own stale-if-error counts too")
end)

local function range(s, url, spec) return s:get(url, { headers = { Range = "bytes=" .. spec } }) end

test("RFC 9111 §3.3, §3.4: 206 pieces are stored and put together; a complete response answers a range", function()
  -- §3.3: "A cache MUST NOT use an incomplete response to answer requests unless the response
  -- has been made complete, or the request is partial and specifies a range wholly within the
  -- incomplete response." §3.4: stored pieces may be combined "when the new response and
  -- stored response have the same strong validator".
  local s, url, key = scenario{ { ranges = true, headers = { H("Cache-Control", "max-age=600"), H("ETag", '"s1"') }, body = "abcdefghij" } }
  local first = range(s, url, "0-4")
  eq({ first.cache, first.status, first.body, first.headers["content-range"] }, { "miss", 206, "abcde", "bytes 0-4/10" }, "a piece from the origin")
  local within = range(s, url, "1-3")
  eq({ within.cache, within.status, within.body, within.headers["content-range"] }, { "hit", 206, "bcd", "bytes 1-3/10" }, "a range within it")
  eq(s:get(url, { cache = "only_if_cached", offline_miss = "504" }).status, 504, "the piece never answers a whole request")
  local rest = range(s, url, "5-9")
  eq({ rest.cache, rest.body }, { "miss", "fghij" }, "the other piece from the origin")
  local whole = s:get(url)
  eq({ whole.cache, whole.status, whole.body }, { "hit", 200, "abcdefghij" }, "the two pieces made the response complete")
  local tail = range(s, url, "-3")
  eq({ tail.cache, tail.status, tail.body, tail.headers["content-range"] }, { "hit", 206, "hij", "bytes 7-9/10" }, "a range from the complete response")
  eq(#log(key), 2, "the origin sent the two pieces only")
end)

test("RFC 9111 §3.4: pieces with different validators are never combined", function()
  local s, url, key = scenario{
    { ranges = true, headers = { H("Cache-Control", "max-age=600"), H("ETag", '"old"') }, body = "abcdefghij" },
    { ranges = true, headers = { H("Cache-Control", "max-age=600"), H("ETag", '"new"') }, body = "ABCDEFGHIJ" },
  }
  eq(range(s, url, "0-4").body, "abcde", "a piece of the old representation")
  eq(range(s, url, "5-9").body, "FGHIJ", "a piece of the new one")
  local whole = s:get(url)
  eq({ whole.cache, whole.body }, { "miss", "ABCDEFGHIJ" }, "not served combined: the origin was asked")
  eq(range(s, url, "0-4").body, "ABCDE", "and the old bytes are gone")
  eq(#log(key), 3, "three requests reached the origin")
end)

test("RFC 9111 §3.1: trailer fields are never combined with the header fields, nor stored", function()
  -- §3.1: "Caches MAY either store trailer fields separate from header fields or discard them.
  -- Caches MUST NOT combine trailer fields with header fields." RFC 9110 §6.5.1: a recipient
  -- "MUST NOT merge a trailer field into a header section unless ... explicitly permitted".
  local url = script{ { raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nCache-Control: max-age=60\r\n" ..
    "Trailer: X-Trail\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Trail: end\r\n\r\n" } }
  local s = http.session{ cache = fresh_cache() }
  local first = s:get(url)
  eq({ first.body, first.headers["x-trail"], first.trailers["x-trail"] }, { "hello", nil, "end" }, "the trailer is r.trailers, not r.headers")
  local hit = s:get(url)
  eq({ hit.cache, hit.body, hit.headers["x-trail"], hit.trailers["x-trail"] }, { "hit", "hello", nil, nil }, "the cache discards it")
end)

h.cleanup(after_all, function()
  h.remove_caches()
  h.stop_server(server, pid)
end)
h.done()
