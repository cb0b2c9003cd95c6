-- WebSocket (RFC 6455) against a server of the tests' own (Tests/servers/ws_server.py): echo of text
-- and binary, fragments with control frames between them, ping/pong, subprotocols, the closing
-- handshake both ways, sessions' headers, and servers that break the protocol, which must end
-- the connection with kind `protocol` and the right close code, never a crash or a hang.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy

local server, pid, port = h.start_server("ws_server.py")
local WS = "ws://127.0.0.1:" .. port
local HTTP = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

local n = 0
local function key() n = n + 1 return "k" .. n .. "-" .. math.random(1e9) end
-- The close code the server saw from the client on connection `k`.
local function client_close(k)
  for _ = 1, 50 do
    local body = http.get(HTTP .. "/last-close?key=" .. k).body
    if body ~= "none" then return body end
    task.sleep(0.02)
  end
  return "none"
end

test("echo: text and binary round trips, in order, then a clean close", function()
  local k = key()
  local ws = http.websocket(WS .. "/echo?key=" .. k)
  eq(ws.state, "open", "state")
  ws:send("hello")
  ws:send("wörld ✓")
  local bytes = string.rep("\0\255\1", 1000)
  ws:send(bytes, { binary = true })
  local big = string.rep("x", 200000)
  ws:send(big)
  local got = {}
  for i = 1, 4 do
    local data, kind = ws:receive():await()   -- issue 35: await gives the kind too
    got[i] = { data, kind }
  end
  eq(got[1], { "hello", "text" }, "first")
  eq(got[2], { "wörld ✓", "text" }, "second")
  eq(got[3], { bytes, "binary" }, "binary")
  eq(#got[4][1], 200000, "a message over 64 KB (16-bit and 64-bit lengths)")
  local code = ws:close(1000, "done")
  eq(code, 1000, "the server answered the close with 1000")
  eq(ws.state, "closed", "state")
  eq(client_close(k), "1000", "the server saw our close code")
  eq(ws:receive():await(), nil, "receive after a clean close: nil")
end)

test("ping gets its pong; sending after close is an error", function()
  local ws = http.websocket(WS .. "/echo?key=" .. key())
  eq(ws:ping("abc"):await(), "abc", "pong payload")
  ws:close()
  local ok, err = pcall(ws.send, ws, "late")
  truthy(not ok and err.kind == "closed", tostring(err))
end)

test("a fragmented message with a ping between its fragments, then the server closes", function()
  local ws = http.websocket(WS .. "/fragmented?key=" .. key())
  local msgs = {}
  for data in ws:messages() do msgs[#msgs + 1] = data end
  eq(msgs, { "Hello, wörld" }, "reassembled")
  eq({ ws.state, ws.close_code }, { "closed", 1000 }, "closed by the server")
end)

test("the server closes first: the client answers, and close() returns its code and reason", function()
  local ws = http.websocket(WS .. "/close-first?key=" .. key())
  eq({ ws:close() }, { 4000, "bye" }, "code and reason")
end)

test("subprotocols: the server's choice is ws.protocol", function()
  local ws = http.websocket(WS .. "/subprotocol?key=" .. key(), { protocols = { "superchat", "chat" } })
  eq(ws.protocol, "chat", "chosen")
  ws:close()
  local plain = http.websocket(WS .. "/echo?key=" .. key())
  eq(plain.protocol, nil, "none offered, none chosen")
  plain:close()
end)

test("sessions: base URL, the session's headers and auth reach the handshake", function()
  local s = http.session{ base_url = HTTP .. "/", headers = { ["X-Test"] = "yes" }, auth = { bearer = "t0k" } }
  local ws = s:websocket("headers?key=" .. key())
  eq(ws:receive():await(), "yes|Bearer t0k", "fields seen by the server")
  ws:close()
end)

test("a failed handshake and a dropped connection are errors, not hangs", function()
  local ok, err = pcall(http.websocket, WS .. "/bad-accept")
  truthy(not ok and err.kind == "protocol" and err.message:find("Sec-WebSocket-Accept", 1, true), tostring(err))
  ok, err = pcall(http.websocket, "ws://127.0.0.1:1/")
  truthy(not ok and err.kind == "connect", tostring(err))
  ok, err = pcall(http.websocket, "ftp://127.0.0.1/")
  truthy(not ok and err.kind == "argument", tostring(err))
  local ws = http.websocket(WS .. "/drop?key=" .. key())
  eq(ws:receive():await(), "one", "the message before the drop")
  ok, err = pcall(function() return ws:receive():await() end)
  truthy(not ok and err.kind == "connect" and ws.close_code == 1006, tostring(err))
end)

-- Each hostile frame: the close code the client must send, or nil when it must not send one.
local HOSTILE = {
  { "masked", 1002 }, { "rsv", 1002 }, { "opcode", 1002 }, { "len63", 1002 }, { "utf8", 1007 },
  { "close-code", 1002 }, { "big-ping", 1002 }, { "fragmented-ping", 1002 }, { "after-close", nil },
}
for _, case in ipairs(HOSTILE) do
  local name, code = case[1], case[2]
  test("a server that breaks the protocol (" .. name .. ") ends the connection with kind protocol", function()
    local k = key()
    local ws = http.websocket(WS .. "/hostile/" .. name .. "?key=" .. k)
    eq(ws:receive():await(), "before", "the message before the bad frame")
    local ok, err = pcall(function() return ws:receive():await() end)
    truthy(not ok and err.kind == "protocol", "kind protocol: " .. tostring(err))
    eq(ws.state, "closed", "closed")
    if code then eq(client_close(k), tostring(code), "the close code the client sent") end
  end)
end

test("a message over max_message fails with 1009", function()
  local k = key()
  local ws = http.websocket(WS .. "/echo?key=" .. k, { max_message = 1000 })
  ws:send(string.rep("y", 2000))
  local ok, err = pcall(function() return ws:receive():await() end)
  truthy(not ok and err.kind == "protocol", tostring(err))
  eq(client_close(k), "1009", "the close code the client sent")
end)

test("a slow reader holds the server back and loses nothing", function()
  local ws = http.websocket(WS .. "/echo?key=" .. key(), { buffer = 8 })
  for i = 1, 300 do ws:send("m" .. i) end
  for i = 1, 300 do
    eq(ws:receive():await(), "m" .. i, "message " .. i)
    truthy(#ws._queue <= 9 + 64, "the queue stays bounded")
    if i % 50 == 0 then task.sleep(0.01) end
  end
  ws:close()
end)

-- wss://: the same server over TLS with the test CA's certificate for localhost.
local servers = h.env("LUNET_TEST_SERVERS")
local tls_server, tls_pid, tls_port = h.start_server("ws_server.py", "--tls",
  servers .. "/tls/server.pem", servers .. "/tls/server.key")
h.cleanup(after_all, function() h.stop_server(tls_server, tls_pid) end)
local WSS = "wss://localhost:" .. tls_port
local CA = h.env("LUNET_TEST_CA")

test("wss://: echo over TLS with the session's CA; an unknown CA fails with kind tls", function()
  h.fails("tls", function() http.websocket(WSS .. "/echo?key=" .. key()) end, "a certificate from an unknown CA")
  local s = http.session{ base_url = WSS .. "/", ca_file = CA, headers = { ["X-Test"] = "over tls" } }
  local ws = s:websocket("echo?key=" .. key())
  local big = string.rep("\1\2\3\255", 50000)
  ws:send(big, { binary = true })
  ws:send("done ✓")
  local t = ws:receive()
  truthy(t:await() == big and t.results[2] == "binary", "200 KB binary message back, byte for byte")
  eq(ws:receive():await(), "done ✓", "text after it")
  eq(ws:close(1000, "bye"), 1000, "the closing handshake over TLS")
  local hs = s:websocket("headers")
  truthy(hs:receive():await():find("over tls", 1, true), "the session's header reached the server")
  eq(http.websocket(WSS .. "/echo", { insecure = true }).state, "open", "insecure skips verification")
end)

if h.done then h.done() end
