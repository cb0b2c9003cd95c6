-- `lunet import har` (docs/import.md): a HAR in Chromium's shape (Tests/data/har, pointed at
-- httpbin) and one lunet recorded itself with --har, as `lunet test` files that pass against the
-- same server and as a `lunet load` script with the HAR's gaps; credentials only ever as
-- environment variables; pages, --host, --no-static; bad input named with its place.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")
local HERE = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local SECRETS = { "COOKIE-SECRET-1", "QUERY-SECRET-2", "AUTH-SECRET-3", "APIKEY-SECRET-4" }
local ENV = "LUNET_HAR_COOKIE=sid=x LUNET_HAR_ACCESS_TOKEN=t LUNET_HAR_AUTHORIZATION='Bearer t' LUNET_HAR_X_API_KEY=k "

-- The Chromium-shaped HAR pointed at this run's httpbin (and at it as "localhost" for another host).
local function chromium_har()
  local text = h.read_file(HERE .. "../data/har/chromium_shape.har")
  local hostport = HTTPBIN:match("^http://(.*)$")
  text = text:gsub("OTHER_ORIGIN", (HTTPBIN:gsub("127%.0%.0%.1", "localhost"))):gsub("ORIGIN", HTTPBIN):gsub("HOSTPORT", hostport)
  return h.temp_file(text, ".har")
end

local function import(args)
  return h.run(q(LUNET) .. " import har " .. args)
end

test("a Chromium-shaped HAR as a test file: a describe a page, the statuses recorded, credentials from the environment; it passes", function()
  local har = chromium_har()
  local out_file = h.tmpname() .. "_test.lua"
  local code, out = import(q(har) .. " --host 127.0.0.1 -o " .. q(out_file))
  eq(code, 0, out)
  local text = h.read_file(out_file)
  for _, secret in ipairs(SECRETS) do truthy(not text:find(secret, 1, true), secret .. " is never written:\n" .. text) end
  for _, var in ipairs({ "LUNET_HAR_COOKIE", "LUNET_HAR_ACCESS_TOKEN", "LUNET_HAR_AUTHORIZATION", "LUNET_HAR_X_API_KEY" }) do
    truthy(text:find("need(\"" .. var .. "\")", 1, true), var .. " read from the environment")
  end
  truthy(text:find('describe("' .. HTTPBIN .. '/html - Shop"', 1, true) and text:find('describe("' .. HTTPBIN .. '/anything/checkout - Checkout"', 1, true), text)
  truthy(not text:find(":authority", 1, true) and not text:find("content-length", 1, true) and not text:find("accept-encoding", 1, true),
    "pseudo-headers and what lunet works out itself are left out")
  truthy(text:find("1 request to other hosts left out (--host)", 1, true) and not text:find("analytics", 1, true), "--host")
  truthy(text:find("expect(r).to.have_status(404)", 1, true), "a static asset stays without --no-static, with its status")
  local c2, tap = h.run(ENV .. q(LUNET) .. " test " .. q(out_file))
  eq(c2, 0, tap .. text)
  truthy(tap:find("5 passed, 0 failed", 1, true), tap)
  -- Without the variables, the tests that need one fail saying which.
  local c3, tap2 = h.run(q(LUNET) .. " test " .. q(out_file))
  truthy(c3 ~= 0 and tap2:find("LUNET_HAR_COOKIE is not set: it holds a credential", 1, true), tap2)
  -- --no-static: the stylesheet and the image left out, and said.
  code, out = import(q(har) .. " --no-static --host 127.0.0.1")
  eq(code, 0, out)
  truthy(out:find("2 static assets left out (--no-static)", 1, true) and not out:find("site.css", 1, true) and not out:find("/image/png", 1, true), out)
end)

test("--to load: one VU's iteration with the HAR's gaps as sleeps; the run sends every request", function()
  local har = chromium_har()
  local script = h.tmpname() .. ".lua"
  local code, out = import(q(har) .. " --to load --no-static --host 127.0.0.1 -o " .. q(script))
  eq(code, 0, out)
  local text = h.read_file(script)
  -- the page ended at 09:00:00.050Z, the checkout started at 10:00:01.550+01:00 (the assets and
  -- the other host's request between them are left out)
  truthy(text:find("sleep(1.50)", 1, true), "the 1.5 s between the pages, in two time zones: " .. text)
  local _, sleeps = text:gsub("sleep%(", "")
  eq(sleeps, 1, "gaps under 50 ms are not slept")
  local export = h.tmpname()
  local c2, run = h.run(ENV .. q(LUNET) .. " load -q " .. q(script) .. " --summary-export " .. q(export))
  eq(c2, 0, run)
  eq(require("lunet.json").decode(h.read_file(export)).metrics.http_reqs.count, 3, "the page, the checkout, the form")
end)

test("a HAR lunet recorded with --har imports back into a test that passes", function()
  local rec = h.temp_file(string.format([[
local s = http.session{ cookies = true }
s:get(%q, { follow = false })
s:get(%q, { headers = { Authorization = "Bearer eyJ.recorded-secret" } })
s:post(%q, { json = { a = 1 } })
s:get(%q, { accept_status = false })]], HTTPBIN .. "/cookies/set?theme=dark", HTTPBIN .. "/anything?api_key=recorded-key&x=1",
    HTTPBIN .. "/anything", HTTPBIN .. "/status/404"), ".lua")
  local har = h.tmpname() .. ".har"
  local code, out = h.run(q(LUNET) .. " --har " .. q(har) .. " " .. q(rec))
  eq(code, 0, out)
  local test_file = h.tmpname() .. "_test.lua"
  code, out = import(q(har) .. " -o " .. q(test_file))
  eq(code, 0, out)
  local text = h.read_file(test_file)
  truthy(not text:find("recorded", 1, true), "no credential in the output: " .. text)
  local c2, tap = h.run("LUNET_HAR_COOKIE=theme=dark LUNET_HAR_AUTHORIZATION=x LUNET_HAR_API_KEY=k " .. q(LUNET) .. " test " .. q(test_file))
  eq(c2, 0, tap .. text)
  truthy(tap:find("4 passed, 0 failed", 1, true), tap)
end)

test("an entry without its time (HAR files written by hand) imports; no gap is slept around it", function()
  local model = require("lunet.import.har").read('{"log": {"entries": [{"request": {"method": "GET", "url": "http://h/a"}},' ..
    ' {"request": {"method": "GET", "url": "http://h/b"}, "startedDateTime": "2026-12-01T09:00:05Z"}]}}')
  local text = require("lunet.import.har_render").load(model, "f.har")
  truthy(text:find('url = "http://h/a"', 1, true) and text:find('url = "http://h/b"', 1, true) and not text:find("sleep(", 1, true), text)
end)

test("a password in a URL is a variable too", function()
  local model = require("lunet.import.har").read('{"log": {"entries": [{"request": {"method": "GET", "url": "http://me:pa55@h/x?a=1"}, "startedDateTime": "2026-12-01T09:00:00Z"}]}}')
  local text = require("lunet.import.har_render").test(model, "f.har")
  truthy(not text:find("pa55", 1, true) and text:find('url = "http://me:" .. need("LUNET_HAR_URL_PASSWORD") .. "@h/x?a=1"', 1, true), text)
end)

test("bad input: not JSON (line and column), not HAR (a JSON pointer), nothing left: exit 2, nothing written", function()
  local out_file = h.tmpname()
  os.remove(out_file)
  local function refused(text, want)
    local code, out = import(q(h.temp_file(text, ".har")) .. " -o " .. q(out_file))
    eq(code, 2, out)
    truthy(out:find(want, 1, true), want .. " in: " .. out)
    eq(io.open(out_file), nil, "nothing written")
  end
  refused('{"log": {"entries": [\n  {"request": }]}}', "not JSON: unexpected character '}' (expected a value) at line 2, column 15")
  refused('{"log": {"entries": [{"request": {"method": "GET", "url": "http://h/", "headers": []}, "startedDateTime": "2026-12-01T09:00:00Z"},' ..
          ' {"request": {"method": "GET", "url": "ftp://h/"}}]}}', "not a HAR file: no http(s) URL at /log/entries/1/request/url")
  refused('{"log": {}}', "not a HAR file: no entries array at /log/entries")
  refused('{"log": {"entries": [{"request": {"method": "GET", "url": "http://h/"}, "startedDateTime": "yesterday"}]}}',
    "no ISO 8601 time at /log/entries/0/startedDateTime")
  local code, out = import(q(h.temp_file('{"log": {"entries": [{"request": {"method": "GET", "url": "http://h/x.css"}, "startedDateTime": "2026-12-01T09:00:00Z"}]}}', ".har")) .. " --no-static")
  eq(code, 2, out)
  truthy(out:find("no request left to import (1 static asset left out (--no-static))", 1, true), out)
  code, out = import(q(h.tmpname() .. "-missing.har"))
  eq(code, 2); truthy(out:find("cannot read", 1, true), out)
  code, out = import("x.har --to cli")
  eq(code, 2); truthy(out:find("--to takes test or load for a HAR, got 'cli'", 1, true), out)
end)

h.done()
