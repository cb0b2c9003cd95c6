-- Tests that never yield (a fixture of Tests/lua/test_deadline_test.lua): each must be stopped
-- at its timeout and reported failed, and the next test must run.
test("spins", { timeout = 0.5 }, function()
  while true do end
end)

test("spins inside a pcall", { timeout = 0.5 }, function()
  while true do pcall(function() while true do end end) end
end)

test("spins in a coroutine of its own", { timeout = 0.5 }, function()
  coroutine.wrap(function() while true do end end)()
end)

test("runs after the spinning ones", function()
  task.sleep(0.01)
end)
