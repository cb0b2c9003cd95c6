-- "Did you mean ...?" (lua/lunet/suggest.lua): a real edit distance with transpositions, used by
-- option checks in http.lua and by the one-shot command line.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local suggest = require "lunet.suggest"

test("distance: insertions, deletions, substitutions, and a swap of neighbours costs one", function()
  eq(suggest.distance("timout", "timeout"), 1, "one deleted letter")
  eq(suggest.distance("heders", "headers"), 1, "one deleted letter")
  eq(suggest.distance("tiemout", "timeout"), 1, "two letters swapped")
  eq(suggest.distance("kitten", "sitting"), 3, "the textbook case")
  eq(suggest.distance("", "abc"), 3, "from nothing")
end)

test("closest: the nearest known name, or nil when nothing is near", function()
  local known = { "timeout", "headers", "connect_timeout", "json", "form" }
  eq(suggest.closest("timout", known), "timeout", "timout")
  eq(suggest.closest("heders", known), "headers", "heders")
  eq(suggest.closest("jsno", known), "json", "jsno")
  eq(suggest.closest("zzzzzz", known), nil, "nothing near")
  eq(suggest.closest("timout", { timeout = "number", json = "any" }), "timeout", "the keys of a table")
end)

test("the docs' example: a mistyped request option names the right one", function()
  for _, typo in ipairs({ "timout", "heders" }) do
    local ok, err = pcall(http.get, "http://127.0.0.1:1/", { [typo] = 1 })
    truthy(not ok and tostring(err):find("did you mean '" .. (typo == "timout" and "timeout" or "headers") .. "'", 1, true), tostring(err))
  end
end)

test("the one-shot command line suggests the closest option", function()
  local args = require "lunet.cli.args"
  local _, err = args.parse({ "--jsno", "x.org" })
  truthy(err:find("did you mean '--json'?", 1, true), err)
  _, err = args.parse({ "--chek-status", "x.org" })
  truthy(err:find("did you mean '--check-status'?", 1, true), err)
end)

if h.done then h.done() end
