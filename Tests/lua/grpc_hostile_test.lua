-- grpc.client and `lunet grpc` against a hostile server (Tests/servers/grpc_hostile_server.py: HTTP/2
-- on raw sockets, one misbehaviour a server), by the classes of HOSTILE.md: bytes that become
-- syntax (metadata with CR, LF or NUL; ESC from the server on a terminal), secrets going where
-- they should not (a 302), waiting for ever (at every stage of an answer), growing without
-- bound (a huge length prefix, a flood nobody reads), and bytes reported as success that are
-- not the answer (cut messages, missing grpc-status, compression nobody offered).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local HERE = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
local PROTO = HERE .. "../Fixtures/grpc/greet.proto"
local LUNET = h.lunet()
local core = require "lunet.core"

h.cleanup(after_all, h.remove_temps)
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs fn(target, log) against a hostile server in `mode`, stopping the server whatever happens.
local function against(mode, fn)
  local log = h.tmpname()
  local pipe, pid, port = h.start_server("grpc_hostile_server.py", mode, log)
  local ok, err = pcall(fn, "127.0.0.1:" .. port, log)
  h.stop_server(pipe, pid)
  if not ok then error(err, 0) end
end

-- What the server's log holds: the count of each event, and the last "sent" figure.
local function events(log)
  local n = { conn = 0, headers = 0, other = 0, sent = 0 }
  for line in (h.read_file(log) or ""):gmatch("[^\n]+") do
    local word, rest = line:match("^(%S+)%s*(.*)$")
    if word == "sent" then n.sent = tonumber(rest) else n[word] = (n[word] or 0) + 1 end
  end
  return n
end

local function client(target, opts)
  opts = opts or {}
  opts.proto = PROTO
  return grpc.client(target, opts)
end

-- `lunet grpc` with these words: exit status, stdout, stderr.
local function cli(words, tls)
  local out, err = h.tmpname(), h.tmpname()
  local mode = tls and " --insecure" or " --plaintext"
  local code = h.run("{ " .. q(LUNET) .. " grpc" .. mode .. " --proto " .. q(PROTO) .. " " .. words .. " >" .. q(out) .. " 2>" .. q(err) .. "; }")
  return code, h.read_file(out) or "", h.read_file(err) or ""
end

local function elapsed_since(t0) return core.now() - t0 end

test("metadata with CR, LF or NUL in a name or value is refused (kind argument), nothing sent; -H too", function()
  against("esc_ok", function(target, log)
    local g = client(target)
    local bad = { { ["x-a"] = "a\r\nx-injected: 1" }, { ["x-a"] = "a\nb" }, { ["x-a"] = "a\rb" }, { ["x-a"] = "a\0b" },
                  { ["x-a\r\nx-injected"] = "1" }, { ["x-a\0"] = "1" }, { ["x:a"] = "1" }, { [":path"] = "/other" } }
    for _, md in ipairs(bad) do
      local k, v = next(md)
      local e = fails("argument", function() g:call("greet.Greeter/SayHello", { name = "x" }, { metadata = md }) end, string.format("%q: %q", k, v))
      truthy(e.message:find("nothing was sent", 1, true), e.message)
      fails("argument", function() client(target, { metadata = md }):call("greet.Greeter/SayHello", {}) end, "as the client's metadata")
      fails("argument", function() g:stream("greet.Greeter/Count", { n = 1 }, { metadata = md }) end, "a streaming call")
    end
    local code, _, err = cli("-H \"$(printf 'x-a: b\\r\\nx-injected: 1')\" " .. q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 2, "a usage error: " .. err)
    truthy(err:find("line break", 1, true), err)
    code, _, err = cli("-H \"$(printf 'x-a\\001b: 1')\" " .. q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 2, "a control byte in a name: " .. err)
    eq(events(log).conn, 0, "the server saw no connection at all")
    -- and a -bin value may hold any byte: it goes base64
    eq(g:call("greet.Greeter/SayHello", {}, { metadata = { ["x-raw-bin"] = "\r\n\0" } }).message:sub(1, 1), "x")
    eq(events(log).headers, 1, "that one call")
  end)
end)

test("a 302 is not followed (gRPC has no redirects): kind protocol, the credentials stay here", function()
  against("redirect", function(target, log)
    local g = client(target, { metadata = { authorization = "Bearer s3cret-token" } })
    local e = fails("protocol", function() g:call("greet.Greeter/SayHello", { name = "x" }, { metadata = { ["x-api-key"] = "k3y" } }) end)
    truthy(e.message:find("HTTP 302", 1, true), e.message)
    fails("protocol", function() for _ in g:stream("greet.Greeter/Count", { n = 1 }) do end end, "a streaming call")
    local code, out, err = cli("-H 'authorization: Bearer s3cret-token' " .. q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 1, err)
    truthy(not (out .. err):find("s3cret", 1, true), "the secret is not in what the command printed: " .. out .. err)
    eq(events(log).other, 0, "nothing went to the redirect's target")
  end)
end)

test("a call the server read and then reset is not sent again: kind protocol, one request", function()
  against("rst", function(target, log)
    local g = client(target)
    fails("protocol", function() g:call("greet.Greeter/SayHello", { name = "x" }) end, "a reset stream")
    eq(events(log).headers, 1, "the call went out once (a retry is for a connection that died before any answer)")
  end)
end)

test("a stream the server refused (REFUSED_STREAM: never processed) is sent again, and succeeds", function()
  against("refuse", function(target, log)
    local g = client(target)
    eq(g:call("greet.Greeter/SayHello", { name = "x" }).message, "hi", "the answer to the second sending")
    eq(events(log).headers, 2, "sent twice: the server refused the first before reading it")
  end)
end)

test("an h2c server that never sends SETTINGS: a call without a deadline ends at connect_timeout", function()
  against("silent", function(target)
    local t0 = core.now()
    local e = fails("timeout", function() client(target, { connect_timeout = 0.5 }):call("greet.Greeter/SayHello", {}) end, "unary")
    truthy(tostring(e.message):find("no HTTP/2 SETTINGS", 1, true), e.message)
    fails("timeout", function()
      for _ in client(target, { connect_timeout = 0.5 }):stream("greet.Greeter/Count", { n = 1 }) do end
    end, "streaming")
    truthy(elapsed_since(t0) < 4, "bounded: " .. elapsed_since(t0) .. " s")
    local code, _, err = cli("--connect-timeout 0.5 " .. q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 1, "the command line: " .. err)
    truthy(err:find("no HTTP/2 SETTINGS", 1, true), err)
  end)
end)

-- Each stage an answer can stall at, with the call's deadline: DEADLINE_EXCEEDED, in time.
local STALLS = {
  { "silent", "nothing at all, not even SETTINGS" },
  { "head", "the answer's HEADERS, then nothing" },
  { "half", "half a message, then nothing" },
}

test("a server that stalls at any stage: the deadline ends the call, unary or streaming, with DEADLINE_EXCEEDED", function()
  for _, stall in ipairs(STALLS) do
    against(stall[1], function(target)
      local g = client(target)
      local t0 = core.now()
      local e = fails("grpc", function() g:call("greet.Greeter/SayHello", {}, { deadline = 0.4 }) end, stall[2])
      eq(e.code, "DEADLINE_EXCEEDED", stall[2])
      e = fails("grpc", function() for _ in g:stream("greet.Greeter/Count", { n = 1 }, { deadline = 0.4 }) do end end, stall[2])
      eq(e.code, "DEADLINE_EXCEEDED", stall[2] .. ", streaming")
      local chat = client(target, { deadline = 0.4 }):bidi("greet.Greeter/Chat")
      chat:send({ text = "x" })
      e = fails("grpc", function() chat:receive() end, stall[2] .. ", bidirectional")
      eq(e.code, "DEADLINE_EXCEEDED", stall[2] .. ", bidirectional")
      truthy(elapsed_since(t0) < 3, stall[2] .. ": bounded, " .. elapsed_since(t0) .. " s")
    end)
  end
  against("silent", function(target)   -- TLS that never shakes hands: the deadline, else connect_timeout
    local t0 = core.now()
    eq(fails("grpc", function() client("https://" .. target):call("greet.Greeter/SayHello", {}, { deadline = 0.4 }) end).code, "DEADLINE_EXCEEDED")
    fails("timeout", function() client("https://" .. target, { connect_timeout = 0.4 }):call("greet.Greeter/SayHello", {}) end)
    truthy(elapsed_since(t0) < 2, "bounded: " .. elapsed_since(t0) .. " s")
    local code, _, err = cli("--deadline 0.4 " .. q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 64 + 4, "the command line: 64 + DEADLINE_EXCEEDED: " .. err)
    -- without a deadline, TLS by default: the connect timeout (10 s unless told, grpcurl's)
    t0 = core.now()
    code, _, err = cli("--connect-timeout 0.4 " .. q(target) .. " greet.Greeter/SayHello '{}'", true)
    eq(code, 1, "the command line, TLS never shaken hands: " .. err)
    truthy(err:find("timeout", 1, true) and elapsed_since(t0) < 3, err .. " after " .. elapsed_since(t0) .. " s")
  end)
end)

test("a length prefix of 2^31 is refused as too_large at once, before anything is buffered", function()
  against("huge", function(target)
    local g = client(target)
    local t0 = core.now()
    local e = fails("too_large", function() for _ in g:stream("greet.Greeter/Count", { n = 1 }) do end end)
    truthy(e.message:find("2147483648", 1, true), e.message)
    truthy(elapsed_since(t0) < 1, "at once: " .. elapsed_since(t0) .. " s")
    -- A unary answer is read whole, but its prefixes are checked as they come (issue 46, item
    -- 10): refused at once, with no deadline to end it.
    t0 = core.now()
    e = fails("too_large", function() g:call("greet.Greeter/SayHello", {}) end, "unary, no deadline")
    truthy(e.message:find("2147483648", 1, true), e.message)
    truthy(elapsed_since(t0) < 1, "at once: " .. elapsed_since(t0) .. " s")
  end)
end)

test("answers cut short or without a status are never success: kind protocol, unary and streaming", function()
  local cases = { cut = "ended inside", cut_ok = "ended inside", no_status = "no grpc-status", no_trailers = "no grpc-status" }
  for mode, says in pairs(cases) do
    against(mode, function(target)
      local g = client(target)
      local e = fails("protocol", function() g:call("greet.Greeter/SayHello", {}) end, mode)
      truthy(e.message:find(says, 1, true), mode .. ": " .. e.message)
      local seen = {}
      e = fails("protocol", function() for m in g:stream("greet.Greeter/Count", { n = 1 }) do seen[#seen + 1] = m end end, mode)
      truthy(e.message:find(says, 1, true), mode .. ", streaming: " .. e.message)
      local code = cli(q(target) .. " greet.Greeter/SayHello '{}'")
      eq(code, 1, mode .. ": the command line fails")
    end)
  end
end)

test("a compressed message nobody offered, or not gzip, is a clear error (protocol, decode), no crash", function()
  local cases = { zflag = { "protocol", "in no encoding" }, zunknown = { "protocol", "in br encoding" }, zbad = { "decode", "gzip" } }
  for mode, want in pairs(cases) do
    against(mode, function(target)
      local g = client(target)
      local e = fails(want[1], function() g:call("greet.Greeter/SayHello", {}) end, mode)
      truthy(e.message:find(want[2], 1, true), mode .. ": " .. e.message)
      fails(want[1], function() for _ in g:stream("greet.Greeter/Count", { n = 1 }) do end end, mode .. ", streaming")
    end)
  end
end)

test("lunet grpc: ESC and OSC from the server never reach the terminal raw (grpc-message, string fields)", function()
  against("esc", function(target)
    local e = fails("grpc", function() client(target):call("greet.Greeter/SayHello", {}) end)
    truthy(e.grpc_message:find("\27]0;pwned\7", 1, true), "the script gets the server's bytes as they are")
    local code, _, err = cli(q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 64 + 13, err)
    truthy(not err:find("[\0-\8\11-\31\127]"), "no control byte on standard error: " .. err:gsub("%c", "?"))
    truthy(err:find("\\x1b]0;pwned\\x07", 1, true), "shown escaped: " .. err)
  end)
  against("esc_ok", function(target)
    local code, out, err = cli(q(target) .. " greet.Greeter/SayHello '{}'")
    eq(code, 0, err)
    truthy(not out:find("\27", 1, true), "JSON escapes it: " .. out)
    eq(json.decode(out).message, "x\27]0;pwned\7\27[2J\27[31my", "the value itself, decoded")
  end)
end)

local FLOOD = [[
local g = grpc.client(arg[1], { proto = arg[2] })
local next_reply, c = g:stream("greet.Greeter/Count", { n = 1 })
assert(next_reply().i == 1)
task.sleep(2)   -- the script reads nothing while the server sends as fast as it may
local f = io.open(arg[3]); local log = f:read("a"); f:close()
print("sent " .. (log:match("sent (%d+)\n$") or "0"))
for _ = 1, 1000 do assert(next_reply().i == 1) end
require("lunet.grpc.call").close(c)
print("read on")
]]

test("a flood of small messages the script does not read: what lunet holds stays bounded (flow control)", function()
  against("flood", function(target, log)
    local script = h.script(FLOOD)
    local code, out = h.run("/usr/bin/time -f 'maxrss %M' " .. q(LUNET) .. " " .. q(script) .. " " .. q(target) .. " " .. q(PROTO) .. " " .. q(log))
    eq(code, 0, out)
    truthy(out:find("read on", 1, true), out)
    local sent, rss = tonumber(out:match("sent (%d+)")), tonumber(out:match("maxrss (%d+)"))
    truthy(sent and sent < 32 * 1024 * 1024, "the server was held back while nothing was read: " .. tostring(sent) .. " bytes sent")
    truthy(rss and rss < 150 * 1024, "memory: " .. tostring(rss) .. " KiB")
  end)
end)

h.done()

-- Issue 46, items 11 and 18: a grpc-status is 1*DIGIT. A code past gRPC's sixteen is UNKNOWN (as
-- gRPC's clients read it), anything else is no status (kind protocol), and `lunet grpc` exits
-- 64 + a code of 1 to 16 only. The server's long grpc-message (300 bytes: HPACK's longer
-- length form) comes whole.
test("grpc-status parsed strictly: past 16 is UNKNOWN, not a number is kind protocol, exit statuses stay in range", function()
  local cases = {
    { "192", "grpc", 2, 66 }, { "256", "grpc", 2, 66 }, { "17", "grpc", 2, 66 }, { "16", "grpc", 16, 80 },
    { "0x0", "protocol", nil, 1 }, { "0.5", "protocol", nil, 1 }, { "1e300", "protocol", nil, 1 }, { "-1", "protocol", nil, 1 },
    { "99999999999999999999", "protocol", nil, 1 }, { "00", nil, nil, 0 },
  }
  for _, c in ipairs(cases) do
    local value, kind, status, exit = c[1], c[2], c[3], c[4]
    against("status:" .. value, function(target)
      local ok, e = pcall(function() return client(target):call("greet.Greeter/SayHello", { name = "x" }) end)
      if kind == nil then
        truthy(ok, value .. " is OK: " .. tostring(e))
      else
        truthy(not ok and e.kind == kind, value .. ": kind " .. kind .. ", got " .. tostring(e))
        if status then
          eq(e.status, status, value .. ": the status")
          truthy(e.grpc_message:find(string.rep("m", 298) .. "!!", 1, true), value .. ": the 300-byte message whole: " .. e.grpc_message:sub(-40))
        end
      end
      local code, _, err = cli(q(target) .. " greet.Greeter/SayHello '{}'")
      eq(code, exit, value .. ": lunet grpc's exit status: " .. err)
    end)
  end
end)
