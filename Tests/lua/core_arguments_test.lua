-- lunet.core's declared arguments (Sources/LunetLua/Bindings/CoreFunction.swift): a function
-- whose concern declares its arguments refuses one that does not fit with one message form,
-- naming the argument, what it takes and what it got, as an `argument` error; an optional one
-- may be nil. (lunet's modules never pass such values; these calls are a script's that got core.)
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local core = require "lunet.core"   -- scripts/test sets LUNET_INTERNALS=1

local function refusal(fn, ...)
  local ok, e = pcall(fn, ...)
  truthy(not ok, "refused")
  return type(e) == "table" and e.kind .. ": " .. e.message or tostring(e)
end

test("each argument that does not fit is named, with what it takes and what it got", function()
  eq(refusal(core.sha256_file), "argument: bad argument #1 to 'sha256_file' (path: a string expected, got no value)")
  eq(refusal(core.finalize_file, "a", {}), "argument: bad argument #2 to 'finalize_file' (to: a string expected, got table)")
  eq(refusal(core.gzip, 5), "argument: bad argument #1 to 'gzip' (data: a string expected, got number)")
  eq(refusal(core.gunzip, "x", 1.5), "argument: bad argument #2 to 'gunzip' (max: an integer expected, got number)")
  eq(refusal(core.net_watch, "x"), "argument: bad argument #1 to 'net_watch' (on_change: a function expected, got string)")
  eq(refusal(core.write_private, "/tmp/x", nil), "argument: bad argument #2 to 'write_private' (text: a string expected, got nil)")
  eq(refusal(core.unlock_file, "3"), "argument: bad argument #1 to 'unlock_file' (lock: an integer expected, got string)")
end)

test("what fits runs: a number where a string is taken, an optional argument left out", function()
  local path = h.temp_file("abc")
  eq(core.sha256_file(path), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  eq(core.gunzip(core.gzip("hello")), "hello", "gunzip's max left out")
  eq(core.file_size(path), 3)
  truthy(core.finalize_file(path, path .. ".moved"), "durable left out")
  os.remove(path .. ".moved")
end)

h.done()
