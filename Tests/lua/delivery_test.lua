-- runtime.deliver runs a completion or a timer callback from the loop, then the work it made due,
-- without a protected call of its own (runtime.lua says why); the host's protected call catches
-- a defect there, reports it, and calls runtime.recover. After such a defect the work queued
-- before it still runs, and later work still wakes the loop.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

test("a delivery that raises is reported; what it queued runs, and the loop still wakes after", function()
  local code, out = h.run("timeout 20 " .. q(LUNET) .. " -e " .. q([[
local core = require "lunet.core"
local src = task.source()
local after = src.task:next(function(v) return "queued before the defect ran: " .. v end)
core.timer(0, function() src:resolve(1); error("a host defect in a delivery") end)
print(after:await())
-- a continuation queued from the script itself, outside any delivery: it must wake the loop
local s2 = task.source()
s2:resolve(5)
print("then", s2.task:next(function(v) return v * 2 end):await())
print("and a timer", task.delay(0.01):next(function() return "fired" end):await())
]]))
  truthy(out:find("a host defect in a delivery", 1, true), "the defect is reported: " .. out)
  truthy(out:find("queued before the defect ran: 1\n", 1, true), out)
  truthy(out:find("then\t10\n", 1, true), "no hang after the defect: " .. out)
  truthy(out:find("and a timer\tfired\n", 1, true), out)
  eq(code ~= 124, true, "not stopped by timeout")
end)
