-- grpc.client against a real gRPC server (Tests/servers/grpc_server.py: grpcio, with reflection and
-- health, from the tests' venv; Tests/Fixtures/grpc/greet.proto): every call shape, schemas by
-- reflection, descriptor set and .proto, metadata both ways, statuses with details, deadlines
-- the server sees, large messages, TLS with the test CA, a server that is not gRPC, a server
-- that drops the connection mid-message, and the command line.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local HERE = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
local PROTO = HERE .. "../Fixtures/grpc/greet.proto"
local LUNET = h.lunet()
local SERVERS = h.env("LUNET_TEST_SERVERS")

local pipe, pid, port = h.start_venv_server("grpc_server.py")
local TARGET = "127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(pipe, pid); h.remove_temps() end)
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function client(opts) return grpc.client(TARGET, opts or { reflection = true }) end

test("reflection: the services, and a unary call with metadata both ways (binary too)", function()
  local g = client()
  local names = g:services()
  truthy(table.concat(names, " "):find("greet.Greeter", 1, true), table.concat(names, " "))
  local reply, r = g:call("greet.Greeter/SayHello", { name = "lunet" }, { metadata = { ["x-id"] = "7", ["x-bin-bin"] = "\0\1\255" } })
  eq(reply.message, "hello lunet")
  eq(r.headers["x-id"], "7", "initial metadata")
  eq(r.trailers["x-id-trailer"], "7", "trailing metadata")
  eq(require("lunet.base64").decode(r.trailers["x-bin-bin"]), "\0\1\255", "binary metadata, base64 on the wire")
end)

test("server streaming reads each reply as it arrives; client streaming; bidirectional", function()
  local g = client()
  local seen, t0 = {}, require("lunet.core").now()
  local first_at
  for m in g:stream("greet.Greeter/Count", { n = 3, delay_ms = 300 }) do
    seen[#seen + 1] = m.i
    first_at = first_at or (require("lunet.core").now() - t0)
  end
  eq(seen, { 1, 2, 3 }, "the replies in order")
  truthy(first_at < 0.5, "the first reply before the stream ended: " .. first_at .. " s")
  eq(g:call("greet.Greeter/Sum", { { v = 1 }, { v = 2 }, { v = 39 } }).total, 42, "a list for a client-streaming method")
  local up = g:client_stream("greet.Greeter/Sum")
  up:send{ v = 5 }
  up:send{ v = 6 }
  eq(up:close_and_receive().total, 11, "send, then close_and_receive")
  local chat = g:bidi("greet.Greeter/Chat")
  for _, text in ipairs({ "a", "b", "c" }) do
    chat:send{ text = text }
    eq(chat:receive().text, "echo: " .. text, "each reply read before the next message is sent: full duplex")
  end
  chat:close_send()
  eq(chat:receive(), nil, "the end, after this side closed")
  local many = g:client_stream("greet.Greeter/Sum")
  for i = 1, 100 do many:send{ v = i } end
  eq(many:close_and_receive().total, 5050, "a hundred messages, each sent as it was made")
end)

test("a non-OK status is kind grpc with its code, message and details", function()
  local e = fails("grpc", function() client():call("greet.Greeter/Fail", { code = "NOT_FOUND", message = "no such thing", with_details = true }) end)
  eq(e.code, "NOT_FOUND")
  eq(e.status, 5)
  truthy(e.message:find("no such thing", 1, true), e.message)
  eq(e.details.code, 5, "google.rpc.Status")
  eq(e.details.details[1].type_url, "type.googleapis.com/google.rpc.ErrorInfo", "its details")
  e = fails("grpc", function() client():call("greet.Greeter/Fail", { code = "UNAVAILABLE", message = "later" }) end)
  eq(e.code, "UNAVAILABLE")
end)

test("a deadline: sent as grpc-timeout, enforced here, and the server sees the call cancelled", function()
  local g = client()
  local t0 = require("lunet.core").now()
  local e = fails("grpc", function() g:call("greet.Greeter/Slow", { ms = 3000 }, { deadline = 0.3 }) end)
  eq(e.code, "DEADLINE_EXCEEDED")
  truthy(require("lunet.core").now() - t0 < 2, "bounded")
  local stats = g:call("greet.Greeter/Stats", {})
  truthy(stats.cancelled_count >= 1, "the server saw it cancelled: " .. json.encode(stats))
  -- a cancellation token, and task:cancel(): the call ends at once, and its transfer with it,
  -- and the server sees it cancelled (no deadline here to tell it so): libcurl 7.88 holds back
  -- the RST_STREAM of a stream it stops (curl issue 17611), so a connection no other call uses
  -- is closed (EventLoop.stopEarly)
  local before = stats.cancelled_count
  local t0c = require("lunet.core").now()
  local token = task.cancel_token()
  local t = g:call_async("greet.Greeter/Slow", { ms = 3000 }, { cancel = token })
  task.sleep(0.2)
  token:cancel()
  local ok, e = pcall(t.await, t)
  truthy(not ok and e.kind == "cancelled", "the call ended cancelled: " .. tostring(e))
  local t2 = g:call_async("greet.Greeter/Slow", { ms = 3000 })
  task.sleep(0.2)
  t2:cancel()
  truthy(not pcall(t2.await, t2), "task:cancel() ends it too")
  task.sleep(0.05)
  eq(http.stats().transfers, 0, "no transfer left running")
  truthy(require("lunet.core").now() - t0c < 2, "at once, not after the server's 3 s")
  eq(g:call("greet.Greeter/Stats", {}).cancelled_count, before + 2, "the server saw both calls cancelled")
end)

test("a call cancelled alone on its connection: the server sees it at once; the connection is kept where libcurl resets the stream itself", function()
  -- libcurl 7.88 to 8.14 hold the RST_STREAM back (curl issue 17611): lunet closes the
  -- connection, and the next call opens another. From 8.15 the reset goes at once and the
  -- connection stays for the next call.
  local v = http.libcurl().version_num
  local holds_reset_back = v >= 0x075800 and v < 0x080F00
  local g = client()
  local before = g:call("greet.Greeter/Stats", {}).cancelled_count or 0
  local t = g:call_async("greet.Greeter/Slow", { ms = 3000 })
  task.sleep(0.2)
  t:cancel()
  truthy(not pcall(t.await, t), "the call ended cancelled")
  local t0 = require("lunet.core").now()
  local stats, r = g:call("greet.Greeter/Stats", {})
  eq(r.connections_opened, holds_reset_back and 1 or 0,
    "libcurl " .. http.libcurl().version .. (holds_reset_back and ": the cancelled call's connection was closed" or ": it was kept"))
  while (stats.cancelled_count or 0) == before and require("lunet.core").now() - t0 < 2 do
    task.sleep(0.05)
    stats = g:call("greet.Greeter/Stats", {})
  end
  eq(stats.cancelled_count or 0, before + 1, "the server saw the call cancelled")
  truthy(require("lunet.core").now() - t0 < 1, "at once, not when the server's 3 s were up")
end)

test("a call cancelled beside another on the same connection: the other goes on, the server sees the cancel", function()
  local g = client()
  local before = g:call("greet.Greeter/Stats", {}).cancelled_count or 0
  local other = g:call_async("greet.Greeter/Slow", { ms = 600 })
  local gone = g:call_async("greet.Greeter/Slow", { ms = 3000 })
  task.sleep(0.2)
  gone:cancel()
  truthy(not pcall(gone.await, gone), "the cancelled call ended")
  eq(other:await().message, "slept 600 ms", "the call beside it was not cut")
  eq(g:call("greet.Greeter/Stats", {}).cancelled_count or 0, before + 1, "the server saw the one call cancelled")
end)

test("bad input is refused before sending: an unknown method lists the service's, a wrong field names it", function()
  local g = client()
  local e = fails("argument", function() g:call("greet.Greeter/SayHelo", {}) end)
  truthy(e.message:find("its methods: SayHello", 1, true), e.message)
  e = fails("argument", function() g:call("greet.Nope/X", {}) end)
  truthy(e.message:find("no service", 1, true), e.message)
  e = fails("argument", function() g:call("greet.Greeter/SayHello", { nme = "x" }) end)
  truthy(e.message:find("nme", 1, true), e.message)
  e = fails("argument", function() g:call("greet.Greeter/SayHello", { name = 5 }) end)
  truthy(e.message:find("name", 1, true), e.message)
  e = fails("argument", function() g:call("greet.Greeter/SayHello", { name = "x" }, { metadata = { ["x-a"] = "a\r\nx-injected: 1" } }) end)
  truthy(e.message:find("x-a", 1, true), "a metadata value with CR LF is refused: " .. e.message)
end)

test("messages over max_message are kind too_large (4 MiB by default); 16 MB when allowed", function()
  local g = client()
  eq(#g:call("greet.Greeter/Big", { size = 1000 }).payload, 1000)
  fails("too_large", function() g:call("greet.Greeter/Big", { size = 5 * 1024 * 1024 }) end)
  local big = client({ reflection = true, max_message = 32 * 1024 * 1024 })
  local reply = big:call("greet.Greeter/Big", { size = 16 * 1024 * 1024 })
  eq(#reply.payload, 16 * 1024 * 1024, "16 MB")
  eq(reply.payload:byte(1000 + 1), 1000 % 251, "its bytes")
end)

test("schemas from a .proto through protoc, and from a descriptor set, without reflection", function()
  local g = grpc.client(TARGET, { proto = PROTO })
  eq(g:call("greet.Greeter/SayHello", { name = "p" }).message, "hello p", ".proto")
  local set = h.tmpname()
  assert(os.execute("protoc --include_imports --descriptor_set_out=" .. q(set) .. " -I " .. q(HERE .. "../Fixtures/grpc") .. " " .. q(PROTO)))
  g = grpc.client(TARGET, { descriptor = set })
  eq(g:call("greet.Greeter/SayHello", { name = "d" }).message, "hello d", "descriptor set")
  truthy(g:describe("greet.Greeter"):find("rpc Count ( greet.CountRequest ) returns ( stream greet.CountReply );", 1, true), g:describe("greet.Greeter"))
end)

test("TLS with the test CA (HTTP/2 by ALPN)", function()
  local tls_pipe, tls_pid, tls_port = h.start_venv_server("grpc_server.py", "--tls", SERVERS .. "/tls/server.pem", SERVERS .. "/tls/server.key")
  local ok, err = pcall(function()
    local g = grpc.client("https://localhost:" .. tls_port, { reflection = true, ca_file = h.env("LUNET_TEST_CA") })
    eq(g:call("greet.Greeter/SayHello", { name = "tls" }).message, "hello tls")
    eq(g:call("greet.Greeter/SayHello", { name = "again" }).message, "hello again", "a second call on the connection")
    fails("tls", function() grpc.client("https://localhost:" .. tls_port, { reflection = true }):call("greet.Greeter/SayHello", {}) end, "an unknown CA")
  end)
  h.stop_server(tls_pipe, tls_pid)
  if not ok then error(err, 0) end
end)

test("a server that is not gRPC is kind protocol; one that drops the connection mid-message fails, never hangs", function()
  local g = grpc.client(h.env("LUNET_HTTPBIN"):gsub("^http://", ""), { proto = PROTO })
  -- httpbin answers HTTP/2's preface with a 400 and closes: read, that is kind protocol; but
  -- when its close resets the connection while the call is still being written (a race on a
  -- busy machine), nothing of its answer was read, and the failure is the connection's.
  local ok, e = pcall(g.call, g, "greet.Greeter/SayHello", { name = "x" })
  truthy(not ok and require("lunet.errors").is(e), "fails: " .. tostring(e))
  if e.kind == "connect" then
    truthy(e.message:find("sending to the server failed", 1, true), e.message)
  else
    eq(e.kind, "protocol", tostring(e))
    truthy(e.message:find("not answer as gRPC", 1, true), e.message)
  end
  local t0 = require("lunet.core").now()
  local ok, err = pcall(function() client():call("greet.Greeter/Reset", { name = "midmessage" }) end)
  truthy(not ok and require("lunet.errors").is(err), "an error: " .. tostring(err))
  truthy(require("lunet.core").now() - t0 < 10, "bounded")
end)

-- Issue 47, item 4: grpcurl's spellings: Go's one-dash flags and package.Service.Method.
test("lunet grpc takes grpcurl's spellings: -plaintext, -d, -max-msg-sz=N, describe package.Service.Method", function()
  local err = h.tmpname()
  local code, out = h.run("{ " .. q(LUNET) .. " grpc -plaintext -max-msg-sz=1000000 -d '{\"name\":\"go\"}' " .. q(TARGET)
    .. " greet.Greeter/SayHello 2>" .. q(err) .. "; }")
  eq(code, 0, out .. (h.read_file(err) or ""))
  eq(json.decode(out).message, "hello go")
  code, out = h.run("{ " .. q(LUNET) .. " grpc -plaintext " .. q(TARGET) .. " describe greet.Greeter.SayHello 2>&1; }")
  truthy(code == 0 and out:find("greet.Greeter/SayHello is a method", 1, true) and out:find("rpc SayHello", 1, true), out)
  code, out = h.run("{ " .. q(LUNET) .. " grpc -plaintext " .. q(TARGET) .. " describe greet.Greeter.NoSuch 2>&1; }")
  truthy(code ~= 0 and out:find("no service, method or message named 'greet.Greeter.NoSuch'", 1, true), out)
end)

test("lunet grpc: list, describe, a call with JSON in and out, exit 64 + the status code", function()
  local function run(args)
    local err = h.tmpname()
    local code, out = h.run("{ " .. q(LUNET) .. " grpc --plaintext " .. args .. " 2>" .. q(err) .. "; }")
    return code, out, h.read_file(err) or ""
  end
  local code, out = run(q(TARGET) .. " list")
  truthy(code == 0 and out:find("greet.Greeter", 1, true), out)
  code, out = run(q(TARGET) .. " list greet.Greeter")
  eq({ code, out:match("^[^\n]*\n[^\n]*\n") }, { 0, "greet.Greeter.SayHello\ngreet.Greeter.Count\n" }, "list SERVICE: its methods, as grpcurl")
  code, out = run(q(TARGET) .. " list no.Such")
  eq(code, 2, "list of an unknown service: " .. out)
  code, out = run(q(TARGET) .. " describe greet.HelloRequest")
  truthy(code == 0 and out:find("string name = 1;", 1, true), out)
  code, out = run(q(TARGET) .. " greet.Greeter/SayHello '{\"name\":\"cli\"}'")
  eq(code, 0, out)
  eq(json.decode(out).message, "hello cli")
  code, out = run("-d '{\"n\":2}' " .. q(TARGET) .. " greet.Greeter/Count")
  eq(out, '{"i":1}\n{"i":2}\n', "a reply a line")
  code, out = run(q(TARGET) .. " greet.Greeter/Sum -d @ <<'EOF'\n{\"v\":1} {\"v\":2}\nEOF\n")
  eq(json.decode(out).total, 3, "requests from standard input")
  local err
  code, out, err = run(q(TARGET) .. " greet.Greeter/Fail '{\"code\":\"NOT_FOUND\",\"message\":\"gone\"}'")
  eq(code, 64 + 5, "64 + NOT_FOUND: " .. err)
  code, out, err = run(q(TARGET) .. " greet.Greeter/Slow '{\"ms\":2000}' --deadline 0.2")
  eq(code, 64 + 4, "64 + DEADLINE_EXCEEDED: " .. err)
  code = run(q(TARGET) .. " greet.Greeter/SayHelo")
  eq(code, 2, "an unknown method is a usage error")
end)

test("a streaming call to a server that reads nothing: send waits past send_buffer, and close ends the wait", function()
  local bpipe, bpid, bport = h.start_venv_server("grpc_server.py", "--black-hole")
  local KB = 1024
  local g = grpc.client("127.0.0.1:" .. bport, { proto = PROTO, send_buffer = 64 * KB })
  truthy(fails("argument", function() g:bidi("greet.Greeter/Chat", { send_buffer = 0 }) end).message:find("send_buffer", 1, true))
  local chat = g:bidi("greet.Greeter/Chat")
  local text, sent = string.rep("x", 16 * KB), 0
  local sender = task.spawn(function()
    for i = 1, 200 do
      chat:send({ text = text })
      sent = i
    end
  end)
  local checked, problem = pcall(function()
    task.sleep(0.5)
    local held = sent
    truthy(held > 0 and held < 200, "the sender waits instead of queueing all 200 messages: " .. held)
    -- Besides send_buffer and the message that waits, libcurl holds up to its upload buffer
    -- (64 KiB) and has sent HTTP/2's first window (64 KiB) to a server that never answers.
    truthy(held * 16 * KB <= 64 * KB + 2 * 64 * KB + 16 * KB, "bounded: " .. held .. " messages of 16 KiB")
    task.sleep(0.2)
    eq(sent, held, "still waiting while nothing is read")
    chat:close()
    local ok, e = pcall(sender.await, sender)
    truthy(not ok and e.kind == "cancelled", "the waiting sender is let go, and its next send says the call was stopped: " .. tostring(e))
    truthy(sent <= held + 1, "nothing more was queued after the close")
    -- a server that accepts and never answers: a deadline still ends a unary call, and a
    -- reflection request (the client's deadline, else 10 s)
    local t0 = require("lunet.core").now()
    eq(fails("grpc", function() g:call("greet.Greeter/SayHello", { name = "x" }, { deadline = 0.3 }) end).code, "DEADLINE_EXCEEDED")
    local r = grpc.client("127.0.0.1:" .. bport, { reflection = true, deadline = 0.3 })
    truthy(not pcall(r.services, r), "reflection gives up")
    truthy(require("lunet.core").now() - t0 < 3, "within the deadlines")
  end)
  chat:close()
  h.stop_server(bpipe, bpid)
  if not checked then error(problem, 0) end
end)

test("unary calls are recorded in a HAR while http.record runs (they take the session's stages then)", function()
  local g = client()
  eq(g:call("greet.Greeter/SayHello", { name = "before" }).message, "hello before", "a call without a recording")
  local har = h.tmpname()
  local rec = http.record(har)
  local reply = g:call("greet.Greeter/SayHello", { name = "recorded" })
  rec.stop()
  eq(reply.message, "hello recorded")
  local doc = json.decode(assert(io.open(har)):read("a"))
  local urls = {}
  for _, e in ipairs(doc.log.entries) do urls[#urls + 1] = e.request.url end
  eq(#urls, 1, "the one call made while recording: " .. table.concat(urls, " "))
  truthy(urls[1]:find("/greet.Greeter/SayHello", 1, true), urls[1])
  os.remove(har)
end)

test("status.field reads one field as r.headers and r.trailers give it (repeated fields joined), without the tables", function()
  local status = require "lunet.grpc.status"
  local r = http.get(h.env("LUNET_HTTPBIN") .. "/response-headers?X-Twice=a&X-Twice=b&X-Once=c")
  eq(status.field(r, "x-twice"), "a, b")
  eq(status.field(r, "X-ONCE"), "c", "any case")
  eq(status.field(r, "x-none"), nil)
  eq(status.field(r, "x-once", true), nil, "not in the trailers")
  eq(status.field(r, "x-twice"), r.headers["x-twice"], "what r.headers says")
  local plain = { headers = { ["x-once"] = "c" }, trailers = { ["grpc-status"] = "0" } }   -- no core object
  eq(status.field(plain, "x-once"), "c")
  eq(status.field(plain, "grpc-status", true), "0")
end)

test("lunet load records gRPC calls: grpc_req_duration and grpc_reqs, by method and status", function()
  local script = h.temp_file(string.format([[
options = { scenarios = { s = { executor = "per-vu-iterations", vus = 2, iterations = 3 } },
  thresholds = { ["grpc_reqs{status:NOT_FOUND}"] = { "count == 2" } } }
return function(vu)
  local g = vu:grpc(%q, { proto = %q })
  g:call("greet.Greeter/SayHello", { name = "load" })
  if vu.iteration == 1 then   -- each VU's first iteration: two in all
    pcall(g.call, g, "greet.Greeter/Fail", { code = "NOT_FOUND", message = "x" })
  end
end]], TARGET, PROTO))
  local export, stream = h.tmpname(), h.tmpname()
  local code, out = h.run("{ " .. q(LUNET) .. " load -q " .. q(script) .. " --summary-export " .. q(export) .. " --out json=" .. q(stream) .. " 2>&1; }")
  eq(code, 0, out)
  local ex = json.decode(h.read_file(export))
  eq(ex.metrics.grpc_reqs.count, 8, "six calls and two that failed")
  eq(ex.metrics.grpc_req_duration["p(95)"] ~= nil, true, "a trend of the calls' durations")
  eq(ex.metrics["grpc_reqs{status:NOT_FOUND}"].thresholds["count == 2"], false, "the failed ones by their status")
  truthy(out:find("grpc_req_duration", 1, true), "in the summary:\n" .. out)
end)

test("h2c calls share a connection, and a restarted server's next call goes through", function()
  local spipe, spid, sport = h.start_venv_server("grpc_server.py")
  local g = grpc.client("127.0.0.1:" .. sport, { proto = PROTO })
  local opened = 0
  for i = 1, 5 do
    local _, r = g:call("greet.Greeter/SayHello", { name = "n" .. i })
    opened = opened + r.connections_opened
  end
  eq(opened, 1, "five calls, one connection (libcurl 7.88 cannot reuse h2c by itself: H2CReuse)")
  h.stop_server(spipe, spid)
  os.execute("sleep 0.3")
  spipe, spid = h.start_venv_server("grpc_server.py", "--port", sport)
  local ok, err = pcall(function()
    eq(g:call("greet.Greeter/SayHello", { name = "again" }).message, "hello again", "the first call after the restart")
    eq(g:call("greet.Greeter/SayHello", { name = "and" }).message, "hello and", "and the next")
  end)
  h.stop_server(spipe, spid)
  if not ok then error(err, 0) end
end)

test("gzip both ways: compressed replies read, requests sent compressed, a bomb stays under max_message", function()
  local g = client()
  local reply, r = g:call("greet.Greeter/Big", { size = 1000 }, { metadata = { ["x-compress"] = "gzip" } })
  eq(r.headers["grpc-encoding"], "gzip", "the server compressed its reply")
  eq(#reply.payload, 1000)
  eq(reply.payload:byte(251 + 2), 1, "its bytes")
  local zg = client({ reflection = true, compression = "gzip" })
  local got = zg:call("greet.Greeter/Big", { size = 0, payload = string.rep("lunet ", 20000) })
  eq(got.received, 120000, "the server read our gzip'ed message whole")
  eq(zg:call("greet.Greeter/Sum", { { v = 20 }, { v = 22 } }).total, 42, "client streaming, compressed")
  -- 5 MiB of a repeating pattern is a few KB gzip'ed: refused before more than 4 MiB is held
  fails("too_large", function() g:call("greet.Greeter/Big", { size = 5 * 1024 * 1024 }, { metadata = { ["x-compress"] = "gzip" } }) end)
  fails("argument", function() client({ reflection = true, compression = "br" }):call("greet.Greeter/SayHello", {}) end, "an encoding lunet has not")
end)

test("core.gzip writes what gzip reads, and reads what gzip writes", function()
  local core = require "lunet.core"
  local text = string.rep("interop ", 5000)
  local file = h.tmpname()
  local f = assert(io.open(file, "wb")); f:write(core.gzip(text)); f:close()
  local p = io.popen("gzip -dc < " .. q(file)); local back = p:read("a"); p:close()
  eq(back, text, "gzip -d reads lunet's")
  p = io.popen("printf 'made by gzip' | gzip -c"); local z = p:read("a"); p:close()
  eq(core.gunzip(z), "made by gzip", "lunet reads gzip's")
  fails("decode", function() core.gunzip(z:sub(1, -4)) end, "cut short")
end)

test("docs/grpc.md's example runs as written, against the test server", function()
  local doc = assert(h.read_file(HERE .. "../../docs/grpc.md"))
  local block = assert(doc:match("```lua\n(.-)```"), "a lua block"):gsub("127%.0%.0%.1:50051", TARGET)
  local printed = {}
  local env = setmetatable({ print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    printed[#printed + 1] = table.concat(parts, "\t")
  end }, { __index = _G })
  assert(load(block, "=docs/grpc.md", "t", env))()
  local all = table.concat(printed, "\n")
  truthy(all:find("hello lunet\t1\t1", 1, true) and all:find("\n3\n", 1, true) and all:find("echo: hi", 1, true)
    and all:find("service Greeter", 1, true), all)
end)

h.done()
