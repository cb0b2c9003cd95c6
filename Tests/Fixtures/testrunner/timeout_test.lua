-- One test hangs and times out; the next runs. (A fixture of Tests/lua/testrunner_test.lua.)
test("hangs", { timeout = 0.2 }, function()
  task.source().task:await()
end)

test("runs after the hang", function()
  task.sleep(0.01)
end)
