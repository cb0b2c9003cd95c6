-- What `lunet api --check` generates from a schema (lunet.openapi.generate), bounded whatever the
-- schema says (issue 46, item 8): a server's `maxLength: 4000000000` or `minItems: 1e9` once
-- built a 4 GB string or grew past 1.9 GB. Pure: no network.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local gen = require "lunet.openapi.generate"

local function ctx(seed) return { rand = gen.random(seed or 7) } end

test("a huge maxLength: allowed strings stay within the generator's bound, and no forbidden one is made past it", function()
  local s = { type = "string", maxLength = 4000000000 }
  for seed = 1, 20 do
    local v = gen.valid(ctx(seed), s)
    truthy(type(v) == "string" and #v <= gen.MAX_STRING, "seed " .. seed .. ": " .. #v)
    local bad, way = gen.invalid(ctx(seed), s)
    truthy(way ~= "longer than maxLength", "no 4 GB string: " .. tostring(way))
    truthy(type(bad) ~= "string" or #bad <= gen.MAX_STRING, "seed " .. seed)
  end
  local _, way = gen.invalid(ctx(3), { type = "string", maxLength = 5, enum = nil })
  truthy(way ~= nil, "a small maxLength is still crossed when picked")
end)

test("minItems and minLength past the bounds, or not whole numbers, are refused with a message", function()
  for _, c in ipairs({
    { { type = "array", minItems = 1e9, items = { type = "integer" } }, "minItems 1000000000 is more than --check makes" },
    { { type = "string", minLength = 10000000 }, "minLength 10000000 is more than --check makes" },
    { { type = "string", maxLength = -1 }, "maxLength is -1" },
    { { type = "array", minItems = "many" }, "minItems is many" },
    { { type = "string", minLength = 1.5 }, "minLength is 1.5" },
  }) do
    local t0 = os.clock()
    local ok, err = pcall(gen.valid, ctx(), c[1])
    truthy(not ok and tostring(err):find(c[2], 1, true), c[2] .. ": " .. tostring(err))
    truthy(os.clock() - t0 < 1, "at once")
  end
  eq(#gen.valid(ctx(), { type = "array", minItems = 3.0, maxItems = 3, items = { type = "integer" } }), 3, "3.0 is 3")
end)
