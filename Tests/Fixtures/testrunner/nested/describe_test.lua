-- describe nesting and the order of before_each/after_each. (A fixture of Tests/lua/testrunner_test.lua.)
local log = {}
local function note(s) return function() log[#log + 1] = s end end

before_each(note("outer before"))
after_each(note("outer after"))

describe("api", function()
  before_each(note("api before"))
  after_each(note("api after"))
  test("first", note("first"))
  describe("users", function()
    before_each(note("users before"))
    test("second", note("second"))
  end)
end)

test("order", function()
  expect(log).to.equal({
    "outer before", "api before", "first", "api after", "outer after",
    "outer before", "api before", "users before", "second", "api after", "outer after",
    "outer before",
  })
end)
