-- Tracebacks show the user's frames: lunet's own (lua/lunet/*, and the C functions they call)
-- fold into one `[lunet]` line, for scripts, unhandled task failures and the prompt;
-- LUNET_TRACEBACK=full shows every frame.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local BIN = h.env("LUNET_HTTPBIN")
local tb = require "lunet.traceback"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function script(text) return h.script(text, "_user_script.lua") end

-- An error raised in the user's on_chunk callback reaches the script through the request's
-- task and its await: lunet frames sit between the user's.
local THROUGH_HTTP = [[
local function fetch(u)
  local r = http.get(u, { on_chunk = function() error("chunk refused") end })
  return r
end
local r = fetch(os.getenv("LUNET_HTTPBIN") .. "/get")
print(r)
]]

test("a script's error through http and task internals: the user's frames, none of lua/lunet/", function()
  local s = script(THROUGH_HTTP)
  local code, out = h.run("LUNET_HTTPBIN=" .. q(BIN) .. " " .. LUNET .. " " .. s)
  eq(code, 1, "exit status\n" .. out)
  truthy(out:find("chunk refused", 1, true), "the message\n" .. out)
  truthy(out:find("_user_script.lua:2: in local 'fetch'", 1, true), "the user's function\n" .. out)
  truthy(out:find("_user_script.lua:5: in main chunk", 1, true), "the main chunk\n" .. out)
  truthy(out:find("\t[lunet]: in ", 1, true), "lunet's frames as one line\n" .. out)
  truthy(not out:find("lua/lunet/", 1, true), "no lunet frame\n" .. out)
  os.remove(s)
end)

test("LUNET_TRACEBACK=full shows lunet's own frames too", function()
  local s = script(THROUGH_HTTP)
  local code, out = h.run("LUNET_TRACEBACK=full LUNET_HTTPBIN=" .. q(BIN) .. " " .. LUNET .. " " .. s)
  eq(code, 1, "exit status\n" .. out)
  truthy(out:find("lua/lunet/task.lua:%d+: in"), "lunet's frames\n" .. out)
  truthy(out:find("_user_script.lua:2: in local 'fetch'", 1, true), "and the user's\n" .. out)
  truthy(not out:find("[lunet]", 1, true), "nothing folded\n" .. out)
  os.remove(s)
end)

test("an unhandled task failure's report folds lunet's frames too", function()
  local s = script([[
local function later() task.resolved(1):next(function() error("late failure") end) end
later()
]])
  local _, out = h.run(LUNET .. " " .. s)
  truthy(out:find("late failure", 1, true) and out:find("stack traceback", 1, true), out)
  truthy(not out:find("lua/lunet/", 1, true), "no lunet frame\n" .. out)
  local _, full = h.run("LUNET_TRACEBACK=full " .. LUNET .. " " .. s)
  truthy(full:find("lua/lunet/", 1, true), "LUNET_TRACEBACK=full\n" .. full)
  os.remove(s)
end)

test("at the prompt: the user's frames; LUNET_TRACEBACK=full adds lunet's", function()
  local input = table.concat({
    'function fetch() http.get(os.getenv("LUNET_HTTPBIN") .. "/get", { on_chunk = function() error("chunk refused") end }) end',
    'function outer() fetch() end',
    'outer() print("unreached")' }, "\n") .. "\n"
  local run = "printf %s " .. q(input) .. " | env LUNET_HTTPBIN=" .. q(BIN) .. " "
  local _, out = h.run(run .. LUNET)
  truthy(out:find("input#1:1: in function 'fetch'", 1, true) and out:find("input#2:1: in function 'outer'", 1, true), out)
  truthy(not out:find("lua/lunet/", 1, true), "no lunet frame\n" .. out)
  local _, full = h.run(run .. "LUNET_TRACEBACK=full " .. LUNET)
  truthy(full:find("lua/lunet/task.lua", 1, true), "LUNET_TRACEBACK=full\n" .. full)
end)

test("folding: C functions lunet called go with it, those the user called stay, names kept", function()
  local text = table.concat({
    "x.lua:1: boom",
    "stack traceback:",
    "\t[C]: in function 'error'",
    "\tx.lua:1: in upvalue 'bad'",
    "\tlua/lunet/task.lua:100: in function <lua/lunet/task.lua:90>",
    "\t[C]: in function 'pcall'",
    "\tlua/lunet/http.lua:200: in function 'http.get'",
    "\t(...tail calls...)",
    "\tx.lua:5: in main chunk",
    "\t[C]: in ?" }, "\n")
  eq(tb.frames(text), { "\t[C]: in function 'error'", "\tx.lua:1: in upvalue 'bad'", "\t[lunet]: in function 'http.get'",
                        "\tx.lua:5: in main chunk", "\t[C]: in ?" }, "frames")
  eq(tb.user(text):match("^(.-)\n"), "x.lua:1: boom", "the message stays")
  eq(tb.user("no traceback here"), "no traceback here", "text without a traceback")
end)

h.done()
