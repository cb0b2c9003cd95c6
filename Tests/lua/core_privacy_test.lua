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

-- Issue 48, item 3: lunet's modules get core from their loader (chunk(name, core)), not from
-- require by a chunk's name: core is held only as the loaders' upvalue, which the debug library
-- neither shows nor lets a script replace, and no table a script reaches holds it.
test("core comes to lunet's modules through their loader: no name, registry or loader upvalue gives it away", function()
  local code, out = run([[
    local function is_core(v) return type(v) == "table" and rawget(v, "send") ~= nil and rawget(v, "crossings") ~= nil end
    local loader = getmetatable(package.preload).__index(package.preload, "lunet.base64")
    print(type(loader))
    local shown = false
    for i = 1, 4 do local _, v = debug.getupvalue(loader, i); shown = shown or is_core(v) end
    print("shown", shown)
    print("replaced", (pcall(debug.setupvalue, loader, 1, function(_, c) stolen = c end)))
    print("preload index replaced", (pcall(debug.setupvalue, getmetatable(package.preload).__index, 2, {})))
    local found = false
    for _, v in pairs(debug.getregistry()) do found = found or is_core(v) end
    print("in the registry", found)
    -- A chunk that calls itself lunet's gets nothing by asking: the name decides nothing.
    local f = load("return pcall(require, 'lunet.core')", "=lua/lunet/mine.lua")
    print("by name", (f()))
    print(type(loader("lunet.base64").encode), stolen)
  ]])
  eq({ code, out }, { 0, "function\nshown\tfalse\nreplaced\tfalse\npreload index replaced\tfalse\nin the registry\tfalse\nby name\tfalse\nfunction\tnil\n" }, "what the script saw")
end)

test("HAR files, made without LUNET_INTERNALS, name lunet's version and keep fractions of a second", function()
  local har = h.tmpname()
  local code, out = run(string.format([[
    local rec = http.record(%q)
    http.get(%q .. "/get")
    rec:stop()
    local doc = json.decode(io.open(%q):read("a"))
    print(doc.log.creator.version, doc.log.entries[1].startedDateTime)
  ]], har, BIN, har))
  eq(code, 0, out)
  local version, started = out:match("^(%S+)\t(%S+)")
  h.truthy(version and version ~= "unknown", "the creator's version: " .. out)
  h.truthy(started and not started:find("%.000Z$"), "milliseconds from lunet's clock, not os.time(): " .. out)
end)

test("LUNET_INTERNALS=1 opens it (lunet's own tests and benchmarks)", function()
  local code, out = h.run("LUNET_INTERNALS=1 " .. h.lunet() .. " -e 'print(type(require(\"lunet.core\").now))'")
  eq({ code, out }, { 0, "function\n" }, "with the variable")
end)

-- Issue 46, item 16: the ways around require. Each prints whether it reached lunet.core.
local PROBES = [[
  local function is_core(v) return type(v) == "table" and type(rawget(v, "send")) == "function" and type(rawget(v, "now")) == "function" end
  local function say(what, v) print(what, is_core(v) and "REACHED" or "no") end
  -- a chunk named as lunet's own, as text and through a file under a lua/lunet folder
  local f = load("return require('lunet.core')", "@lua/lunet/x.lua")
  say("load", select(2, pcall(f)))
  local dir = os.tmpname(); os.remove(dir); os.execute("mkdir -p " .. dir .. "/lua/lunet")
  local file = io.open(dir .. "/lua/lunet/x.lua", "w"); file:write("return require('lunet.core')"); file:close()
  local here = os.getenv("PWD")
  package.path = dir .. "/?.lua;" .. package.path
  say("loadfile", (function() local g = loadfile(dir .. "/lua/lunet/x.lua"); return g and select(2, pcall(g)) end)())
  -- a binary chunk carries its functions' source names: one naming lunet's is not loaded
  local lunets = http.parse_size
  assert(debug.getinfo(lunets, "S").source:find("^@lua/lunet/"), "a Lua function of lunet's")
  print("binary", load(string.dump(lunets)) and "loaded" or "refused")
  print("own binary", load(string.dump(function() return 1 end)) and "loaded" or "refused")
  -- upvalues and locals of lunet's functions, however deep
  local seen, hit = {}, false
  local function walk(v, depth)
    if depth > 6 or seen[v] or hit then return end
    seen[v] = true
    if is_core(v) then hit = true return end
    if type(v) == "function" then
      for i = 1, 255 do
        local name, u = debug.getupvalue(v, i)
        if not name then break end
        walk(u, depth + 1)
      end
    elseif type(v) == "table" then
      for _, u in pairs(v) do walk(u, depth + 1) end
    end
  end
  walk(http, 0)
  print("getupvalue", hit and "REACHED" or "no")
  print("setupvalue", pcall(debug.setupvalue, http.get, 1, nil) and "allowed" or "refused")
  -- require called for the script by lunet's own code (a task runs the function it is given)
  local t = task.spawn(require, "lunet.core")
  say("task.spawn(require)", select(2, pcall(t.await, t)))
  -- a user's own closures stay open to the debug library
  local mine = 42
  local function g() return mine end
  print("own upvalue", debug.getupvalue(g, 1))
]]

local function probes(out)
  local seen = {}
  for what, verdict in out:gmatch("([^\n\t]+)\t([^\n]+)") do seen[what] = verdict end
  return seen
end

test("the ways around require reach nothing: chunk names, binary chunks, upvalues, a task running require (program)", function()
  local code, out = run(PROBES)
  eq(code, 0, out)
  eq(probes(out), { load = "no", loadfile = "no", binary = "refused", ["own binary"] = "loaded", getupvalue = "no", setupvalue = "refused",
    ["task.spawn(require)"] = "no", ["own upvalue"] = "mine\t42" }, "each route:\n" .. out)
end)

test("a script run from a lua/lunet folder is the script's, not lunet's", function()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir .. "/lua/lunet")
  local f = assert(io.open(dir .. "/lua/lunet/x.lua", "w"))
  f:write('print((pcall(function() return require "lunet.core" end)))\nprint(debug.getinfo(1, "S").source)\n')
  f:close()
  local code, out = h.run("cd " .. dir .. " && env -u LUNET_INTERNALS LUA_INIT=@lua/lunet/x.lua " .. h.lunet() .. " lua/lunet/x.lua")
  eq(code, 0, out)
  eq(out, "false\n@./lua/lunet/x.lua\nfalse\n@./lua/lunet/x.lua\n", "LUA_INIT's @file and the script")
  os.execute("rm -rf " .. dir)
end)

test("the same in module mode (require 'lunet' from a stock lua5.4)", function()
  local build = h.lunet():match("^(.*)/[^/]*$")
  local moddir = h.tmpname()
  os.remove(moddir)
  os.execute("mkdir -p " .. moddir .. " && ln -sf " .. build .. "/libLunetLuaModule.so " .. moddir .. "/lunet.so")
  local preload = os.getenv("LUNET_SANITIZER_PRELOAD")
  local script = h.script("local lunet = require 'lunet'\nhttp, task = lunet.http, lunet.task\n" .. PROBES)
  local code, out = h.run("env -u LUNET_INTERNALS " .. (preload and ("LD_PRELOAD='" .. preload .. "' ") or "") ..
    "LUA_CPATH='" .. moddir .. "/?.so;;' lua5.4 " .. script)
  eq(code, 0, out)
  eq(probes(out), { load = "no", loadfile = "no", binary = "refused", ["own binary"] = "loaded", getupvalue = "no", setupvalue = "refused",
    ["task.spawn(require)"] = "no", ["own upvalue"] = "mine\t42" }, "each route:\n" .. out)
end)

h.done()
