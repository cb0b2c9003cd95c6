-- Issue 46, item 9: memory that runs out is an error a script can catch, as in lua5.4, not the
-- end of the process. Run under `ulimit -v` (the address space lunet may use) so that an
-- allocation fails for real: in Lua itself (string.rep, a growing table), and in a Swift
-- function's output (json.encode, whose result is larger than what is left).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy

-- A sanitizer's runtime reserves terabytes of address space: no limit can be set under it.
local skip = h.sanitizer and "a sanitizer reserves the address space ulimit -v limits"
local LIMIT_KB = 700000

local function limited(code)
  return h.run("ulimit -v " .. LIMIT_KB .. " && " .. h.lunet() .. " " .. h.script(code))
end

test("a failed allocation in Lua raises 'not enough memory', which pcall catches", { skip = skip }, function()
  local code, out = limited([[
    print(pcall(string.rep, "x", 2^30))
    local t = {}
    print(pcall(function() for i = 1, 1e9 do t[i] = ("y"):rep(64) .. i end end))
    t = nil
    collectgarbage()
    print("still here", #("z"):rep(1000))
  ]])
  eq({ code, out }, { 0, "false\tnot enough memory\nfalse\tnot enough memory\nstill here\t1000\n" }, "status and output")
end)

test("a Swift function's output that does not fit raises too_large; the program goes on", { skip = skip }, function()
  local code, out = limited([[
    local piece = ("x"):rep(1024 * 1024)
    local big = {}
    for i = 1, 700 do big[i] = piece end   -- the strings are shared; their JSON (700 MiB) is not
    local ok, err = pcall(json.encode, big)
    print(ok, err.kind, (tostring(err.message):match("not enough memory for json.encode")))
    big = nil
    collectgarbage()
    print(json.encode({ a = 1 }))
  ]])
  eq({ code, out }, { 0, "false\ttoo_large\tnot enough memory for json.encode\n{\"a\":1}\n" }, "status and output")
end)

test("unprotected, it ends the script as an error does: message and exit 1", { skip = skip }, function()
  local code, out = limited('local s = string.rep("x", 2^30)\nprint("not reached")\n')
  eq(code, 1, out)
  truthy(out:find("not enough memory", 1, true) and not out:find("not reached", 1, true), out)
  truthy(not out:find("Aborted", 1, true), "no abort: " .. out)
end)
