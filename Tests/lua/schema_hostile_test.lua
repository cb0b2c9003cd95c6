-- lunet.schema against hostile schemas and instances (docs/../HOSTILE.md's classes that apply to
-- JSON Schema): patterns whose DFA explodes, huge error lists, deep schemas and instances,
-- $ref / $dynamicRef cycles, big numbers, megabyte strings, control bytes in messages. Each
-- either answers in bounded time and memory or fails with kind "schema"; none passes wrongly.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local schema = require "lunet.schema"
h.cleanup(after_all, h.remove_temps)

local function compile(text, opts) return schema.compile(json.decode(text), opts) end

--- Runs fn, asserting it took under `limit` s of CPU; returns its results.
local function within(limit, what, fn)
  local t0 = os.clock()
  local r = table.pack(fn())
  local spent = os.clock() - t0
  truthy(spent < limit, string.format("%s in under %g s (took %.2f s)", what, limit, spent))
  return table.unpack(r, 1, r.n)
end

local function random_ab(n, seed)
  math.randomseed(seed)
  local t = {}
  for i = 1, n do t[i] = math.random(2) == 1 and "a" or "b" end
  return table.concat(t)
end

test("hostile: backtracking shapes on 50 characters answer at once", function()
  within(2, "three patterns", function()
    eq(compile('{ "pattern": "^(a+)+$" }'):validate(string.rep("a", 50) .. "!"), false, "^(a+)+$")
    eq(compile('{ "pattern": "(a|aa)*b" }'):validate(string.rep("a", 50) .. "!"), false, "(a|aa)*b")
    eq(compile('{ "pattern": "(.*a){20}" }'):validate(string.rep("a", 19) .. string.rep("b", 50)), false, "(.*a){20}")
    eq(compile('{ "pattern": "(.*a){20}" }'):validate(string.rep("ba", 20)), true, "(.*a){20} that matches")
  end)
end)

test("hostile: a pattern whose DFA has a state per position is bounded, and fails closed", function()
  -- [ab]*a[ab]{2000}: every position opens a new DFA state of ~2000 NFA states
  local v = compile('{ "pattern": "[ab]*a[ab]{2000}c" }')
  local s = random_ab(20000, 7)
  local ok, e = within(4, "20,000 characters", function() return pcall(v.validate, v, s) end)
  if not ok then
    eq(e.kind, "schema", "error kind")
    truthy(e.message:find("pattern", 1, true) and e.message:find("too much work", 1, true), e.message)
  else
    eq(e, false, "no c: no match")
  end
  -- a string that matches must never be reported as passing by a limit: error or true
  local good = s .. "a" .. string.rep("b", 2000) .. "c"
  ok, e = within(4, "a matching string", function() return pcall(v.validate, v, good) end)
  truthy((ok and e == true) or (not ok and e.kind == "schema"), "true or a schema error, got " .. tostring(e))
  -- inside not (a quiet check), the limit is still an error, not a failure that not turns into a pass
  local e2 = within(4, "inside not", function()
    return fails("schema", function() compile('{ "not": { "pattern": "[ab]*a[ab]{2000}c" } }'):validate(s) end)
  end)
  truthy(e2.message:find("too much work", 1, true), e2.message)
  -- a megabyte value with an ordinary pattern, on the DFA path (not ASCII), is no work at all
  within(4, "a megabyte for ^[a-zé]+$", function()
    eq(compile('{ "pattern": "^[a-z\\u00e9]+$" }'):validate("\u{e9}" .. string.rep("ab", 500000)), true, "matches")
  end)
  -- many such strings in one value: the bound is per validation, not per string
  local list = json.array()
  for i = 1, 40 do list[i] = random_ab(5000, i) end
  ok, e = within(4, "40 strings", function() return pcall(compile('{ "items": { "pattern": "[ab]*a[ab]{2000}c" } }').validate,
    compile('{ "items": { "pattern": "[ab]*a[ab]{2000}c" } }'), list) end)
  truthy(ok and e == false or (not ok and e.kind == "schema"), "false or a schema error, got " .. tostring(e))
end)

test("hostile: a pattern nested 100,000 groups deep, or a megabyte long, is bounded; messages are short", function()
  local deep = '{ "pattern": "' .. string.rep("(", 100000) .. "a" .. string.rep(")", 100000) .. '" }'
  local ok, r = within(3, "nested groups", function() return pcall(function() return compile(deep):validate("a") end) end)
  truthy(ok and r == true or (not ok and r.kind == "schema"), "true or a schema error")
  local e = within(3, "a long pattern", function()
    return fails("schema", function() compile('{ "pattern": "' .. string.rep("a|", 20000) .. 'b" }') end)
  end)
  truthy(#e.message < 400, "the message quotes the pattern shortened: " .. #e.message .. " bytes")
end)

test("hostile: $ref and $dynamicRef cycles stop with an error", function()
  for _, s in ipairs({ '{ "$ref": "#" }', '{ "$dynamicAnchor": "a", "$dynamicRef": "#a" }',
    '{ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }' }) do
    local e = within(2, s, function() return fails("schema", function() compile(s):validate(1) end, s) end)
    truthy(e.message:find("levels deep", 1, true), e.message)
  end
end)

test("hostile: a schema nested 100,000 levels deep (built in Lua) is refused quickly", function()
  for _, k in ipairs({ "items", "not" }) do
    local s = {}
    local at = s
    for _ = 1, 100000 do at[k] = {}; at = at[k] end
    local e = within(3, k, function() return fails("schema", function() schema.compile(s) end, k) end)
    truthy(e.message:find("levels deep", 1, true), e.message)
  end
end)

test("hostile: instances nested 100,000 levels deep", function()
  local function deep(n, leaf)
    local d = leaf
    for _ = 1, n do d = json.array({ d }) end
    return d
  end
  local a, b = deep(100000, 1), deep(100000, 2)
  within(3, "const, enum, a recursive schema, uniqueItems", function()
    eq(compile('{ "const": 1 }'):validate(a), false, "const")
    eq(compile('{ "enum": [ [ [ 1 ] ] ] }'):validate(a), false, "enum")
    fails("schema", function() compile('{ "items": { "$ref": "#" } }'):validate(a) end, "items $ref #")
    local ok, r = pcall(compile('{ "uniqueItems": true }').validate, compile('{ "uniqueItems": true }'), json.array({ a, b }))
    truthy(ok and r == true or not ok, "uniqueItems answers or fails")
  end)
end)

test("hostile: uniqueItems on 100,000 items is not quadratic", function()
  local ints, objs = json.array(), json.array()
  for i = 1, 100000 do ints[i], objs[i] = i, { a = i, b = { i } } end
  local v = compile('{ "uniqueItems": true }')
  within(3, "100,000 integers and objects", function()
    eq(v:validate(ints), true, "integers")
    eq(v:validate(objs), true, "objects")
    ints[100000] = 1.0
    eq((v:validate(ints)), false, "1.0 equals 1")
  end)
end)

test("hostile: multipleOf with tiny and huge numbers answers", function()
  within(1, "multipleOf", function()
    eq(compile('{ "multipleOf": 1e-300 }'):validate(1e300), false, "1e300 / 1e-300 overflows")
    eq(compile('{ "multipleOf": 1e-308 }'):validate(1.7e308), false, "near the largest double")
    eq(compile('{ "multipleOf": 0.5 }'):validate(1e308), true, "1e308 is a multiple of 0.5")
    eq(compile('{ "multipleOf": 1e308 }'):validate(1e-300), false, "tiny against huge")
  end)
end)

test("hostile: formats on megabyte strings", function()
  local strings = { string.rep("a", 1000000), string.rep("a.:@%/[", 150000), string.rep("1", 1000000) }
  within(4, "every format", function()
    for _, f in ipairs({ "date", "date-time", "uuid", "email", "uri", "ipv4", "ipv6", "hostname", "byte" }) do
      local v = compile('{ "format": "' .. f .. '" }', { formats = true })
      for i, s in ipairs(strings) do
        if not (f == "byte" and i ~= 2) then eq((v:validate(s)), false, f .. " " .. i) end
      end
    end
  end)
end)

test("hostile: a value with a million failures gives a bounded list of errors", function()
  local list = json.array()
  for i = 1, 20000 do list[i] = "x" end
  local ok, errs = compile('{ "items": { "type": "integer" } }'):validate(list)
  eq({ ok, #errs, errs.more }, { false, 1000, 19000 }, "1,000 errors listed, the rest counted")
  eq({ errs[1000].path, errs[1000].rule }, { "/999", "type" }, "the last one listed")
  -- memory, in a child lunet: a million failures
  local script = h.script([[
    local list = json.array()
    for i = 1, 1000000 do list[i] = "x" end
    local ok, errs = require("lunet.schema").compile({ items = { type = "integer" } }):validate(list)
    print(#errs, errs.more)
  ]])
  local code, out = h.run("/usr/bin/time -f 'maxrss=%M' " .. h.lunet() .. " " .. script)
  eq(code, 0, out)
  truthy(out:find("1000\t999000", 1, true), out)
  local kb = tonumber(out:match("maxrss=(%d+)"))
  truthy(kb and kb < 250000, "under 250 MB: " .. tostring(kb) .. " KB")
end)

test("hostile: control bytes from the schema or the value are escaped in messages", function()
  local ok, errs = compile('{ "required": ["\\u001b[31mred"], "additionalProperties": false }')
    :validate(json.decode('{ "\\u001b]0;title\\u0007": 1, "x\\r\\ny": 2 }'))
  eq(ok, false, "valid")
  for _, e in ipairs(errs) do
    truthy(not e.message:find("[%c\127]"), "no control byte in " .. string.format("%q", e.message))
  end
  local e = fails("schema", function() compile('{ "properties": { "\\u001b[2J": { "type": "nope" } } }') end)
  truthy(not e.message:find("[%c\127]"), "no control byte in " .. string.format("%q", e.message))
  e = fails("schema", function() compile('{ "$defs": { "\\u001b[2J": { "$ref": "#/$defs/%1B%5B2J" } }, "$ref": "#/$defs/%1B%5B2J" }'):validate(1) end)
  truthy(not e.message:find("[%c\127]"), "no control byte in " .. string.format("%q", e.message))
end)

h.done()

-- Issue 46, item 7: schemas that fan out. 40 definitions, each naming the next twice (through
-- allOf or anyOf), ask for 2^40 applications: the whole validation has a budget, and past it
-- the error says why, in bounded time; `lunet api --offline` and --check's generator too.
local function fan_out(n, keyword)
  local defs = {}
  for i = 0, n - 1 do
    local next_ref = { ["$ref"] = "#/$defs/d" .. (i + 1) }
    defs["d" .. i] = { [keyword] = { next_ref, next_ref } }
  end
  defs["d" .. n] = { type = "string", minLength = 1 }
  return { ["$defs"] = defs, ["$ref"] = "#/$defs/d0" }
end

test("a schema whose definitions fan out (2^40 applications) fails within a budget, kind schema", function()
  local schema = require "lunet.schema"
  for _, keyword in ipairs({ "allOf", "anyOf", "oneOf" }) do
    local t0 = os.clock()
    -- (anyOf stops at the first branch that holds: a value that fails them all explores them all)
    local value = keyword == "anyOf" and 5 or "abc"
    local ok, err = pcall(function() return schema.compile(fan_out(40, keyword)):validate(value) end)
    truthy(not ok and type(err) == "table" and err.kind == "schema", keyword .. ": kind schema: " .. tostring(err))
    truthy(tostring(err):find("fan out", 1, true), tostring(err))
    h.time_bound(os.clock() - t0, 20, keyword .. ": bounded: " .. (os.clock() - t0) .. " s")
  end
  eq(schema.compile(fan_out(8, "allOf")):validate("abc"), true, "2^8 applications are nothing")
  local gen = require "lunet.openapi.generate"
  local doc = fan_out(40, "allOf")
  local ctx = { rand = gen.random(1), set = { deref = function(_, s) return doc["$defs"][s["$ref"]:match("d%d+$")] end }, uri = "" }
  local ok, err = pcall(gen.valid, ctx, doc)
  truthy(not ok and tostring(err):find("fan out", 1, true), "the generator too: " .. tostring(err))
end)
