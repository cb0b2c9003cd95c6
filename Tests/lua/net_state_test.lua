-- net.on_change with a source that tells no one of its changes (one set by net._set_source):
-- listeners hear them (the source is polled), and that poll keeps no script running.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- Runs a chunk in a lunet of its own; a script that does not end is stopped (status 124).
local function child(code)
  return h.run("timeout 30 " .. LUNET .. " -e " .. q(code))
end

test("net.on_change hears a change of a source set by net._set_source, without net._check", function()
  local state = false
  net._set_source(function() return state end)
  local heard = {}
  net.on_change(function(online) heard[#heard + 1] = online end)
  state = true
  for _ = 1, 100 do                         -- up to 5 s for the poll to see it
    if #heard > 0 then break end
    task.sleep(0.05)
  end
  eq(heard, { true }, "the listener heard the change")
  state = false
  for _ = 1, 100 do
    if #heard > 1 then break end
    task.sleep(0.05)
  end
  eq(heard, { true, false }, "and the next one")
  net._set_source(nil)
end)

test("a listener on an injected source keeps no script running", function()
  local code, out = child([[
    net._set_source(function() return true end)
    net.on_change(function() end)
    print("main chunk done")
  ]])
  eq({ code, out }, { 0, "main chunk done\n" }, "the script ended")
end)

test("a waiter keeps the script running until the source says online, a listener or not", function()
  local code, out = child([[
    local polls = 0
    net._set_source(function() polls = polls + 1 return polls > 4 end)
    net.on_change(function(online) print("heard", online) end)
    net.wait_online():await()
    print("online")
  ]])
  eq({ code, out }, { 0, "heard\ttrue\nonline\n" }, "waited, heard, went on")
end)

h.done()
