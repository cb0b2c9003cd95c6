-- scripts/check-layers' Lua floors (scripts/check-layers.d/lua_floors.py): a require that goes up
-- a floor, a require cycle and a module without a floor are each refused with where they are;
-- lazy requires inside functions count as much as those at the top; comments do not.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or "./")
local CHECK = ROOT .. "scripts/check-layers.d/lua_floors.py"

-- A tree of lua/ files (name -> text) in a temporary directory; the checker's output and status.
local function check(files)
  local dir = h.temp_dir()
  for name, text in pairs(files) do
    local path = dir .. "/lua/" .. name:gsub("%.", "/") .. ".lua"
    os.execute("mkdir -p '" .. path:match("^(.*)/") .. "'")
    h.write_file(path, text)
  end
  local code, out = h.run("python3 '" .. CHECK .. "' '" .. dir .. "'")
  return code, out
end

test("a tree whose requires go down or across passes", function()
  local code, out = check({
    ["lunet.http"] = 'local url = require "lunet.url"\n',
    ["lunet.url"] = "return {}\n",
    ["lunet.auth"] = 'local http = require("lunet.http")\nlocal f = function() return require "lunet.session_store" end\n',
    ["lunet.session_store"] = "return {}\n",
    ["lunet.cli.main"] = 'require "lunet.auth"\nrequire "lunet.cli.argv"\n',
    ["lunet.cli.argv"] = "return {}\n",
  })
  eq(out, "", "no problem printed")
  eq(code, 0)
end)

test("a require up a floor is refused with its file and line, lazy or not", function()
  local code, out = check({
    ["lunet.http"] = 'local url = require "lunet.url"\n-- require "lunet.cli.main" in a comment does not count\nlocal function a() return require("lunet.auth").check end\n',
    ["lunet.url"] = "return {}\n",
    ["lunet.auth"] = 'return { x = require "lunet.openapi.cli" }\n',
    ["lunet.openapi.cli"] = "return {}\n",
  })
  eq(code, 1)
  truthy(out:find("lua/lunet/http.lua:3: lunet.http (core) requires lunet.auth (features), a floor above", 1, true), out)
  truthy(out:find("lua/lunet/auth.lua:1: lunet.auth (features) requires lunet.openapi.cli (commands), a floor above", 1, true), out)
  truthy(not out:find("cli.main", 1, true), "the comment's require: " .. out)
end)

test("a require cycle is refused, on one floor too", function()
  local code, out = check({
    ["lunet.response"] = 'local function s() return require "lunet.body_stream" end\n',
    ["lunet.body_stream"] = 'local r = require "lunet.response"\n',
    ["lunet.url"] = "return {}\n",
  })
  eq(code, 1)
  eq(out, "a require cycle: lunet.body_stream -> lunet.response\n")
end)

test("a module without a floor is refused", function()
  local code, out = check({ ["lunet.newthing"] = "return {}\n" })
  eq(code, 1)
  truthy(out:find("module lunet.newthing has no floor", 1, true), out)
end)

h.done()
