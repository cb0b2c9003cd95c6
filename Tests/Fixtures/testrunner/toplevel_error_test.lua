-- Fails while loading. (A fixture of Tests/lua/testrunner_test.lua.)
test("is never run", function() end)
error("broken at load time")
