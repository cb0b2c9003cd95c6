-- Transfers hand libcurl a URL it parsed once (ParsedURL.swift, CURLOPT_CURLU) rather than the
-- text, and handles are reused from one request to the next without a reset. Each request must
-- still go to its own URL and report its own URL (r.url, libcurl's effective URL), written as
-- libcurl writes it, whichever URL the handle had before.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")

test("requests to different URLs in turn on one session each go to, and report, their own URL", function()
  local s = http.session{}
  local urls = { BIN .. "/anything/a", BIN .. "/anything/b?x=1", BIN .. "/anything/a", BIN .. "/anything/c%20d" }
  for round = 1, 2 do
    for _, u in ipairs(urls) do
      local r = s:get(u)
      eq({ r.status, r.url, r.json.url }, { 200, u, u }, "round " .. round .. ": " .. u)
    end
  end
end)

test("r.url is the URL as libcurl writes it: a lower-case scheme, a path of at least /", function()
  local s = http.session{}
  local host = BIN:match("^http://(.*)$")
  for _ = 1, 2 do
    local r = s:get("HTTP://" .. host)
    eq({ r.status, r.url }, { 200, "http://" .. host .. "/" }, "HTTP://host")
    r = s:get(BIN .. "/get?a=1")
    eq(r.url, BIN .. "/get?a=1", "the next request on the same handle")
  end
end)

test("after a redirect, the next request to the first URL starts there again", function()
  local s = http.session{}
  for _ = 1, 3 do
    local r = s:get(BIN .. "/redirect-to?url=/anything/landed")
    eq({ r.status, r.url, r.redirects }, { 200, BIN .. "/anything/landed", 1 }, "followed")
    r = s:get(BIN .. "/anything/plain")
    eq(r.url, BIN .. "/anything/plain", "then another URL")
  end
end)

test("64 requests in flight to alternating URLs each get their own answer", function()
  local s = http.session{}
  local list = {}
  for i = 1, 64 do
    local u = BIN .. "/anything/" .. (i % 2 == 0 and "even" or "odd") .. "?i=" .. (i % 3)
    list[i] = s:get_async(u):next(function(r) return { r.url, r.json.url, u } end)
  end
  for i, got in ipairs(task.all(list):await()) do
    eq(got[1], got[3], "r.url of request " .. i)
    eq(got[2], got[3], "the URL the server saw for request " .. i)
  end
end)

test("a URL libcurl cannot parse still fails with libcurl's own words, and the next one works", function()
  local s = http.session{}
  local e = h.fails("argument", function() return s:get("http://[::1/") end)
  truthy(e.message ~= "", "a message")
  eq(s:get(BIN .. "/get").status, 200, "the next request")
end)
