-- Issue 34: lunet.core (the private bindings lunet's modules are written on: core.send with a
-- made-up task, and the like) is lunet's own. A script finds it neither with require nor in
-- package.loaded; lunet's own modules, loaded before or after, still work on it. (scripts/test
-- sets LUNET_INTERNALS=1 for the other tests, which read its counters; these children run
-- without it.)
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq = h.eq
local BIN = h.env("LUNET_HTTPBIN")

local function run(code)
  return h.run("env -u LUNET_INTERNALS " .. h.lunet() .. " " .. h.script(code))
end

test("a script cannot require lunet.core, nor find it in package.loaded", function()
  local code, out = run([[
    local ok, err = pcall(require, "lunet.core")
    print(ok, (tostring(err):match("module 'lunet.core' not found")))
    print(package.loaded["lunet.core"], rawget(package.loaded, "lunet.core"), rawget(package.preload, "lunet.core"))
    local again = pcall(require, "lunet.core")
    print(again)
  ]])
  eq({ code, out }, { 0, "false\tmodule 'lunet.core' not found\nnil\tnil\tnil\nfalse\n" }, "what the script saw")
end)

test("lunet's modules loaded before and after still reach it (a request, a queue, a websocket, an event stream)", function()
  local code, out = run(string.format([[
    print(http.get(%q .. "/get").status)
    local q = http.queue{}
    print(q:add("x", %q .. "/get"):await().status)
    local ok, e = pcall(function() return http.sse("http://127.0.0.1:1/", { max_retries = 0 }):await() end)
    print(e.kind)
    print(pcall(require, "lunet.core"))
  ]], BIN, BIN))
  eq(code, 0, out)
  eq(out:match("^(200\n200\nconnect\nfalse)"), "200\n200\nconnect\nfalse", out)
end)

test("LUNET_INTERNALS=1 opens it (lunet's own tests and benchmarks)", function()
  local code, out = h.run("LUNET_INTERNALS=1 " .. h.lunet() .. " -e 'print(type(require(\"lunet.core\").now))'")
  eq({ code, out }, { 0, "function\n" }, "with the variable")
end)

h.done()
