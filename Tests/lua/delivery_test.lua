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

-- The inner defect is recovered while the outer delivery still runs: recover takes back only the
-- failed delivery's count (it had set the count to 0, which the outer one then took below 0).
test("a delivery that raises inside another one (a wait that turns the loop) is reported, and work goes on", function()
  local code, out = h.run("timeout 20 " .. q(LUNET) .. " -e " .. q([[
local core = require "lunet.core"
local inner_ran = false
core.timer(0, function()
  core.timer(0, function() inner_ran = true; error("a nested host defect") end)
  local deadline = core.now() + 5
  while not inner_ran and core.now() < deadline do core.step() end   -- the loop turns inside this delivery
end)
task.sleep(0.05)
print("nested ran", inner_ran)
local far = task.delay(60)   -- the loop has something far off to wait for
local s2 = task.source()
s2:resolve(3)
print("then", s2.task:next(function(v) return v + 1 end):await())
os.exit(0)
]]))
  truthy(out:find("a nested host defect", 1, true), "the defect is reported: " .. out)
  truthy(out:find("nested ran\ttrue\n", 1, true), out)
  truthy(out:find("then\t4\n", 1, true), "no hang after the nested defect: " .. out)
  eq(code ~= 124, true, "not stopped by timeout")
end)
