-- http and sessions against httpbin and nginx on loopback (started by scripts/test).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails

local BIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")
local TLS = h.env("LUNET_NGINX_TLS")
local CA = h.env("LUNET_TEST_CA")
local HOSTILE = h.env("LUNET_HOSTILE")

test("every verb reaches the server with its method", function()
  for _, verb in ipairs({ "get", "post", "put", "patch", "delete", "options" }) do
    local r = http[verb](BIN .. "/anything")
    eq(r.status, 200, verb .. " status")
    if verb ~= "options" then eq(r.json.method, string.upper(verb), verb .. " method echoed") end
  end
  local r = http.head(BIN .. "/get")
  eq(r.status, 200, "head status")
  eq(r.body, "", "head has no body")
  local r2 = http.request{ method = "PATCH", url = BIN .. "/patch", json = { a = 1 } }
  eq(r2.json.json, { a = 1 }, "request{} with a json body")
end)

test("query tables are encoded and appended", function()
  local r = http.get(BIN .. "/get?x=1", { query = { q = "a b&c", list = { "1", "2" }, n = 3 } })
  eq(r.json.args, { x = "1", q = "a b&c", list = { "1", "2" }, n = "3" }, "args echoed")
  truthy(r.url:find("q=a%%20b%%26c"), "spaces and & are percent-encoded in " .. r.url)
end)

test("request headers are sent; response headers read case-insensitively", function()
  local r = http.get(BIN .. "/headers", { headers = { ["X-Thing"] = "one", Accept = "application/json" } })
  eq(r.json.headers["X-Thing"], "one", "custom header")
  eq(r.json.headers["User-Agent"]:match("^lunet/"), "lunet/", "default User-Agent")
  eq(r.headers["content-type"], r.headers["Content-Type"], "case-insensitive lookup")
  local r2 = http.get(BIN .. "/response-headers?X-Rep=a&X-Rep=b")
  eq(r2.headers:all("x-rep"), { "a", "b" }, "repeated headers as a list")
  local r3 = http.get(BIN .. "/headers", { headers = { ["User-Agent"] = false } })
  eq(r3.json.headers["User-Agent"], nil, "a header set to false is not sent")
end)

test("JSON and form bodies are echoed back", function()
  local r = http.post(BIN .. "/post", { json = { name = "x", list = { 1, 2, 3 }, nested = { ok = true } } })
  eq(r.json.json, { name = "x", list = { 1, 2, 3 }, nested = { ok = true } }, "json echoed")
  eq(r.json.headers["Content-Type"], "application/json", "json content type")
  local f = http.post(BIN .. "/post", { form = { a = "1", b = "x y" } })
  eq(f.json.form, { a = "1", b = "x y" }, "form echoed")
  local raw = http.put(BIN .. "/put", { body = "<x/>", content_type = "application/xml" })
  eq(raw.json.data, "<x/>", "raw body")
  eq(raw.json.headers["Content-Type"], "application/xml", "content_type option")
end)

test("status codes are responses, not errors, unless the session validates", function()
  local r = http.get(BIN .. "/status/404")
  eq(r.status, 404, "status")
  eq(r.ok, false, "ok")
  eq(r.reason, "NOT FOUND", "reason from the status line")
  local strict = http.session{ accept_status = "2xx" }
  local e = fails("status", function() strict:get(BIN .. "/status/503") end, "a 503 on a validating session")
  eq(e.response.status, 503, "the error carries the response")
end)

test("redirects are followed up to a limit, or not at all", function()
  local r = http.get(BIN .. "/redirect/3")
  eq(r.status, 200, "final status")
  eq(r.url, BIN .. "/get", "url after redirects")
  eq(r.redirects, 3, "redirect count")
  local nofollow = http.get(BIN .. "/redirect/1", { follow = false })
  eq(nofollow.status, 302, "follow = false stops")
  local e = fails("redirects", function() http.get(BIN .. "/redirect/11") end, "11 redirects")
  truthy(e.message:find("redirect"), "message names redirects: " .. e.message)
  fails("redirects", function() http.get(HOSTILE .. "/loop") end, "a redirect loop")
end)

test("compressed bodies are decoded", function()
  eq(http.get(BIN .. "/gzip").json.gzipped, true, "gzip")
  eq(http.get(BIN .. "/deflate").json.deflated, true, "deflate")
  eq(http.get(BIN .. "/brotli").json.brotli, true, "brotli")
end)

test("text is decoded from its charset to UTF-8", function()
  eq(http.get(NGINX .. "/utf8.txt").text, http.get(NGINX .. "/utf8.txt").body, "UTF-8 passes through")
  eq(http.get(NGINX .. "/sjis.txt").text, "こんにちは世界\n", "Shift_JIS")
  eq(http.get(NGINX .. "/eucjp.txt").text, "こんにちは世界\n", "EUC-JP")
  eq(http.get(NGINX .. "/latin1.txt").text, "café\n", "Latin-1")
end)

test("a server slower than the timeout gives kind timeout", function()
  local started = os.time()
  local e = fails("timeout", function() http.get(BIN .. "/delay/5", { timeout = 0.5 }) end, "a slow server")
  eq(e.url, BIN .. "/delay/5", "the error names the url")
  truthy(os.time() - started < 4, "it did not wait for the server")
end)

test("TLS: rejected without the CA, accepted with ca_file or insecure; HTTP/2", function()
  local e = fails("tls", function() http.get(TLS .. "/small.txt") end, "a certificate from an unknown CA")
  truthy(e.message ~= "", "a message")
  local r = http.get(TLS .. "/small.txt", { ca_file = CA })
  eq(r.body, "hello, lunet\n", "body over TLS")
  eq(r.http_version, "2", "HTTP/2 over TLS")
  local loose = http.session{ insecure = true }
  eq(loose:get(TLS .. "/small.txt").status, 200, "insecure session")
  local h1 = http.get(TLS .. "/small.txt", { ca_file = CA, http_version = "1.1" })
  eq(h1.http_version, "1.1", "http_version = 1.1")
end)

test("a session resolves paths against base_url (RFC 3986)", function()
  local api = http.session{ base_url = BIN .. "/anything/v1/" }
  eq(api:get("users/1").json.url, BIN .. "/anything/v1/users/1", "relative path")
  eq(api:get("../v2/x").json.url, BIN .. "/anything/v2/x", "dot segments")
  eq(api:get("/get").url, BIN .. "/get", "absolute path")
  eq(api:get(NGINX .. "/small.txt").body, "hello, lunet\n", "absolute URL wins")
end)

test("session headers, params through the request serializer, and with{}", function()
  local api = http.session{ base_url = BIN .. "/", headers = { ["X-App"] = "lunet" }, request = "json" }
  local r = api:post("post", { params = { name = "x" } })
  eq(r.json.json, { name = "x" }, "json request serializer")
  eq(r.json.headers["X-App"], "lunet", "session header")
  local g = api:get("get", { params = { q = "lua" } })
  eq(g.json.args, { q = "lua" }, "params of a GET go in the query")
  local form = http.session{ base_url = BIN .. "/", request = "form" }
  eq(form:post("post", { params = { a = "1" } }).json.form, { a = "1" }, "form request serializer")
  api.headers["Authorization"] = "Bearer t0"
  eq(api:get("headers").json.headers["Authorization"], "Bearer t0", "headers changed later apply")
  local admin = api:with{ headers = { ["X-Role"] = "admin" } }
  local a = admin:get("headers").json.headers
  eq({ a["X-Role"], a["X-App"] }, { "admin", "lunet" }, "derived session keeps and adds headers")
  eq(api:get("headers").json.headers["X-Role"], nil, "the parent is unchanged")
end)

test("basic and bearer auth", function()
  local good = http.session{ auth = { basic = { "user", "pass" } } }
  eq(good:get(BIN .. "/basic-auth/user/pass").json.authenticated, true, "right credentials")
  local bad = http.session{ auth = { basic = { "user", "wrong" } } }
  eq(bad:get(BIN .. "/basic-auth/user/pass").status, 401, "wrong credentials")
  local bearer = http.session{ auth = { bearer = "tok" } }
  eq(bearer:get(BIN .. "/bearer").json.token, "tok", "bearer")
  local own = bearer:get(BIN .. "/headers", { headers = { authorization = "Bearer mine" } }).json.headers
  eq(own.Authorization, "Bearer mine", "a request's own Authorization replaces the session's auth")
  local derived = bearer:with{ auth = { bearer = "other" } }
  eq(derived:get(BIN .. "/bearer").json.token, "other", "a derived session's auth")
end)

test("cookies set by the server are sent back in the session", function()
  local s = http.session{ cookies = true }
  s:get(BIN .. "/cookies/set?flavour=oat&size=big")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "oat", size = "big" }, "jar")
  eq(#s:cookies(), 2, "two cookies in the jar")
  local plain = http.session{}
  eq(plain:get(BIN .. "/cookies").json.cookies, {}, "a session without cookies sends none")
  local derived = s:with{ headers = { ["X-D"] = "1" } }
  eq(derived:get(BIN .. "/cookies").json.cookies.flavour, "oat", "a derived session shares the jar")
end)

test("a cookie file is saved at the end, read by curl, and loaded again", function()
  local file = h.tmpname()
  os.remove(file)
  local script = h.tmpname()
  local f = io.open(script, "w")
  f:write(string.format([[
    local s = http.session{ cookies = %q }
    s:get(%q)
  ]], file, BIN .. "/cookies/set?saved=yes"))
  f:close()
  local code, out = h.run(h.lunet() .. " " .. script)
  eq(code, 0, "the writer ran: " .. out)
  local jar = io.open(file):read("a")
  truthy(jar:find("saved\tyes", 1, true), "Netscape cookie line in " .. jar)
  local _, curl_out = h.run("curl -s -b " .. file .. " " .. BIN .. "/cookies")
  truthy(curl_out:find('"saved": ?"yes"'), "curl reads the file: " .. curl_out)
  local reader = http.session{ cookies = file }
  eq(reader:get(BIN .. "/cookies").json.cookies.saved, "yes", "loaded by a new session")
  os.remove(file); os.remove(script)
end)

test("connections of a session are reused (counted at the server)", function()
  local logfile = h.env("LUNET_NGINX_LOG")
  local before = #io.open(logfile):read("a")
  local s = http.session{ base_url = NGINX .. "/" }
  local opened = 0
  for _ = 1, 10 do opened = opened + s:get("small.txt?reuse-test").connections_opened end
  truthy(opened <= 1, "at most one new connection, got " .. opened)
  -- nginx writes "$connection $connection_requests $method $uri ..." per request, after it
  -- has sent the response: give the last line a moment to land (bounded).
  local ids, lines
  for _ = 1, 50 do
    ids, lines = {}, 0
    for line in io.open(logfile):read("a"):sub(before + 1):gmatch("[^\n]+") do
      local id, uri = line:match("^(%d+) %d+ GET (%S+)")
      if uri == "/small.txt?reuse-test" then ids[id] = true; lines = lines + 1 end
    end
    if lines >= 10 then break end
    task.sleep(0.02)
  end
  eq(lines, 10, "ten requests logged")
  local distinct = 0
  for _ in pairs(ids) do distinct = distinct + 1 end
  eq(distinct, 1, "all on one connection")
end)

test("bad input: invalid URLs, refused connections, cut-off bodies, max_body", function()
  local e = fails("argument", function() http.get("http://exa mple.com/") end, "a URL with a space")
  truthy(e.message:find("exa mple", 1, true), "the message names the URL: " .. e.message)
  e = fails("argument", function() http.get("ftp://127.0.0.1/x") end, "an ftp URL")
  truthy(e.message:find("ftp://127.0.0.1/x", 1, true), "names it")
  fails("argument", function() http.get("users/1") end, "a relative URL without base_url")
  e = fails("argument", function() http.get(42) end, "a number")
  truthy(e.message:find("#1", 1, true), "names the argument's position: " .. e.message)
  fails("argument", function() http.get(BIN, { timout = 1 }) end, "a misspelt option")
  fails("connect", function() http.get("http://127.0.0.1:1/") end, "a closed port")
  fails("protocol", function() http.get(HOSTILE .. "/truncated") end, "a body cut off")
  local big = fails("too_large", function() http.get(BIN .. "/bytes/5000", { max_body = 1000 }) end, "max_body")
  truthy(big.message:find("1000", 1, true), big.message)
  local s = http.session{ max_body = "1KB" }
  fails("too_large", function() s:get(BIN .. "/bytes/2048") end, "a session's max_body")
  eq(http.stats().transfers, 0, "no transfer left running")
end)

test("a host that does not resolve gives kind dns (in a loopback-only namespace)", function()
  local ns = "lunet-dns-" .. tostring(os.time()) .. tostring(math.random(1000))
  local code = h.run("ip netns add " .. ns)
  truthy(code == 0, "ip netns add works")
  local script = h.tmpname()
  local f = io.open(script, "w")
  f:write([[local ok, e = pcall(http.get, "http://no-such-host.invalid/")
io.write(e.kind)]])
  f:close()
  local _, out = h.run("ip netns exec " .. ns .. " " .. h.lunet() .. " " .. script)
  h.run("ip netns del " .. ns)
  os.remove(script)
  eq(out, "dns", "kind")
end)

test("http.get inside a user coroutine suspends the coroutine, not the host", function()
  local co = coroutine.wrap(function(a)
    local got = coroutine.yield(a + 1)          -- a user's own yield still works
    local r = http.get(BIN .. "/get?c=" .. got)  -- a request in the middle of it
    coroutine.yield(r.json.args.c)
    return "end"
  end)
  eq(co(1), 2, "first user yield")
  eq(co("x"), "x", "after a request inside the coroutine")
  eq(co(), "end", "the coroutine finishes")
end)

h.done()

-- A plain request's response starts with its status; reason, url, http_version and elapsed are
-- fetched together at the first use of any (response.plain). Each must still be the response's
-- own, whichever is read first, and for responses read after others arrived.
test("a session's request methods name a URL that is not a string, and a call without the colon", function()
  -- A URL requested before skips the type check (http.lua: seen_urls holds only strings); any
  -- other value still gets the argument error, from get and get_async alike.
  local s = http.session{}
  eq(s:get(NGINX .. "/small.txt").status, 200, "a URL requested, and so seen")
  for _, bad in ipairs({ 42, {}, true }) do
    for _, name in ipairs({ "get_async", "get" }) do
      local ok, e = pcall(s[name], s, bad)
      eq(ok, false, name .. " with a " .. type(bad))
      truthy(tostring(e):find("URL string expected, got " .. type(bad), 1, true), tostring(e))
    end
  end
  local ok, e = pcall(s.get_async, NGINX .. "/small.txt")
  eq(ok, false, "s.get_async(url)")
  truthy(tostring(e):find("session expected", 1, true), tostring(e))
end)

test("a plain request's continuations run once each, in the order attached, before what they queue", function()
  local s = http.session{}
  local order = {}
  local function step(name) return function(t) order[#order + 1] = name .. " " .. t.result.status end end
  -- One continuation: run straight from the completion (runtime.delivering); what it queues
  -- (a continuation of a task it resolves) runs after it.
  local src = task.source()
  src.task:continue(function() order[#order + 1] = "queued by a" end)
  local a = s:get_async(NGINX .. "/small.txt"):continue(function(t) step("a")(t); src:resolve(true) end)
  -- Two continuations on one request: both, in the order attached.
  local b = s:get_async(NGINX .. "/small.txt")
  local b1, b2 = b:continue(step("b1")), b:continue(step("b2"))
  task.all{ a, b1, b2, src.task }:await()
  task.sleep(0)
  local function index(name) for i, v in ipairs(order) do if v == name then return i end end end
  eq(#order, 4, "each ran once: " .. table.concat(order, ", "))
  truthy(index("a 200") < index("queued by a"), "a before what it queued: " .. table.concat(order, ", "))
  truthy(index("b1 200") < index("b2 200"), "b1 before b2: " .. table.concat(order, ", "))
end)

test("a plain response's reason, url, version and elapsed are its own, whichever is read first", function()
  local s = http.session{}
  local ok_url, missing_url = NGINX .. "/index.json", NGINX .. "/no-such-file"
  local a, b, c = s:get(ok_url), s:get(missing_url), s:get(ok_url)
  eq({ a.status, b.status, c.status }, { 200, 404, 200 }, "statuses")
  eq(b.reason, "Not Found", "the 404's reason, read first")
  eq({ b.url, b.http_version }, { missing_url, "1.1" }, "the 404's url and version")
  eq(a.http_version, "1.1", "the first 200's version, read first")
  eq({ a.reason, a.url }, { "OK", ok_url }, "then its reason and url")
  truthy(type(c.elapsed) == "number" and c.elapsed > 0 and c.elapsed < 60, "elapsed read first: " .. tostring(c.elapsed))
  eq(tostring(c), "HTTP/1.1 200 OK (" .. ok_url .. ")", "tostring")
  local r = s:get_async(missing_url):await()
  eq(string.format("%s %s %s", r.url, r.reason, r.http_version), missing_url .. " Not Found 1.1", "through get_async")
end)

test("a plain response starts with a small body and fetches a larger one when read, byte for byte", function()
  local www = h.env("LUNET_NGINX_WWW")
  local s = http.session{}
  -- 4096 bytes is the most a plain response starts with (ResponseBinding.plainBodyLimit).
  for _, n in ipairs({ 0, 1, 4096, 4097, 300000 }) do
    local bytes = {}
    for i = 1, n do bytes[i] = string.char((i * 7 + i // 256) % 256) end
    local data = table.concat(bytes)
    local name = "/plain-body-" .. n .. ".bin"
    local f = assert(io.open(www .. name, "wb"))
    f:write(data)
    f:close()
    for _, how in ipairs({ "get", "get_async" }) do
      local r = how == "get" and s:get(NGINX .. name) or s:get_async(NGINX .. name):await()
      eq(r.status, 200, how .. " " .. n)
      if n <= 4096 then
        eq(rawget(r, "body"), data, how .. ": " .. n .. " bytes came with the response")
      else
        eq(rawget(r, "body"), nil, how .. ": " .. n .. " bytes wait until they are read")
      end
      eq(#r.body, n, how .. " length")
      truthy(r.body == data, how .. ": the " .. n .. " bytes read are the file's")
    end
    os.remove(www .. name)
  end
end)
