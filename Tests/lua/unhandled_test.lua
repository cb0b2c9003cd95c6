-- A task that failed with nothing awaiting or catching it ends a script with status 1 after its
-- report (as Node.js does for unhandled rejections); task.on_unhandled("warn") or
-- LUNET_UNHANDLED=warn keeps the report and the status 0.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local function run(code, env)
  local path = h.tmpname()
  local f = io.open(path, "w")
  f:write(code)
  f:close()
  local status, out = h.run((env or "") .. LUNET .. " " .. path .. " 2>&1")
  os.remove(path)
  return status, out
end

test("an unhandled failure: reported, and the exit status is 1", function()
  local status, out = run('task.spawn(function() error("boom in a task") end)\nprint("main done")')
  eq(status, 1, "exit status")
  truthy(out:find("main done", 1, true) and out:find("boom in a task", 1, true) and out:find("nothing awaited or caught", 1, true), out)
end)

test("the opt-outs keep the report and the status 0", function()
  local status, out = run('task.on_unhandled("warn")\ntask.spawn(function() error("boom") end)')
  eq(status, 0, "task.on_unhandled('warn')")
  truthy(out:find("boom", 1, true), "still reported: " .. out)
  status, out = run('task.spawn(function() error("boom") end)', "LUNET_UNHANDLED=warn ")
  eq(status, 0, "LUNET_UNHANDLED=warn")
  truthy(out:find("boom", 1, true), "still reported: " .. out)
end)

test("caught, awaited or cancelled tasks are not unhandled failures", function()
  eq((run('task.spawn(function() error("x") end):catch(function() end)')), 0, "caught")
  eq((run('pcall(function() task.spawn(function() error("x") end):await() end)')), 0, "awaited in a pcall")
  eq((run('local t = task.delay(10) t:cancel()')), 0, "cancelled")
  local status, out = run('task.on_unhandled("sometimes")')
  truthy(status == 1 and out:find("warn", 1, true), "a bad policy is an argument error naming the choices: " .. out)
end)

if h.done then h.done() end
