-- Found in a directory whose name has a space. (A fixture of Tests/lua/testrunner_test.lua.)
test("found", function()
  expect(arg[0]).to.match("with space/space_test%.lua$")
end)
