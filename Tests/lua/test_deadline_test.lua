-- `lunet test`: a test that never yields is stopped at its timeout, reported failed, and the
-- next test runs (before, it hung for ever with no output).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local FIX = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../Fixtures/spinning/"

test("spinning tests are stopped at their timeout and the next test runs", function()
  local code, out = h.run("timeout 60 " .. LUNET .. " test " .. FIX .. "spin_test.lua 2>&1")
  truthy(code ~= 124, "lunet test finished on its own (timeout(1) did not have to stop it):\n" .. out)
  eq(code, 1, "exit status")
  truthy(out:find("not ok 1 %- [^\n]*spins\n"), "the spinning test failed:\n" .. out)
  truthy(out:find("not ok 2 %- [^\n]*spins inside a pcall"), "even inside a pcall:\n" .. out)
  truthy(out:find("not ok 3 %- [^\n]*spins in a coroutine of its own"), "even in a coroutine it made:\n" .. out)
  truthy(out:find("ok 4 %- [^\n]*runs after the spinning ones"), "the next test ran:\n" .. out)
  truthy(out:find("timed out after 0.5", 1, true), "the failure says why:\n" .. out)
end)

test("the default --timeout stops a spinning test too", function()
  local code, out = h.run("timeout 60 " .. LUNET .. " test --timeout 0.5 " .. FIX .. "default_timeout_test.lua 2>&1")
  eq(code, 1, "exit status:\n" .. out)
  truthy(out:find("not ok 1", 1, true) and out:find("timed out", 1, true), out)
end)

if h.done then h.done() end
