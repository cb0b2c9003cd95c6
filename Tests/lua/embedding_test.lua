-- The two ways into lunet from outside: the Lua module in Debian's lua5.4, and the example Swift
-- tool that embeds the library. Both built by `swift build`, run here as subprocesses.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy = h.test, h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local function absolute(path)
  local _, out = h.run("realpath " .. path)
  return (out:gsub("%s+$", ""))
end
local build = absolute(h.lunet()):match("^(.*)/[^/]*$")
local root = (debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or "./")

local moddir = h.tmpname()
os.remove(moddir)
os.execute("mkdir -p " .. moddir .. " && ln -sf " .. build .. "/libLunetLuaModule.so " .. moddir .. "/lunet.so")
-- Under scripts/sanitize lunet.so is built with a sanitizer, whose runtime a stock lua5.4 does
-- not have: the script names the runtime library (and what that needs) to preload.
local preload = os.getenv("LUNET_SANITIZER_PRELOAD")
local LUA = (preload and ("LD_PRELOAD='" .. preload .. "' ") or "") .. "LUA_CPATH='" .. moddir .. "/?.so;;' lua5.4"

test("require 'lunet' in lua5.4: requests, tasks, errors as objects", function()
  local code, out = h.run(LUA .. " -e '" .. [[
    local lunet = require "lunet"
    lunet.task.sleep(0.2)
    local mapped = io.open("/proc/self/maps"):read("a"):find("libcurl", 1, true) ~= nil
    local r = lunet.http.get(os.getenv("LUNET_HTTPBIN") .. "/get?x=1")
    local ok, e = pcall(lunet.http.get, 42)
    local n = lunet.run(function()
      local a = lunet.http.get_async(os.getenv("LUNET_HTTPBIN") .. "/delay/0.2")
      local b = lunet.http.get_async(os.getenv("LUNET_HTTPBIN") .. "/delay/0.2")
      return #lunet.task.all{ a, b }:await()
    end)
    io.write(r.status, " ", r.json.args.x, " ", tostring(ok), " ", e.kind, " ", n, " ", tostring(http), " ", tostring(mapped))
  ]] .. "'")
  eq({ code, out }, { 0, "200 1 false argument 2 nil false" }, "status and output (a module never preloads libcurl)")
end)

test("module mode reads and writes no undeclared global and leaves coroutine alone", function()
  -- A strict _G: any read or write of a name that was not there before lunet loaded is an error.
  local har = h.tmpname()
  local code, out = h.run(LUA .. " -e '" .. [[
    local resume, wrap = coroutine.resume, coroutine.wrap
    setmetatable(_G, {
      __index = function(_, k) error("read of undeclared global " .. tostring(k), 2) end,
      __newindex = function(_, k) error("write of undeclared global " .. tostring(k), 2) end })
    local lunet = require "lunet"
    local rec = lunet.http.record("]] .. har .. [[")
    local r = lunet.http.get(os.getenv("LUNET_HTTPBIN") .. "/get")
    assert(rec.save())
    local expect = require("lunet.testing.expect").expect
    local ok = pcall(function() expect(r).to.have_status(200).to.have_json_path("$.url", os.getenv("LUNET_HTTPBIN") .. "/get") end)
    local n = lunet.run(function()
      local co = lunet.coroutine.wrap(function() coroutine.yield(lunet.http.get_async(os.getenv("LUNET_HTTPBIN") .. "/get"):await().status) end)
      return co()
    end)
    io.write(tostring(coroutine.resume == resume), " ", tostring(coroutine.wrap == wrap), " ", r.status, " ", tostring(ok), " ", n)
  ]] .. "'")
  eq({ code, out }, { 0, "true true 200 true 200" }, "status and output")
  local f = io.open(har)
  truthy(f and f:read("a"):find('"status": *200'), "the HAR file was written")
  if f then f:close() end
  os.remove(har)
end)

test("the module example runs in a stock lua5.4", function()
  local code, out = h.run(LUA .. " " .. root .. "Examples/module-demo.lua " .. BIN)
  eq({ code, out }, { 0, "200\tlua5.4\n201\t202\nfalse\tconnect\n" }, "status and output")
end)

test("the module is not linked against its own Lua runtime and stays loaded", function()
  local _, out = h.run("readelf -d " .. build .. "/libLunetLuaModule.so")
  truthy(not out:find("liblua", 1, true), "no liblua in NEEDED")
  truthy(out:find("NODELETE", 1, true), "linked -z nodelete")
end)

test("the example Swift tool embeds lunet and exposes a Swift function to its scripts", function()
  local script = h.tmpname()
  io.open(script, "w"):write([[
    local ok, e = pcall(tool.stamp, {})
    io.write(tool.stamp("hello"), " ", e.kind, " ", http.get(os.getenv("LUNET_HTTPBIN") .. "/status/204").status)
  ]]):close()
  local code, out = h.run(build .. "/lunet-embed-example " .. script)
  eq({ code, out }, { 0, "[embed-tool] hello argument 204" }, "status and output")
  os.remove(script)
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. moddir) end)
test("module mode's crossings: a GET from the main thread is the send, one wait and the completion (2 down, 1 up)", function()
  -- The lunet program runs a script in a coroutine that yields to the loop (1 down, 1 up:
  -- request_path_test.lua); a stock lua5.4's main thread cannot yield, so its wait turns the loop
  -- in one call down (core.step_until), however many turns that takes.
  local code, out = h.run("LUNET_INTERNALS=1 " .. LUA .. " -e '" .. [[
    local lunet = require "lunet"
    local core = require "lunet.core"
    -- The collector stopped while it counts: a finalizer of an earlier response (a call down
    -- to Swift) running inside the window is not the request path (it made the count flaky:
    -- 3/1, 6/1 now and then).
    local function crossed(fn)
      collectgarbage("collect")
      collectgarbage("stop")
      local d0, u0 = core.crossings(); fn(); local d1, u1 = core.crossings()
      collectgarbage("restart")
      return (d1 - d0 - 1) .. "/" .. (u1 - u0)
    end
    local url = os.getenv("LUNET_HTTPBIN")
    lunet.http.get(url .. "/get")
    io.write(crossed(function() lunet.http.get(url .. "/get") end), " ",
             crossed(function() lunet.http.get(url .. "/delay/0.3") end), " ",
             crossed(function() lunet.task.sleep(0.05) end), " ",
             crossed(function() lunet.run(function() lunet.http.get(url .. "/get") end) end))
  ]] .. "'")
  eq({ code, out }, { 0, "2/1 2/1 2/1 2/1" }, "a GET, a slow GET, a sleep, and a GET inside lunet.run")
end)

h.done()
