-- Server-Sent Events: the WHATWG parsing rules (pure, no network), and the client against a
-- real event-stream server of the tests' own (Tests/servers/sse_server.py): reconnects with
-- Last-Event-ID and the server's retry, stop on 204 and on a wrong type or status, close().
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local parser = require "lunet.sse_parser"

-- Parses `pieces` (a list) into events, each as { type, data, id }.
local function parse(pieces)
  local p, out = parser.new(), {}
  for _, piece in ipairs(pieces) do
    for _, ev in ipairs(p:feed(piece)) do out[#out + 1] = { ev.type, ev.data, ev.id } end
  end
  p:finish()
  return out, p
end

test("parser: event, multi-line data, id, comments and the default type", function()
  local evs = parse({ ": hello\nevent: add\ndata: a\ndata: b\nid: 3\n\ndata: c\n\n" })
  eq(evs, { { "add", "a\nb", "3" }, { "message", "c", "3" } }, "events (the id carries over)")
end)

test("parser: CR, LF and CRLF line ends, and a CRLF split across two pieces", function()
  eq(parse({ "data: 1\r\rdata: 2\n\ndata: 3\r\n\r\n" }), { { "message", "1", "" }, { "message", "2", "" }, { "message", "3", "" } }, "mixed ends")
  eq(parse({ "data: x\r", "\n\r", "\n" }), { { "message", "x", "" } }, "CRLF split: one line end, not two")
end)

test("parser: fields split anywhere, a leading BOM (even split), no space after the colon", function()
  eq(parse({ "\239\187", "\191da", "ta:abc", "\n", "\n" }), { { "message", "abc", "" } }, "split BOM and field")
  eq(parse({ "data:  two spaces\n\n" }), { { "message", " two spaces", "" } }, "only one leading space is dropped")
  eq(parse({ "\239\187\191\239\187\191data: x\n\n" }), {}, "only the first BOM is dropped (the second makes an unknown field)")
end)

test("parser: retry takes digits only, id with NUL is ignored, empty data still dispatches, unfinished is dropped", function()
  local evs, p = parse({ "retry: 1500\nretry: 2x\nid: a\0b\ndata\n\ndata: unfinished" })
  eq(evs, { { "message", "", "" } }, "events")
  eq(p.retry, 1500, "retry in ms")
  eq(parse({ "data: x\nevent: e\n\n\n\nevent: only-type\n\n" }), { { "e", "x", "" } }, "blank lines and a type without data dispatch nothing")
end)

test("parser: any split of a stream into pieces gives the same events as the whole", function()
  local stream = "\239\187\191: c\r\nevent: a\rdata: 1\r\ndata:2\n\nid: 9\ndata\r\n\r\nretry: 5\ndata:  x:y\n\n"
  local whole = parse({ stream })
  eq(#whole, 3, "the whole stream's events")
  eq(whole[3], { "message", " x:y", "9" }, "a value keeps its colons and all but one space")
  for cut = 1, #stream - 1 do
    eq(parse({ stream:sub(1, cut), stream:sub(cut + 1) }), whole, "split at byte " .. cut)
  end
  local bytes = {}
  for i = 1, #stream do bytes[i] = stream:sub(i, i) end
  eq(parse(bytes), whole, "one byte at a time")
end)

test("parser: a field-less line, an unknown field and a long multi-line event", function()
  local lines = {}
  for i = 1, 40 do lines[i] = "data: " .. i end
  local evs = parse({ "nocolon\nfoo: bar\n" .. table.concat(lines, "\n") .. "\n\ndata: short\n\n" })
  eq(#evs, 2, "two events")
  eq(select(2, evs[1][2]:gsub("\n", "")), 39, "40 lines joined by LF")
  eq(evs[2][2], "short", "the next event holds only its own line")
end)

-- The event-stream server, started for this file.
local server, pid, port = h.start_server("sse_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

test("a stream delivers the server's events in order, through on_event and events()", function()
  local via_callback = {}
  local s = http.sse(BASE .. "/basic", { on_event = function(ev) via_callback[#via_callback + 1] = ev.type .. "=" .. ev.data end })
  local got = {}
  for ev in s:events() do
    got[#got + 1] = { ev.type, ev.data, ev.id }
    if #got == 6 then s:close() end
  end
  eq(got, {
    { "message", "first", "" }, { "update", "line one\nline two", "7" }, { "message", "split", "7" },
    { "message", "no space", "7" }, { "message", "after cr", "7" }, { "empty", "", "" },
  }, "events")
  eq(#via_callback, 6, "on_event saw them too")
  eq(s:await(), 6, "the stream's task: how many events")
end)

test("a dropped stream reconnects with Last-Event-ID after the server's retry, and 204 stops it", function()
  local s = http.sse(BASE .. "/resume?key=" .. tostring(os.time()) .. math.random(1e6))
  local data = {}
  for ev in s:events() do data[#data + 1] = ev.data end
  eq(data, { "one", "resumed after 1" }, "events across the reconnect")
  eq(s.reconnects, 2, "reconnected twice (the second answer was 204)")
  eq(s.retry, 0.05, "the server's retry")
end)

test("a connection cut mid-stream is reconnected", function()
  local s = http.sse(BASE .. "/drop?key=" .. tostring(os.time()) .. math.random(1e6))
  local data = {}
  for ev in s:events() do data[#data + 1] = ev.data end
  eq(data, { "a", "b" }, "events")
end)

test("a wrong Content-Type or status stops the stream with an error; 204 ends it quietly", function()
  local ok, err = pcall(function() return http.sse(BASE .. "/plain"):await() end)
  truthy(not ok and err.kind == "protocol" and err.message:find("text/plain", 1, true), tostring(err))
  ok, err = pcall(function() return http.sse(BASE .. "/status?code=503"):await() end)
  truthy(not ok and err.kind == "status" and err.response.status == 503, tostring(err))
  eq(http.sse(BASE .. "/nocontent"):await(), 0, "204: no events, no error")
  ok, err = pcall(function() for _ in http.sse(BASE .. "/plain"):events() do end end)
  truthy(not ok and err.kind == "protocol", "the iterator raises the failure: " .. tostring(err))
end)

test("a slow iterator holds the stream back and loses nothing; cancel closes it", function()
  local s = http.sse(BASE .. "/many?n=2000&key=" .. tostring(os.time()) .. math.random(1e6), { buffer = 16 })
  local n, last = 0, 0
  for ev in s:events() do
    n = n + 1
    eq(tonumber(ev.id), last + 1, "in order")
    last = tonumber(ev.id)
    if n % 100 == 0 then task.sleep(0.001) end
    truthy(s._tail - s._head + 1 <= 17, "the queue stays bounded")
  end
  eq(n, 2000, "every event once")
  local tok = task.cancel_token()
  local t = http.sse(BASE .. "/many?n=5&key=cancel" .. math.random(1e6), { cancel = tok, retry = 10000 })
  task.sleep(0.2)
  tok:cancel()
  task.sleep(0.05)
  truthy(t.closed, "the token closed the stream")
end)

test("an on_event that raises stops the stream with its error; it does not reconnect", function()
  local calls = 0
  local s = http.sse(BASE .. "/basic", { retry = 10, on_event = function() calls = calls + 1; error("on_event broke") end })
  local ok, err = pcall(s.await, s)
  truthy(not ok and tostring(err):find("on_event broke", 1, true), "the callback's error: " .. tostring(err))
  eq({ calls, s.reconnects }, { 1, 0 }, "called once, never reconnected")
end)

test("sessions: session:sse resolves against the base URL and sends the session's headers", function()
  local s = http.session{ base_url = BASE .. "/", headers = { ["X-Test"] = "1" } }
  local stream = s:sse("echo?key=session" .. math.random(1e6))
  local got = {}
  for ev in stream:events() do got[#got + 1] = ev.data end
  eq(got, { "1 text/event-stream" }, "the session's X-Test and the stream's Accept reached the server")
end)

if h.done then h.done() end
