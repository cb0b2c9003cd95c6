-- The HAR recorder (lunet.har): what a run's requests become in HAR 1.2 (secrets masked unless
-- asked), and its timings from lunet's cumulative ones.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy

local BIN = h.env("LUNET_HTTPBIN")
local TLS = h.env("LUNET_NGINX_TLS")
local CA = h.env("LUNET_TEST_CA")

local function q(s) return "'" .. string.gsub(s, "'", "'\\''") .. "'" end

local function tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end
local TMP = tmpdir()

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end


local function unbase64(s)
  local B = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  s = string.gsub(s, "[^%w%+/]", "")
  local out = {}
  for i = 1, #s, 4 do
    local n, chars = 0, 0
    for j = i, i + 3 do
      local c = string.sub(s, j, j)
      n = n * 64 + (c ~= "" and (string.find(B, c, 1, true) - 1) or 0)
      if c ~= "" then chars = chars + 1 end
    end
    local bytes = string.char((n >> 16) & 255, (n >> 8) & 255, n & 255)
    out[#out + 1] = string.sub(bytes, 1, chars - 1)
  end
  return table.concat(out)
end

local function required(t, fields, what)
  for _, k in ipairs(fields) do truthy(t[k] ~= nil, what .. " has " .. k) end
end

test("HAR: requests recorded as HAR 1.2, secrets masked", function()
  local har = require "lunet.har"
  local rec = har.new()
  local started = os.time() + 0.5
  local r1 = http.get(BIN .. "/get", { query = { token = "s3cret", page = 2 },
    headers = { Authorization = "Bearer s3cret", Cookie = "session=s3cret; theme=dark" } })
  rec:add(r1, started)
  rec:add(http.post(BIN .. "/post", { form = { user = "me", password = "s3cret" } }))
  local bytes = http.get(BIN .. "/bytes/64?seed=7")
  rec:add(bytes)
  rec:add(http.get(BIN .. "/cookies/set?sid=abc", { follow = false }))
  rec:add(http.get(TLS .. "/", { ca_file = CA }))
  local _, err = pcall(http.get, "http://127.0.0.1:1/x?api_key=s3cret")
  rec:add(err)
  local _, invalid = pcall(function() return http.session{ accept_status = "2xx" }:get(BIN .. "/status/503") end)
  rec:add(invalid)
  eq(rec:count(), 7, "entries")

  local path = TMP .. "/run.har"
  eq(rec:write(path), true, "written")
  local doc = json.decode(read(path))
  eq(doc.log.version, "1.2", "log.version")
  eq(doc.log.creator.name, "lunet", "creator")
  truthy(doc.log.creator.version:match("^%d+%.%d+"), "creator version")
  eq(#doc.log.entries, 7, "entries written")
  for i, e in ipairs(doc.log.entries) do
    local what = "entry " .. i
    required(e, { "startedDateTime", "time", "request", "response", "cache", "timings" }, what)
    truthy(e.startedDateTime:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%dZ$"), what .. " ISO 8601: " .. e.startedDateTime)
    required(e.request, { "method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize" }, what .. " request")
    required(e.response, { "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize" }, what .. " response")
    required(e.response.content, { "size", "mimeType" }, what .. " content")
    for _, k in ipairs({ "send", "wait", "receive" }) do truthy(e.timings[k] >= 0, what .. " timings." .. k) end
    for _, k in ipairs({ "blocked", "dns", "connect", "ssl" }) do truthy(e.timings[k] >= -1, what .. " timings." .. k) end
    -- Everything but bodies is free of the secrets (httpbin echoes them in its bodies).
    local copy = json.decode(json.encode(e))
    copy.response.content = nil
    copy.request.postData = copy.request.postData and { params = copy.request.postData.params, text = copy.request.postData.text }
    truthy(not json.encode(copy):find("s3cret", 1, true), what .. " masks secrets: " .. json.encode(copy))
  end
  local e1 = doc.log.entries[1]
  eq(e1.startedDateTime, har.iso8601(started), "startedDateTime from started_at")
  eq(e1.request.method, "GET", "method")
  eq(e1.request.url, BIN .. "/get?page=2&token=***", "token masked in the URL")
  eq(e1.request.queryString, { { name = "page", value = "2" }, { name = "token", value = "***" } }, "queryString")
  local auth
  for _, hd in ipairs(e1.request.headers) do if hd.name:lower() == "authorization" then auth = hd.value end end
  eq(auth, "***", "Authorization masked")
  eq(e1.request.cookies, { { name = "session", value = "***" }, { name = "theme", value = "***" } }, "request cookies masked")
  eq(e1.response.status, 200, "status")
  eq(e1.response.httpVersion, "HTTP/1.1", "httpVersion")
  eq(e1.response.content.mimeType, "application/json", "mimeType")
  eq(e1.response.content.text, r1.body, "text body kept")
  local sum = e1.timings.wait + e1.timings.receive + math.max(e1.timings.dns, 0) + math.max(e1.timings.connect, 0)
  truthy(math.abs(e1.time - sum) < 0.01, "time is the sum of the phases: " .. e1.time .. " vs " .. sum)

  local post = doc.log.entries[2].request.postData
  eq(post.mimeType, "application/x-www-form-urlencoded", "postData mimeType")
  eq(post.params, { { name = "password", value = "***" }, { name = "user", value = "me" } }, "form params masked")

  local bin = doc.log.entries[3].response.content
  eq(bin.encoding, "base64", "binary content as base64")
  eq(unbase64(bin.text), bytes.body, "base64 decodes to the body")
  eq(bin.size, 64, "size")

  local cookie = doc.log.entries[4].response
  eq(cookie.status, 302, "a redirect not followed")
  eq(cookie.redirectURL, "/cookies", "redirectURL")
  eq(cookie.cookies[1].name, "sid", "Set-Cookie parsed")
  eq(cookie.cookies[1].value, "***", "Set-Cookie masked")

  local tls = doc.log.entries[5]
  eq(tls.request.url, TLS .. "/", "TLS url")
  truthy(tls.timings.ssl >= 0 and tls.timings.connect >= tls.timings.ssl, "ssl time, included in connect")

  local failed = doc.log.entries[6]
  eq(failed.response.status, 0, "an error without a response")
  eq(failed.response._errorKind, "connect", "its kind")
  eq(failed.request.url, "http://127.0.0.1:1/x?api_key=***", "api_key masked")
  local invalid_entry = doc.log.entries[7]
  eq({ invalid_entry.response.status, invalid_entry.response._errorKind }, { 503, "status" }, "an error with a response")
  eq(invalid_entry.request.url, BIN .. "/status/503", "its request")

  eq(rec:write(path, { mask_secrets = false }), true, "written unmasked")
  local raw = json.decode(read(path))
  eq(raw.log.entries[1].request.url, BIN .. "/get?page=2&token=s3cret", "the URL as sent")
  eq(raw.log.entries[4].response.cookies[1].value, "abc", "the cookie as sent")
end)

test("HAR timings from lunet's cumulative timings", function()
  local har = require "lunet.har"
  eq(har.timings({ dns = 0.001, connect = 0.002, tls = 0.005, ttfb = 0.010, total = 0.012 }),
    { blocked = -1, dns = 1, connect = 4, ssl = 3, send = 0, wait = 5, receive = 2 }, "a new TLS connection")
  eq(har.timings({ dns = 0.001, connect = 0.002, tls = 0, ttfb = 0.004, total = 0.0045 }),
    { blocked = -1, dns = 1, connect = 1, ssl = -1, send = 0, wait = 2, receive = 0.5 }, "plain HTTP")
  eq(har.timings({ dns = 0, connect = 0, tls = 0, ttfb = 0.003, total = 0.004 }),
    { blocked = -1, dns = -1, connect = -1, ssl = -1, send = 0, wait = 3, receive = 1 }, "a reused connection")
  local now = har.now()
  truthy(math.abs(now - os.time()) <= 1.5, "har.now() is the wall clock: " .. now)
  eq(har.iso8601(1700000000.1234), "2023-11-14T22:13:20.123Z", "iso8601")
end)

test("HAR keeps a request its task's :timeout() ended, with the error (issue 47, item 8)", function()
  local path = TMP .. "/timeout.har"
  local rec = http.record(path)
  local t = http.get_async(BIN .. "/delay/3"):timeout(0.3)
  local ok, err = pcall(t.await, t)
  eq(ok, false, "the task timed out")
  truthy(tostring(err):find("timeout", 1, true), tostring(err))
  http.get(BIN .. "/get")   -- the loop turns: the cancelled transfer's outcome comes back
  rec:stop()
  local entries = json.decode(read(path)).log.entries
  eq(#entries, 2, "both requests")
  local cut = entries[1].request.url:find("/delay/3", 1, true) and entries[1] or entries[2]
  truthy(cut.request.url:find("/delay/3", 1, true), "the request the timeout ended is there")
  eq(cut.response.status, 0, "no response")
  truthy(cut.response._error and cut.response._error ~= "", "its error: " .. tostring(cut.response._error))
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. q(TMP)) end)
h.done()
