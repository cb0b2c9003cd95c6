-- `lunet api` (lua/lunet/openapi/cli.lua) against ../shared/HOSTILE.md's classes: credentials
-- given on the command line are not sent to another host than the fetched document's unless the
-- user names it (--base-url), a document whose URL redirects elsewhere, a document's control
-- bytes (ESC, OSC) never reaching a terminal raw (stdout on a terminal, stderr always), CR LF
-- from the shell refused in headers and encoded in paths and queries, and the exit status of
-- each failure.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local LUNET = h.lunet()

local pipe, pid, port = h.start_server("echo_head_server.py")
local ECHO = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(pipe, pid) end)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function api(args)
  local err = h.tmpname()
  local code, out = h.run("{ " .. q(LUNET) .. " api " .. args .. " 2>" .. q(err) .. "; }")
  return code, out, h.read_file(err) or ""
end

local function doc(server)
  return { openapi = "3.0.3", info = { title = "t", version = "1" }, servers = { { url = server } },
    paths = {
      ["/x/{id}"] = { get = { operationId = "getX", summary = "sum\27]0;pwned\7\27[2J", description = "desc\27[31mred",
        parameters = { { name = "id", ["in"] = "path", required = true, schema = { type = "string" } },
                       { name = "q", ["in"] = "query", schema = { type = "string" } },
                       { name = "X-Trace", ["in"] = "header", schema = { type = "string", enum = { "a\27[31m", "b" } } } },
        responses = { default = { description = "any" } } } },
      ["/esc"] = { get = { operationId = "op\27]0;evil\7", responses = { default = { description = "d" } } } },
    } }
end

-- httpbin's /base64/ serves what it decodes: a document from a server, httpbin's host.
local function served(d) return h.served_by_httpbin(BIN, json.encode(d)) end

test("credentials from the command line are not sent to another host the fetched document names", function()
  local url = served(doc(ECHO .. "/api"))
  for _, given in ipairs({ "-A bearer -a TOKSECRET", "--auth=user:PWSECRET", "-va user:PWSECRET",
                           q("Authorization:Bearer HDRSECRET"), "X-Api-Key:KEYSECRET", "Cookie:sid=COOKIESECRET" }) do
    local code, out, err = api(q(url) .. " getX id==1 " .. given)
    eq(code, 2, given .. ": refused before sending:\n" .. out .. err)
    truthy(not (out .. err):find("SECRET", 1, true), given .. ": nothing sent, no secret shown:\n" .. out .. err)
    truthy(err:find(ECHO, 1, true) and err:find("--base-url", 1, true) and err:find("another host", 1, true),
      given .. ": the message names the host and the way out: " .. err)
  end
  -- The user names the host: it gets them. Without credentials, the document's server is used.
  local code, out, err = api(q(url) .. " getX id==1 -A bearer -a GIVEN --print=b --base-url " .. q(ECHO .. "/api"))
  eq(code, 0, err)
  truthy(out:find("Authorization: Bearer GIVEN", 1, true), out)
  code, out, err = api(q(url) .. " getX id==1 --print=b")
  eq(code, 0, err)
  truthy(out:find("^GET /api/x/1 ") and not out:find("Authorization", 1, true), out)
  -- A server on the document's own host gets them; so does any server of a document read from a file.
  code, out, err = api(q(served(doc("/anything/api"))) .. " getX id==1 -A bearer -a SAMEHOST --print=b")
  eq(code, 0, err)
  eq(json.decode(out).headers.Authorization, "Bearer SAMEHOST")
  code, out, err = api(q(h.temp_file(json.encode(doc(ECHO .. "/api")), ".json")) .. " getX id==1 -A bearer -a FILE --print=b")
  eq(code, 0, err)
  truthy(out:find("Authorization: Bearer FILE", 1, true), out)
end)

test("a document URL that redirects to another host: its relative server is the host the user named", function()
  local there = served(doc("/anything/api")):gsub("^http://127%.0%.0%.1:", "http://localhost:")
  local url = BIN .. "/redirect-to?url=" .. there:gsub("[^%w]", function(c) return string.format("%%%02X", c:byte()) end)
  local code, out, err = api(q(url) .. " getX id==1 -A bearer -a NAMED --print=b")
  eq(code, 0, err)
  local echoed = json.decode(out)
  eq({ echoed.headers.Host, echoed.headers.Authorization }, { BIN:match("^http://(.*)$"), "Bearer NAMED" })
end)

test("a document's ESC and OSC bytes: escaped on a terminal's stdout, always on stderr", function()
  local file = h.temp_file(json.encode(doc(ECHO)), ".json")
  local code, _, err = api(q(file) .. " " .. q("op]0;evil"))
  eq(code, 2, err)
  truthy(err:find("did you mean", 1, true) and not err:find("[\0-\8\11-\31\127]"), "no control byte on stderr: " .. err:gsub("%c", "?"))
  truthy(err:find("op\\x1b]0;evil\\x07", 1, true), "shown escaped: " .. err)
  if not io.open("/usr/bin/script") then return end
  for _, args in ipairs({ q(file), q(file) .. " getX --help" }) do
    local _, out = h.run("script -qc " .. q(q(LUNET) .. " api " .. args) .. " /dev/null")
    truthy(not out:find("\27", 1, true), "no ESC on the terminal: " .. out:gsub("%c", "?"))
    truthy(out:find("\\x1b]0;", 1, true), "shown escaped: " .. out)
  end
end)

test("CR LF from the shell: refused in headers (exit 2, nothing sent), encoded in a path and a query", function()
  local file = h.temp_file(json.encode(doc(ECHO .. "/api")), ".json")
  for _, item in ipairs({ "X-Trace:a\r\nInjected: 1", "X-Trace==a\r\nInjected: 1", "X-Other:a\r\nInjected: 1", "X-Other:a\nb" }) do
    local code, out, err = api(q(file) .. " getX id==1 " .. q(item) .. " --no-validate")
    eq(code, 2, item)
    eq(out, "", "nothing sent: " .. out)
    truthy(err:find("line break", 1, true), err)
  end
  local code, out, err = api(q(file) .. " getX " .. q("id==a\r\nX: 1/../..") .. " " .. q("q==b\r\nY: 2") .. " --print=b")
  eq(code, 0, err)
  eq(out:match("^GET (%S+) HTTP"), "/api/x/a%0D%0AX%3A%201%2F..%2F..?q=b%0D%0AY%3A%202", out)
end)

test("the exit status of each failure", function()
  local file = h.temp_file(json.encode(doc(ECHO .. "/api")), ".json")
  local bad_yaml = h.temp_file("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {a: [\n", ".yaml")
  for _, c in ipairs({
    { "/nonexistent/openapi.yaml", 2, "cannot read it" },
    { q(BIN .. "/status/404"), 2, "answered 404" },
    { q(bad_yaml), 2, "never closed at line 3, column 12" },
    { q(file) .. " nope", 2, "no operation 'nope'" },
    { q(file) .. " getX", 2, "id" },
    { q(file) .. " getX id==1 bad-item", 2, "is not a request item" },
    { q(h.temp_file(json.encode(doc("http://127.0.0.1:9")), ".json")) .. " getX id==1", 1, "connect" },
    { q(file) .. " getX id==1 --base-url " .. q(BIN .. "/nowhere") .. " --check-status", 4, "" },   -- httpbin's 404
  }) do
    local code, out, err = api(c[1])
    eq(code, c[2], c[1] .. ":\n" .. out .. err)
    truthy(err:find(c[3], 1, true), c[1] .. ": " .. err)
  end
end)

h.done()

-- Issue 46, item 18: `lunet api URL --timeout N` bounds the document's fetch too (it was 30 s).
test("--timeout bounds the fetch of a document that never comes", function()
  local stall = h.env("LUNET_HOSTILE") .. "/stall"
  local t0 = require("lunet.core").now()
  local code, _, err = api(q(stall) .. " --timeout 1")
  local took = require("lunet.core").now() - t0
  eq(code, 2, err)
  truthy(err:find("timeout", 1, true), err)
  truthy(took < 5, "within its --timeout, not 30 s: " .. took .. " s")
end)
