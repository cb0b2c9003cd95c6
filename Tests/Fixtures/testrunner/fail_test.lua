-- Fails in known ways. (A fixture of Tests/lua/testrunner_test.lua.)
test("a table difference", function()
  local got = { name = "lunet", tags = { "http", "lua" }, version = { major = 0, minor = 1 } }
  expect(got).to.equal({ name = "lunet", tags = { "http", "tcp" }, version = { major = 1, minor = 1 }, extra = true })
end)

test("a string difference", function()
  expect("line one\nline two\n").to.equal("line one\nline 2\n")
end)

test("a plain error", function()
  local t = nil
  return t.field
end)

describe("setup", function()
  before_each(function() error("setup broke") end)
  test("never reaches its body", function() end)
end)

test("passes after the failures", function()
  expect(true).to.be_truthy()
end)
