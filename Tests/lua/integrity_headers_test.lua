-- Issue 33, item 1: bytes that become syntax. CR, LF or NUL in a header name or value, from any
-- way in (a request's headers, a session's, a session file's, a WebSocket's headers or
-- protocols, an event stream's headers, an OAuth token the token endpoint handed over), are
-- refused before anything is sent. Tests/servers/integrity_server.py records what reached it.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails

local server, pid, port = h.start_server("integrity_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local BASE = "http://127.0.0.1:" .. port

-- The requests the server received since the last call (the record is emptied).
local function received()
  return http.get(BASE .. "/_log?clear=1").json
end

local function nothing_sent(what)
  local got = received()
  eq(#got, 0, what .. ": requests that reached the server (" .. h.show(got) .. ")")
end

local INJECTED = "foo\r\nX-Inj: 1"

test("a CR LF in a request header's value is refused (kind argument, the header named), nothing sent", function()
  received()
  local e = fails("argument", function() http.get(BASE .. "/echo", { headers = { ["X-A"] = INJECTED } }) end, "CRLF value")
  truthy(e.message:find("X-A", 1, true), "the message names the header: " .. e.message)
  truthy(e.message:find("line break", 1, true), "and says why: " .. e.message)
  truthy(not e.message:find("\r", 1, true), "the message itself holds no CR")
  nothing_sent("a CRLF value")
  -- A lone LF, a lone CR, the async form and other methods: the same.
  fails("argument", function() http.get(BASE .. "/echo", { headers = { ["X-A"] = "a\nb" } }) end, "LF")
  fails("argument", function() http.get(BASE .. "/echo", { headers = { ["X-A"] = "a\rb" } }) end, "CR")
  fails("argument", function() http.post(BASE .. "/echo", { headers = { ["X-A"] = "a\nb" }, body = "x" }) end, "POST")
  fails("argument", function() http.get_async(BASE .. "/echo", { headers = { ["X-A"] = "a\nb" } }):await() end, "async")
  nothing_sent("CR, LF, POST, async")
end)

test("a NUL in a header value is refused, not cut short", function()
  received()
  local e = fails("argument", function() http.get(BASE .. "/echo", { headers = { ["X-A"] = "before\0after" } }) end, "NUL")
  truthy(e.message:find("NUL", 1, true), e.message)
  nothing_sent("a NUL value")
end)

test("a header name with CR LF, a colon or a space is refused", function()
  received()
  for _, name in ipairs({ "X-A\r\nX-Inj", "X-A: 1", "X A", "", "X\0A" }) do
    local e = fails("argument", function() http.get(BASE .. "/echo", { headers = { [name] = "v" } }) end, h.show(name))
    truthy(e.message:find("not a field name", 1, true), e.message)
  end
  -- A header removed by name (false) is a name too.
  fails("argument", function() http.get(BASE .. "/echo", { headers = { ["User-Agent\r\nX-Inj: 1"] = false } }) end, "removed")
  nothing_sent("bad names")
end)

test("a session's headers, set when made or later, are checked on every request", function()
  received()
  fails("argument", function() http.session{ headers = { ["X-S"] = INJECTED } }:get(BASE .. "/echo") end, "made with")
  local s = http.session{ base_url = BASE }
  eq(s:get("/echo").status, 200, "a clean session works")
  s.headers["X-Later"] = INJECTED
  local e = fails("argument", function() s:get("/echo") end, "set later (the plain path)")
  truthy(e.message:find("X-Later", 1, true), e.message)
  fails("argument", function() s:get_async("/echo"):await() end, "async plain path")
  received()
  s.headers["X-Later"] = nil
  eq(s:get("/echo").status, 200, "mended, it works again")
  local got = received()
  eq(#got, 1, "one request reached the server")
end)

test("a session file's headers (http.session{ name = path }) are checked too", function()
  received()
  local path = h.tmpname() .. ".json"
  local f = assert(io.open(path, "w"))
  f:write(json.encode({ lunet_session = 1, headers = { ["X-From-File"] = INJECTED } }))
  f:close()
  local s = http.session{ name = path, base_url = BASE }
  local e = fails("argument", function() s:get("/echo") end, "a session file's header")
  truthy(e.message:find("X-From-File", 1, true), e.message)
  nothing_sent("a session file's header")
  -- The command line reads the same file: refused there as well (exit 1, nothing sent).
  local code, out = h.run(h.lunet() .. " --session " .. path .. " GET " .. BASE .. "/echo")
  truthy(code ~= 0, "lunet --session with that file fails: " .. out)
  truthy(out:find("X-From-File", 1, true), out)
  nothing_sent("the command line with that session file")
end)

test("an auth scheme's values (bearer, api_key, aws_sigv4 token) are checked", function()
  received()
  fails("argument", function() http.session{ auth = { bearer = "t\r\nX-Inj: 1" } }:get(BASE .. "/echo") end, "bearer")
  fails("argument", function()
    http.session{ auth = { api_key = { header = "X-Key", value = "k\nX-Inj: 1" } } }:get(BASE .. "/echo")
  end, "api_key")
  fails("argument", function()
    http.session{ auth = { aws_sigv4 = { provider = "aws:amz:us-east-1:service", key = "AK", secret = "S", token = "t\r\nX-Inj: 1" } } }:get(BASE .. "/echo")
  end, "sigv4 token")
  nothing_sent("auth values")
end)

test("a WebSocket's headers and protocols are checked before it connects", function()
  received()
  local ws = BASE:gsub("^http", "ws") .. "/echo"
  local e = fails("argument", function() http.websocket(ws, { headers = { ["X-W"] = INJECTED } }) end, "ws header")
  truthy(e.message:find("X-W", 1, true), e.message)
  e = fails("argument", function() http.websocket(ws, { protocols = { "chat\r\nX-Inj: 1" } }) end, "ws protocol")
  truthy(e.message:find("protocol", 1, true), e.message)
  fails("argument", function() http.websocket(ws, { protocols = { "a b" } }) end, "a protocol with a space")
  nothing_sent("websocket")
end)

test("an event stream's headers are checked (the stream stops with kind argument)", function()
  received()
  local stream = http.sse(BASE .. "/sse/empty?key=hdr", { headers = { ["X-E"] = INJECTED } })
  local e = fails("argument", function() stream:await() end, "sse header")
  truthy(e.message:find("X-E", 1, true), e.message)
  eq(stream.reconnects, 0, "no reconnect for a request that cannot be sent")
  nothing_sent("sse")
end)

test("an OAuth access token holding CR LF or NUL is an auth error; the request is not sent", function()
  received()
  for _, mode in ipairs({ "crlf", "nul" }) do
    local s = http.session{ base_url = BASE, auth = { oauth2 = { token_url = "/token?mode=" .. mode, client_id = "id", client_secret = "sec" } } }
    local e = fails("auth", function() s:get("/echo") end, "token " .. mode)
    truthy(e.message:find("token", 1, true), e.message)
    local got = received()
    eq(#got, 1, mode .. ": only the token request reached the server")
    truthy(got[1].path:find("^/token"), mode .. ": and it was the token request: " .. got[1].path)
  end
end)

test("a clean request after all of these goes out with its headers intact", function()
  received()
  local r = http.get(BASE .. "/echo", { headers = { ["X-A"] = "a value: with colon; and tab\tinside" } })
  eq(r.status, 200, "sent")
  local found
  for _, f in ipairs(r.json.headers) do if f[1] == "X-A" then found = f[2] end end
  eq(found, "a value: with colon; and tab\tinside", "the value as given")
end)

test("a 5 MB token is an auth error about the token, not about a response header (item 16)", function()
  received()
  local s = http.session{ base_url = BASE, auth = { oauth2 = { token_url = "/token?mode=huge", client_id = "id", client_secret = "sec" } } }
  local e = fails("auth", function() s:get("/echo") end, "a 5 MB token")
  truthy(e.message:find("access token is 5242880 bytes", 1, true), e.message)
  truthy(not e.message:find("response", 1, true), e.message)
  eq(#received(), 1, "only the token request was sent")
  -- A header as large given from Lua: kind argument naming it, nothing sent.
  e = fails("argument", function() http.get(BASE .. "/echo", { headers = { ["X-Big"] = string.rep("t", 2 * 1024 * 1024) } }) end, "2 MB header")
  truthy(e.message:find("X-Big", 1, true), e.message)
  eq(#received(), 0, "nothing sent")
end)

h.done()
