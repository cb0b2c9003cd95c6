-- Hostile servers and hostile scripts: lunet must end each in a clear error of the right kind,
-- within the configured limits, and stay healthy for the next request.
--   servers: Tests/servers/hostile_server.py (LUNET_HOSTILE), started by scripts/test-servers
--   scripts: small Lua programs run as child processes of the built binary
local RUNNER = test ~= nil   -- under `lunet test` (its print() already writes TAP comments)
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy, fails = h.eq, h.truthy, h.fails

local BIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")
local HOSTILE = h.env("LUNET_HOSTILE")
local LUNET = h.lunet()
local now = require("lunet.core").now

local MB = 1024 * 1024
local DEFAULT_MAX_BODY = 100 * MB   -- docs/http.md: "Default 100MB" (decoded bytes)

--- Checks that were bugs once (found by these tests, fixed since): now plain assertions.
local function known_bug(ok, text)
  if not ok then error(text, 2) end
end

--- After every hostile request: nothing left in flight, and a normal request still works.
local function healthy(what, session)
  eq(http.stats().transfers, 0, "transfers in flight after " .. what)
  local url = BIN .. "/get?after=" .. what
  local r = session and session:get(url) or http.get(url)
  eq(r.status, 200, "a normal request after " .. what)
  eq(r.json.args.after, what, "its body after " .. what)
  eq(http.stats().transfers, 0, "transfers in flight after the normal request")
end

--- Runs fn, which must fail with an error of `kind`; returns the error and the seconds it took.
local function timed_failure(kind, what, fn)
  local t0 = now()
  local e = fails(kind, fn, what)
  local elapsed = now() - t0
  truthy(type(e.message) == "string" and e.message ~= "", what .. ": a message")
  truthy(e.url and e.url:find(HOSTILE, 1, true), what .. ": the error names the URL, got " .. tostring(e.url))
  return e, elapsed
end

-- ---------------------------------------------------------------------------------------------
-- Hostile servers
-- ---------------------------------------------------------------------------------------------

test("a body cut off mid-way (/truncated) is kind protocol", function()
  local e = timed_failure("protocol", "/truncated", function() http.get(HOSTILE .. "/truncated") end)
  -- lunet's own words, the same on every libcurl (7.88 and 8.x word it differently).
  truthy(e.message:find("the connection closed before the whole body arrived: 10 of 100 bytes, 90 missing", 1, true),
    "the message says how much was missing: " .. e.message)
  healthy("truncated")
end)

test("a server that stalls after its headers (/stall) times out in ~timeout, kind timeout", function()
  local _, took = timed_failure("timeout", "/stall with timeout = 1", function()
    http.get(HOSTILE .. "/stall", { timeout = 1 })
  end)
  truthy(took >= 0.9 and took < 3, "it took about a second, not forever: " .. took .. " s")
  healthy("stall")
  -- a session's timeout applies the same way
  local s = http.session{ timeout = 1 }
  local _, took2 = timed_failure("timeout", "/stall on a session with timeout = 1", function() s:get(HOSTILE .. "/stall") end)
  truthy(took2 >= 0.9 and took2 < 3, "a session's timeout: " .. took2 .. " s")
  healthy("stall-session", s)
end)

test("a 1 MB response header (/big-header) is kind protocol", function()
  -- Decided: protocol, not too_large. too_large means "over max_body", a limit the caller sets
  -- and can raise; a header line over libcurl's fixed 100 KB limit (CURL_MAX_HTTP_HEADER) is a
  -- response no client will take, and no option changes that.
  local e = timed_failure("protocol", "/big-header", function() http.get(HOSTILE .. "/big-header") end)
  known_bug(e.message:lower():find("header", 1, true) ~= nil,
    "/big-header says '" .. e.message .. "' (libcurl 7.88's CURLE_OUT_OF_MEMORY with an empty error buffer); "
    .. "it should say that a response header is over libcurl's 100 KB limit")
  healthy("big-header")
end)

test("a gzip bomb (1 MB that inflates to 1 GiB) is kind too_large under the default max_body", function()
  local e, took = timed_failure("too_large", "/gzip-bomb", function() http.get(HOSTILE .. "/gzip-bomb") end)
  truthy(e.message:find(tostring(DEFAULT_MAX_BODY), 1, true), "the default limit (100 MB) is named: " .. e.message)
  truthy(took < 20, "stopped at the limit, not after 1 GiB: " .. took .. " s")
  healthy("gzip-bomb")
end)

test("a gzip bomb is too_large at a session's max_body = 10MB (decoded bytes count)", function()
  local s = http.session{ max_body = "10MB" }
  local e = timed_failure("too_large", "/gzip-bomb at 10MB", function() s:get(HOSTILE .. "/gzip-bomb") end)
  truthy(e.message:find(tostring(10 * MB), 1, true), "the session's limit is named: " .. e.message)
  -- on the wire the bomb is ~1 MB: under the limit, so it is the decoded size that counted
  local raw = s:get(HOSTILE .. "/gzip-bomb", { decompress = false })
  truthy(#raw.body < 10 * MB, "undecoded, it fits: " .. #raw.body .. " bytes")
  eq(raw.headers["content-encoding"], "gzip", "and it is the gzip stream")
  healthy("gzip-bomb-session", s)
end)

test("a chunked body with a bad chunk length (/bad-chunk) is kind protocol", function()
  local e = timed_failure("protocol", "/bad-chunk", function() http.get(HOSTILE .. "/bad-chunk") end)
  truthy(e.message:lower():find("chunk", 1, true), "the message names chunked encoding: " .. e.message)
  healthy("bad-chunk")
end)

test("an endless redirect chain (/loop) is kind redirects after max_redirects", function()
  local e = timed_failure("redirects", "/loop", function() http.get(HOSTILE .. "/loop") end)
  truthy(e.message:find("10", 1, true), "the default limit (10) is named: " .. e.message)
  local e3 = timed_failure("redirects", "/loop, max_redirects = 3", function()
    http.get(HOSTILE .. "/loop", { max_redirects = 3 })
  end)
  truthy(e3.message:find("3", 1, true), "a request's max_redirects: " .. e3.message)
  healthy("loop")
end)

test("an endless body (/endless) is kind too_large at max_body", function()
  local _, took = timed_failure("too_large", "/endless", function() http.get(HOSTILE .. "/endless") end)
  truthy(took < 20, "stopped at 100 MB: " .. took .. " s")
  local s = http.session{ max_body = "1MB" }
  local e = timed_failure("too_large", "/endless at 1MB", function() s:get(HOSTILE .. "/endless") end)
  truthy(e.message:find(tostring(MB), 1, true), "the session's limit is named: " .. e.message)
  healthy("endless", s)
end)

test("all of them at once, as tasks: each its own kind, nothing left running", function()
  local s = http.session{ max_body = "10MB", timeout = 2 }
  local want = {
    { "/truncated", "protocol" }, { "/stall", "timeout" }, { "/big-header", "protocol" },
    { "/gzip-bomb", "too_large" }, { "/bad-chunk", "protocol" }, { "/loop", "redirects" },
    { "/endless", "too_large" },
  }
  local list = {}
  for i, w in ipairs(want) do
    list[i] = s:get_async(HOSTILE .. w[1]):next(function() return "succeeded" end):catch(function(e) return e.kind end)
  end
  list[#list + 1] = s:get_async(BIN .. "/get"):next(function(r) return r.status end)
  local got = task.all(list):await()
  for i, w in ipairs(want) do eq(got[i], w[2], w[1] .. " among the others") end
  eq(got[#got], 200, "a normal request among them")
  healthy("all-at-once", s)
end)

-- ---------------------------------------------------------------------------------------------
-- Hostile scripts: child processes of the built binary
-- ---------------------------------------------------------------------------------------------

--- Runs `code` as a script in a child lunet (bounded by `limit` seconds); exit code, output, seconds.
local function child(code, limit)
  local base = h.tmpname()
  local path = base .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local t0 = now()
  local rc, out = h.run("timeout -k 5 " .. (limit or 60) .. " " .. LUNET .. " " .. path)
  local took = now() - t0
  os.remove(path)
  os.remove(base)
  return rc, out, took
end

local function no_crash(rc, out, what)
  truthy(rc == 0 or rc == 1, what .. ": exit 0 or 1 (not a signal, not the time limit), got " .. tostring(rc) .. "\n" .. out)
  truthy(not out:find("unprotected Lua error", 1, true), what .. ": no Lua panic\n" .. out)
  truthy(not out:find("Fatal error", 1, true), what .. ": no Swift trap\n" .. out)
end

test("an error in a continuation is reported at the end, and (unhandled) makes the exit status 1", function()
  local rc, out = child([[
    task.resolved(1):next(function() error("x-in-continuation") end)
    print("main chunk done")
  ]])
  no_crash(rc, out, "continuation")
  eq(rc, 1, "an unhandled failure: exit status (docs/tasks.md)\n" .. out)
  truthy(out:find("main chunk done", 1, true), "the main chunk ran on\n" .. out)
  truthy(out:find("a task failed and nothing awaited or caught it", 1, true), "reported\n" .. out)
  truthy(out:find("x-in-continuation", 1, true), "with the error's message\n" .. out)
  truthy(out:find("stack traceback", 1, true), "and its traceback\n" .. out)
end)

test("an error in __gc: the process survives and later code runs", function()
  local rc, out = child([[
    for _ = 1, 3 do setmetatable({}, { __gc = function() error("gc-boom") end }) end
    collectgarbage(); collectgarbage()
    print("after gc")
    print("request", http.get(os.getenv("LUNET_HTTPBIN") .. "/get").status)
    print("task", task.delay(0.01, "settled"):await())
  ]])
  no_crash(rc, out, "__gc")
  eq(rc, 0, "exit status\n" .. out)
  truthy(out:find("after gc\nrequest\t200\ntask\tsettled", 1, true), "later code, requests and tasks ran\n" .. out)
  known_bug(out:find("gc-boom", 1, true) ~= nil,
    "an error in __gc is dropped without a word: lunet_newstate (Sources/CLunetLua/lua_bridge.c) installs no "
    .. "warning function, so Lua's 'error in __gc' warning (and warn() itself, even after warn('@on')) goes nowhere")
end)

test("an error in a custom response serializer is kind decode and carries the message", function()
  local rc, out = child(string.format([[
    local s = http.session{ response = function(body, r) error("serializer-broke") end }
    local ok, e = pcall(s.get, s, %q)
    print("ok=" .. tostring(ok), "kind=" .. tostring(e.kind), "status=" .. tostring(e.response and e.response.status))
    print("message=" .. tostring(e.message))
    print("transfers=" .. http.stats().transfers)
    print("next=" .. http.get(%q).status)
  ]], BIN .. "/get", BIN .. "/get"))
  no_crash(rc, out, "serializer")
  eq(rc, 0, "exit status\n" .. out)
  truthy(out:find("ok=false\tkind=decode\tstatus=200", 1, true), "kind decode, with the response\n" .. out)
  truthy(out:find("message=[^\n]*serializer%-broke"), "the serializer's message\n" .. out)
  truthy(out:find("transfers=0\nnext=200", 1, true), "nothing left running, the next request works\n" .. out)
end)

test("an error in a download's progress callback fails the download with that message", function()
  -- Decided: the download fails (pcall gets the callback's error), nothing crashes, the host
  -- goes on. /slow-body sends 3 bytes at 1 byte/s, so the callback runs on several turns.
  local rc, out, took = child(string.format([[
    local path = os.tmpname(); os.remove(path)
    local calls = 0
    local ok, e = pcall(http.download, %q, path, { progress = function() calls = calls + 1; error("boom-in-progress") end })
    print("ok=" .. tostring(ok), "calls=" .. calls)
    print("message=" .. tostring(type(e) == "table" and e.message or e))
    print("final=" .. tostring(io.open(path) ~= nil))
    os.remove(path .. ".part"); os.remove(path .. ".part.meta")
    print("transfers=" .. http.stats().transfers)
    print("next=" .. http.get(%q).status)
  ]], HOSTILE .. "/slow-body?n=3", BIN .. "/get"))
  no_crash(rc, out, "progress")
  eq(rc, 0, "exit status\n" .. out)
  truthy(out:find("ok=false", 1, true), "the download failed\n" .. out)
  truthy(out:find("message=[^\n]*boom%-in%-progress"), "with the callback's message\n" .. out)
  truthy(out:find("final=false", 1, true), "no final file\n" .. out)
  truthy(out:find("transfers=0\nnext=200", 1, true), "nothing left running, the next request works\n" .. out)
  truthy(took < 15, "promptly: " .. took .. " s")
  -- what happens today: errors on the loop's turns are printed as "lunet: ...boom..." and the
  -- transfer goes on to the end; only the last call (after the body) fails the download.
  local printed = select(2, out:gsub("lunet: [^\n]*boom%-in%-progress", ""))
  local calls = tonumber(out:match("calls=(%d+)"))
  known_bug(printed == 0 and calls == 1,
    string.format("a progress callback that raises was called %d times and its error printed %d times while the "
      .. "download went on to the end (lua/lunet/download.lua progress_reporter/single: the per-turn calls run "
      .. "through LuaHost.call, which only reports); the first error should stop the transfer", calls or -1, printed))
end)

test("an error in a streamed download's on_chunk: no crash, the host goes on", function()
  local rc, out = child(string.format([[
    local calls = 0
    local ok, e = pcall(http.download, %q, nil, { on_chunk = function() calls = calls + 1; error("boom-in-chunk") end })
    print("ok=" .. tostring(ok), "calls=" .. calls)
    print("transfers=" .. http.stats().transfers)
    print("next=" .. http.get(%q).status)
  ]], HOSTILE .. "/slow-body?n=3", BIN .. "/get"))
  no_crash(rc, out, "on_chunk")
  eq(rc, 0, "exit status\n" .. out)
  truthy(out:find("transfers=0\nnext=200", 1, true), "nothing left running, the next request works\n" .. out)
  known_bug(out:find("ok=false", 1, true) ~= nil and out:find("calls=1", 1, true) ~= nil,
    "a streamed download whose on_chunk raises on every chunk succeeds (" .. (out:match("ok=%S+\tcalls=%d+") or "?")
    .. "): the errors are only printed (lua/lunet/download.lua, the _on_events of download_async's on_chunk branch, "
    .. "through LuaHost.call); the first error should stop the transfer and fail the download with it")
end)

test("deep recursion is a clear stack overflow, exit 1, no crash", function()
  local rc, out, took = child("local function f() return 1 + f() end\nf()\n")
  no_crash(rc, out, "recursion")
  eq(rc, 1, "exit status\n" .. out:sub(1, 600))
  truthy(out:find("stack overflow", 1, true), "the message\n" .. out:sub(1, 600))
  truthy(#out < 20000, "the traceback is cut short: " .. #out .. " bytes")
  truthy(took < 15, "promptly: " .. took .. " s")
  -- the same in a task, in a continuation and in a coroutine
  rc, out = child([[
    local function f() return 1 + f() end
    local ok, e = pcall(function() return task.spawn(f):await() end)
    print("task", ok, tostring(e):find("stack overflow", 1, true) ~= nil)
    local ok2, e2 = pcall(function() return task.resolved(1):next(f):await() end)
    print("continuation", ok2, tostring(e2):find("stack overflow", 1, true) ~= nil)
    local ok3, e3 = coroutine.resume(coroutine.create(f))
    print("coroutine", ok3, tostring(e3):find("stack overflow", 1, true) ~= nil)
    print("after", http.get(os.getenv("LUNET_HTTPBIN") .. "/get").status)
  ]])
  no_crash(rc, out, "recursion in tasks")
  eq(rc, 0, "exit status\n" .. out:sub(1, 600))
  truthy(out:find("task\tfalse\ttrue\ncontinuation\tfalse\ttrue\ncoroutine\tfalse\ttrue\nafter\t200", 1, true),
    "caught where it happened, and the host goes on\n" .. out:sub(1, 600))
end)

test("100,000 pending tasks, each with a continuation: all resolved, every continuation ran", function()
  local rc, out, took = child([[
    local N, ran = 100000, 0
    local sources, continued = {}, {}
    for i = 1, N do
      local src = task.source()
      sources[i] = src
      continued[i] = src.task:next(function(v) ran = ran + 1; return v * 2 end)
    end
    print("pending", continued[N].state)
    for i = 1, N do sources[i]:resolve(i) end
    local results = task.all(continued):await()
    local sum = 0
    for i = 1, N do sum = sum + results[i] end
    print("ran=" .. ran, "results=" .. #results, "sum=" .. sum)
  ]], 120)
  no_crash(rc, out, "100,000 tasks")
  eq(rc, 0, "exit status\n" .. out)
  truthy(out:find("pending\tpending", 1, true), "they were pending\n" .. out)
  truthy(out:find("ran=100000\tresults=100000\tsum=10000100000", 1, true), "every continuation ran, in order\n" .. out)
  truthy(took < 60, "in reasonable time: " .. took .. " s")
end)

test("a script that waits for what nothing will settle ends promptly with a message, exit 1", function()
  local rc, out, took = child("task.source().task:await()\nprint('never printed')\n")
  no_crash(rc, out, "never settles")
  eq(rc, 1, "exit status\n" .. out)
  truthy(out:find("nothing will ever settle", 1, true), "the message\n" .. out)
  truthy(not out:find("never printed", 1, true), "the rest of the script did not run\n" .. out)
  truthy(took < 10, "promptly: " .. took .. " s")
end)

test("core functions refuse a userdata of another kind, or a closed one, with an argument error", function()
  local core = require "lunet.core"
  local r = http.get(NGINX .. "/small.txt")
  local session_core = http.session{}._core
  -- io.stdout is a userdata of the same size as lunet's boxes (a FILE* and a function).
  for name, v in pairs{ ["a file"] = io.stdout, ["a session"] = session_core, ["a string"] = "x", ["nothing"] = nil } do
    local ok, e = pcall(core.response_body, v)
    eq(ok, false, name .. " as a response")
    truthy(tostring(e):find("bad argument #1 to 'response_body' (response expected)", 1, true), name .. ": " .. tostring(e))
  end
  local ok, e = pcall(core.send, r._raw, function() end, "GET", NGINX .. "/small.txt")
  eq(ok, false, "a response as a session")
  truthy(tostring(e):find("session expected", 1, true), tostring(e))
  -- A box's __close and __gc, called by hand with what is not a box of lunet's: nothing is
  -- released (io.stdout is a userdata of the box's size whose first word is a FILE*).
  local release = getmetatable(r._raw).__close
  for name, v in pairs{ ["a file"] = io.stdout, ["a string"] = "x", ["a table"] = {} } do
    eq(select("#", release(v)), 0, name .. " given to __close")
    eq(select("#", getmetatable(r._raw).__gc(v)), 0, name .. " given to __gc")
  end
  io.stdout:write("")   -- the file is still open and usable
  eq(core.response_body(r._raw), "hello, lunet\n", "the response is untouched")
  -- Closed (its __close ran): the box is empty, not a dangling object.
  local raw = r._raw
  getmetatable(raw).__close(raw)
  ok, e = pcall(core.response_body, raw)
  eq(ok, false, "a closed response")
  truthy(tostring(e):find("response expected", 1, true), tostring(e))
end)

test("the host is healthy at the end of the file", function()
  eq(http.get(NGINX .. "/small.txt").body, "hello, lunet\n", "nginx")
  eq(http.stats().transfers, 0, "transfers")
end)

h.done()
