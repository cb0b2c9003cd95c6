-- lunet.schema beyond the JSON Schema Test Suite (schema_suite_test.lua): the error objects,
-- schema errors at compile time, the OpenAPI 3.0 dialect, lunet's data model, the regex
-- engine's fast path against its DFA, and hostile input (deep, large, recursive, catastrophic).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local schema = require "lunet.schema"
local regex = require "lunet.schema.regex"

local function compile(text, opts) return schema.compile(json.decode(text), opts) end

--- The errors of validating JSON text `doc`, sorted by path then rule (for stable comparisons).
local function errors_of(v, doc)
  local ok, errs = v:validate(type(doc) == "string" and json.decode(doc) or doc)
  eq(ok, false, "valid")
  table.sort(errs, function(a, b)
    if a.path ~= b.path then return a.path < b.path end
    return a.rule < b.rule
  end)
  return errs
end

test("an error names the value's path, the keyword's schema path, the rule and what is wrong", function()
  local v = compile([[{
    "type": "object",
    "properties": { "items": { "type": "array", "items": { "type": "object", "required": ["price"],
      "properties": { "price": { "type": "number", "minimum": 5 } } } } } }]])
  local errs = errors_of(v, [[{ "items": [ { "price": 6 }, { "price": 7 }, {}, { "price": 3 } ] }]])
  eq(errs, {
    { path = "/items/2", schema_path = "/properties/items/items/required", rule = "required",
      message = 'the property "price" is required' },
    { path = "/items/3/price", schema_path = "/properties/items/items/properties/price/minimum", rule = "minimum",
      message = "3 is less than the minimum 5" },
  }, "errors")
  eq({ v:validate(json.decode('{ "items": [ { "price": 5 } ] }')) }, { true }, "a valid value: true and no list")
end)

test("typical failures and their messages", function()
  local v = compile([[{
    "type": "object", "additionalProperties": false,
    "properties": {
      "name": { "type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$" },
      "kind": { "enum": ["a", "b"] }, "n": { "type": "integer", "exclusiveMaximum": 10, "multipleOf": 3 },
      "tags": { "type": "array", "uniqueItems": true, "maxItems": 2 }, "a/b~c": { "const": 1 } } }]])
  local errs = errors_of(v, [[{ "name": "Xyzzy!", "kind": "c", "n": 10.5, "tags": [1, 2, 1], "a/b~c": 2, "extra": 0 }]])
  local got = {}
  for _, e in ipairs(errs) do got[#got + 1] = e.path .. " " .. e.rule .. ": " .. e.message end
  eq(got, {
    '/a~1b~0c const: 2 is not 1',
    '/extra additionalProperties: the property "extra" is not allowed',
    '/kind enum: "c" is not one of "a", "b"',
    '/n exclusiveMaximum: 10.5 is not less than the exclusive maximum 10',
    '/n multipleOf: 10.5 is not a multiple of 3',
    '/n type: 10.5 is a number, not an integer',
    '/name maxLength: "Xyzzy!" is longer than 4 characters',
    '/name pattern: "Xyzzy!" does not match the pattern "^[a-z]+$"',
    '/tags maxItems: the array has 3 items, more than the maximum 2',
    '/tags uniqueItems: items 0 and 2 are equal (1)',
  }, "errors")
end)

test("the value itself is path \"\"; a false schema, oneOf and not say which", function()
  local v = compile('{ "oneOf": [ { "type": "integer" }, { "minimum": 0 } ] }')
  local errs = errors_of(v, "3")
  eq(errs[1].path, "", "path")
  eq(errs[1].rule, "oneOf", "rule")
  eq(errs[1].message, "3 matches both the 1st and the 2nd schemas of oneOf; it must match exactly one", "message")
  eq(errors_of(compile('{ "properties": { "x": false } }'), '{ "x": 1 }')[1].rule, "false", "a false schema")
  eq(errors_of(compile('{ "not": { "type": "string" } }'), '"s"')[1].message, '"s" matches the schema of not', "not")
end)

test("through a $ref, schema_path points at the keyword where it is", function()
  local v = compile([[{ "$defs": { "pos": { "type": "integer", "minimum": 1 } },
    "properties": { "a": { "$ref": "#/$defs/pos" } } }]])
  local e = errors_of(v, '{ "a": 0 }')[1]
  eq({ e.path, e.schema_path }, { "/a", "/$defs/pos/minimum" }, "locations")
  -- in a document that opts.load gave: its URI, then the pointer
  local other = { type = "string" }
  local w = schema.compile({ ["$ref"] = "http://example.com/other.json" },
    { load = function(u) if u == "http://example.com/other.json" then return other end end })
  eq(errors_of(w, "1")[1].schema_path, "http://example.com/other.json#/type", "remote schema path")
end)

test("a $ref that names nothing is a compile error naming the reference and where it is", function()
  local e = fails("schema", function() compile('{ "properties": { "a": { "items": { "$ref": "#/$defs/missing" } } } }') end)
  truthy(e.message:find('"#/$defs/missing"', 1, true), e.message)
  truthy(e.message:find("/properties/a/items/$ref", 1, true), e.message)
  e = fails("schema", function() compile('{ "$ref": "other.json#/x" }') end)
  truthy(e.message:find("pass opts.load", 1, true), e.message)
  e = fails("schema", function()
    compile('{ "$ref": "http://x.test/s.json" }', { load = function() return nil, "HTTP 404" end })
  end)
  truthy(e.message:find("HTTP 404", 1, true), e.message)
  e = fails("schema", function() compile('{ "$ref": "#nowhere" }') end)
  truthy(e.message:find('no anchor "nowhere"', 1, true), e.message)
end)

test("schemas of the wrong shape are compile errors naming the place", function()
  local cases = {
    { '{ "properties": { "a": { "minimum": "5" } } }', "minimum must be a number (at /properties/a/minimum)" },
    { '{ "type": "text" }', 'type "text" is not a JSON Schema type' },
    { '{ "required": "a" }', "must be an array of property names (at /required)" },
    { '{ "pattern": "(a" }', 'pattern "(a": missing )' },
    { '{ "pattern": "\\\\1" }', "backreferences" },
    { '{ "pattern": "(?=a)" }', "lookahead and lookbehind are not supported" },
    { '{ "pattern": "\\\\p{Greek}" }', "only General_Category values" },
    { '{ "prefixItems": [1] }', "a schema must be an object or a boolean, not an integer (at /prefixItems/0)" },
    { '{ "items": [{}] }', "a schema must be an object or a boolean, not an array (at /items)" },
    { '{ "maxLength": -1 }', "maxLength must be a non-negative integer" },
    { '{ "multipleOf": 0 }', "multipleOf must be greater than 0" },
    { '{ "allOf": [] }', "allOf must be a non-empty array of schemas" },
  }
  for _, c in ipairs(cases) do
    local e = fails("schema", function() compile(c[1]) end, c[1])
    truthy(e.message:find(c[2], 1, true), c[1] .. " -> " .. e.message)
  end
  local e = fails("schema", function() compile('{ "items": true }', { dialect = "draft4" }) end)
  truthy(e.message:find("a schema must be an object in draft4, not a boolean", 1, true), e.message)
end)

test("bad arguments and options are errors of kind argument", function()
  fails("argument", function() schema.compile("{}") end, "a string schema")
  fails("argument", function() schema.compile({}, { dialect = "draft7" }) end, "an unknown dialect")
  fails("argument", function() schema.compile({}, { formats = "yes" }) end, "a mistyped option")
  fails("argument", function() schema.compile({}, { direction = "up" }) end, "an unknown direction")
  local e = fails("argument", function() schema.compile({}, { base = "x" }) end, "an unknown option")
  eq(e.message, "unknown option 'base' (schema.compile)", "message")
  local e2 = fails("schema", function() compile('{ "$schema": "http://json-schema.org/draft-07/schema#" }') end)
  truthy(e2.message:find("names no dialect", 1, true), e2.message)
end)

test("the data model: hand-built arrays and objects, json.null, 1.0, non-JSON values", function()
  local arr, obj = compile('{ "type": "array" }'), compile('{ "type": "object" }')
  eq(arr:validate({ 1, 2, 3 }), true, "keys 1..n: an array")
  eq(obj:validate({}), true, "an unmarked empty table: an object")
  eq(arr:validate(json.array()), true, "json.array(): an empty array")
  eq(obj:validate({ 1, 2, x = 3 }), true, "mixed keys: an object")
  eq(obj:validate(json.decode("{}")), true, "a decoded {}")
  eq(compile('{ "type": "integer" }'):validate(1.0), true, "1.0 is an integer")
  eq(compile('{ "type": "null" }'):validate(json.null), true, "json.null is null")
  local ok, errs = compile('{ "type": "string" }'):validate(print)
  eq(ok, false, "a function")
  truthy(errs[1].message:find("no JSON value", 1, true), errs[1].message)
  eq(compile('{ "minLength": 3, "maxLength": 3 }'):validate("héé"), true, "lengths count code points")
  eq(compile('{ "enum": [1, [1, 2], { "a": null }] }'):validate(json.decode('{ "a": null }')), true, "enum of objects")
  eq(compile('{ "const": [] }'):validate(json.decode("{}")), false, "[] is not {}")
end)

test("formats are annotations in 2020-12 unless asked; checked with formats = true", function()
  local s = '{ "format": "date" }'
  eq(compile(s):validate("2021-02-29"), true, "annotation by default")
  local v = compile(s, { formats = true })
  eq(v:validate("2021-02-29"), false, "not a leap year")
  eq(v:validate("2024-02-29"), true, "a leap year")
  eq(compile('{ "format": "no-such-format" }', { formats = true }):validate("x"), true, "unknown formats are ignored")
end)

test("boolean schemas in 2020-12", function()
  eq(schema.validate(true, 1), true, "true")
  local ok, errs = schema.validate(false, 1)
  eq({ ok, errs[1].rule, errs[1].path }, { false, "false", "" }, "false")
end)

-- An OpenAPI 3.0 document, its schemas compiled through a $ref into it (as the API layer will).
local API = json.decode([[{
  "openapi": "3.0.3",
  "components": { "schemas": {
    "Pet": {
      "type": "object", "required": ["petType", "id", "name"],
      "discriminator": { "propertyName": "petType", "mapping": { "kitty": "#/components/schemas/Cat" } },
      "oneOf": [ { "$ref": "#/components/schemas/Cat" }, { "$ref": "#/components/schemas/Dog" } ],
      "properties": {
        "id": { "type": "integer", "format": "int64", "readOnly": true },
        "name": { "type": "string", "nullable": true },
        "password": { "type": "string", "writeOnly": true },
        "owner": { "$ref": "#/components/schemas/Owner" },
        "petType": { "type": "string" } } },
    "Cat": { "type": "object", "properties": { "lives": { "type": "integer", "maximum": 9 } } },
    "Dog": { "type": "object", "required": ["bark"], "properties": { "bark": { "type": "boolean" } } },
    "Owner": { "type": "object", "readOnly": true },
    "Level": { "type": "string", "enum": ["low", "high"], "nullable": true } } } }]])

local function openapi(name, opts)
  opts = opts or {}
  opts.dialect, opts.load = "openapi-3.0", function(u) if u == "api.json" then return API end end
  return schema.compile({ ["$ref"] = "api.json#/components/schemas/" .. name }, opts)
end

test("base_uri names the document load returns: schemas from it reach its other schemas", function()
  local load = function(u) if u == "https://api.test/openapi.json" then return API end end
  local opts = { dialect = "openapi-3.0", base_uri = "https://api.test/openapi.json", load = load }
  -- a schema inside the document (a request body's, say), whose $refs are relative to it
  local body = { type = "array", items = { ["$ref"] = "#/components/schemas/Dog" } }
  local v = schema.compile(body, opts)
  eq(v:validate(json.decode('[ { "bark": true } ]')), true, "a Dog")
  local ok, errs = v:validate(json.decode('[ { "bark": 1 } ]'))
  eq({ ok, errs[1].path, errs[1].schema_path }, { false, "/0/bark", "https://api.test/openapi.json#/components/schemas/Dog/properties/bark/type" },
    "the error's place in the document")
  -- a $ref to one of its schemas, absolute
  local w = schema.compile({ ["$ref"] = "https://api.test/openapi.json#/components/schemas/Level" }, opts)
  eq({ w:validate("low"), (w:validate("mid")) }, { true, false }, "Level")
end)

test("openapi-3.0: nullable adds null to type, and only there", function()
  local pet = openapi("Pet")
  eq(pet:validate(json.decode('{ "petType": "Dog", "bark": true, "id": 1, "name": null }')), true, "a null name")
  local level = openapi("Level")
  eq(level:validate("low"), true, "in the enum")
  local ok, errs = level:validate(json.null)
  eq({ ok, errs[1].rule }, { false, "enum" }, "null passes type, but the enum has no null (OpenAPI 3.0.3)")
  eq(compile('{ "type": "string", "nullable": true }', { dialect = "draft4" }):validate(json.null), false,
    "nullable means nothing in draft 4")
end)

test("openapi-3.0: the discriminator picks the branch, by mapping or by schema name", function()
  local pet = openapi("Pet")
  eq(pet:validate(json.decode('{ "petType": "kitty", "id": 1, "name": "Tom", "lives": 3 }')), true, "mapped")
  eq(pet:validate(json.decode('{ "petType": "Dog", "id": 2, "name": "Rex", "bark": false }')), true, "by name")
  -- the Dog branch alone is checked: its error, not oneOf's
  local ok, errs = pet:validate(json.decode('{ "petType": "Dog", "id": 2, "name": "Rex" }'))
  eq({ ok, errs[1].rule, errs[1].schema_path }, { false, "required", "api.json#/components/schemas/Dog/required" }, "Dog's error")
  ok, errs = pet:validate(json.decode('{ "petType": "Lizard", "id": 3, "name": "Liz" }'))
  eq({ ok, errs[1].rule, errs[1].path }, { false, "discriminator", "/petType" }, "an unknown value")
  eq(errs[1].message, 'the discriminator property "petType" is "Lizard", which names none of the schemas: Cat, Dog, kitty',
    "the message names the property and what it may be")
  ok, errs = pet:validate(json.decode('{ "id": 3, "name": "Liz" }'))
  local rules = {}
  for _, e in ipairs(errs) do rules[#rules + 1] = e.rule end
  table.sort(rules)
  eq(rules, { "discriminator", "required" }, "a missing discriminator property")
  truthy(errs[1].message:find('"petType"', 1, true) or errs[2].message:find('"petType"', 1, true), "named")
end)

test("openapi-3.0: readOnly and writeOnly with a direction", function()
  local doc = json.decode('{ "petType": "Dog", "bark": true, "id": 7, "name": "Rex", "password": "x" }')
  eq(openapi("Pet"):validate(doc), true, "no direction: annotations")
  local ok, errs = openapi("Pet", { direction = "request" }):validate(doc)
  eq({ ok, #errs, errs[1].rule, errs[1].path }, { false, 1, "readOnly", "/id" }, "id is read-only")
  eq(errs[1].message, 'the property "id" is read-only: it must not be sent in a request', "message")
  -- a required readOnly property need not be sent
  eq(openapi("Pet", { direction = "request" }):validate(
    json.decode('{ "petType": "Dog", "bark": true, "name": "Rex" }')), true, "id required in responses only")
  ok, errs = openapi("Pet", { direction = "response" }):validate(doc)
  eq({ ok, errs[1].rule, errs[1].path }, { false, "writeOnly", "/password" }, "password is write-only")
  -- readOnly on the $ref's target counts too
  ok, errs = openapi("Pet", { direction = "request" }):validate(
    json.decode('{ "petType": "Dog", "bark": true, "name": "Rex", "owner": {} }'))
  eq({ ok, errs[1].path }, { false, "/owner" }, "owner is read-only through its $ref")
end)

test("openapi-3.0: formats are checked, OpenAPI's own among them", function()
  local function check(format, good, bad)
    local v = compile('{ "format": "' .. format .. '" }', { dialect = "openapi-3.0" })
    for _, x in ipairs(good) do eq(v:validate(x), true, format .. " " .. tostring(x)) end
    for _, x in ipairs(bad) do eq(v:validate(x), false, format .. " " .. tostring(x)) end
  end
  check("int32", { 2147483647, -2147483648, 5.0 }, { 2147483648, 1.5 })
  check("int64", { math.maxinteger, 1.0 }, { 2 ^ 63, 0.5 })
  check("float", { 1.5, 3.4e38 }, { 1e39 })
  check("byte", { "aGVsbG8=", "" }, { "aGVsbG8", "a$==" })
  check("date-time", { "2024-02-29T12:00:00Z", "2024-01-01T00:00:00.5+01:00" }, { "2024-02-30T12:00:00Z", "2024-01-01" })
  check("uuid", { "123e4567-e89b-12d3-a456-426614174000" }, { "123e4567e89b12d3a456426614174000" })
  check("email", { "a.b@example.com" }, { "a@b@c", "@example.com" })
  check("uri", { "https://example.com/a?b#c", "urn:isbn:123" }, { "/relative", "http://exa mple.com" })
  check("binary", { "\0\1\2" }, {})
end)

test("hostile: a 20-level-deep and a 10,000-element instance", function()
  local deep = compile('{ "$defs": { "n": { "type": "object", "properties": { "c": { "$ref": "#/$defs/n" } } } }, "$ref": "#/$defs/n" }')
  local doc = {}
  local at = doc
  for _ = 1, 20 do at.c = {}; at = at.c end
  eq(deep:validate(doc), true, "20 levels")
  at.c = 5
  local ok, errs = deep:validate(doc)
  eq({ ok, errs[1].path }, { false, string.rep("/c", 21) }, "the error 21 levels down")
  local list = json.array()
  for i = 1, 10000 do list[i] = { id = i, name = "n" .. i } end
  local v = compile('{ "type": "array", "uniqueItems": true, "items": { "type": "object", "required": ["id"],' ..
    ' "properties": { "id": { "type": "integer", "minimum": 1 }, "name": { "type": "string", "pattern": "^n[0-9]+$" } } } }')
  local t0 = os.clock()
  eq(v:validate(list), true, "10,000 items")
  list[9999].id = 0
  ok, errs = v:validate(list)
  eq({ ok, #errs, errs[1].path }, { false, 1, "/9998/id" }, "one bad item among 10,000")
  truthy(os.clock() - t0 < 5, "in reasonable time")
end)

test("hostile: a self-referencing $ref recurses as deep as the value, and a cycle that consumes nothing stops", function()
  local tree = compile('{ "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#" } } } }')
  local doc = {}
  local at = doc
  for _ = 1, 500 do local kid = {}; at.kids = { kid }; at = kid end
  eq(tree:validate(doc), true, "500 levels of a recursive schema")
  local e = fails("schema", function() compile('{ "$ref": "#" }'):validate(1) end, "a $ref to itself")
  truthy(e.message:find("levels deep", 1, true), e.message)
  e = fails("schema", function() compile('{ "allOf": [ { "$ref": "#/$defs/a" } ], "$defs": { "a": { "anyOf": [ { "$ref": "#" } ] } } }'):validate(1) end)
  truthy(e.message:find("consumes no input", 1, true), e.message)
  local cyclic = { type = "object" }
  cyclic.allOf = { cyclic }   -- a Lua table that contains itself
  e = fails("schema", function() schema.compile(cyclic):validate({}) end, "a table cycle")
  truthy(e.message:find("levels deep", 1, true), e.message)
end)

test("hostile: catastrophic backtracking shapes run in linear time", function()
  local v = compile('{ "pattern": "^(a+)+$" }')
  local t0 = os.clock()
  eq(v:validate(string.rep("a", 30) .. "b"), false, "30 a's and a b")
  eq(v:validate(string.rep("a", 100000) .. "b"), false, "100,000 a's and a b")
  eq(v:validate(string.rep("a", 100000)), true, "100,000 a's")
  eq(compile('{ "pattern": "(x+x+)+y" }'):validate(string.rep("x", 5000)), false, "(x+x+)+y")
  eq(compile('{ "pattern": "^(a|aa)*c$" }'):validate(string.rep("a", 5000) .. "b"), false, "(a|aa)*")
  truthy(os.clock() - t0 < 2, "in under 2 s: " .. (os.clock() - t0))
  -- a pattern that expands past the engine's bound is refused, not run
  local e = fails("schema", function() compile('{ "pattern": "((a{1,100}){1,100}){1,100}" }') end)
  truthy(e.message:find("too large", 1, true), e.message)
end)

test("the Lua-pattern fast path answers as the DFA does", function()
  local patterns = { "^[A-Z]{3}-[0-9]{4}$", "^[a-z][a-z0-9-]*$", "^\\+?[0-9]{2,4}$", "^a*b?c+$", "^[^x]y", "^.\\d",
    "^[%a-]+$", "^\\]?[\\^%-]{0,2}$", "^[\\x00-\\x1f]$", "^a{2,}$", "^ab?$" }
  local alphabet = { "a", "b", "c", "x", "y", "A", "Z", "0", "9", "-", "+", "%", "^", "]", "\0", "\n", "é" }
  math.randomseed(38)
  for _, p in ipairs(patterns) do
    local fast, slow = regex.compile(p), regex.compile(p)
    truthy(fast.lua, "a Lua pattern for " .. p)
    slow.lua, slow.any_lua = nil, nil
    for _ = 1, 400 do
      local parts = {}
      for j = 1, math.random(0, 8) do parts[j] = alphabet[math.random(#alphabet)] end
      local s = table.concat(parts)
      eq(fast:test(s), slow:test(s), string.format("%s on %q", p, s))
    end
  end
  for _, p in ipairs({ "^a*a$", "^[a-z]*[a-z0-9]*$", "^x{1,9}$", "abc" }) do
    eq(regex.compile(p).lua, nil, "no Lua pattern for " .. p .. " (it could backtrack, or is unanchored)")
  end
end)

test("a validator is reused: many validations, and a failed one leaves nothing behind", function()
  local v = compile('{ "type": "object", "properties": { "a": { "type": "integer" } } }')
  for i = 1, 100 do eq(v:validate({ a = i }), true, "valid " .. i) end
  local ok, errs = v:validate({ a = "x" })
  eq({ ok, #errs }, { false, 1 }, "one error")
  eq(v:validate({ a = 1 }), true, "valid again")
  ok, errs = v:validate({ a = "y" })
  eq(#errs, 1, "errors of the last call only")
end)

h.done()
