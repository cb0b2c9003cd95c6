-- yaml.decode and yaml.decode_all (lua/lunet/yaml.lua, docs/yaml.md): each feature against the
-- JSON it must equal, each refusal with its line and column, hostile input (depth, alias bombs,
-- 5 MB) within its time. Real files and parity with PyYAML: yaml_parity_test.lua.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local yaml = require "lunet.yaml"

local differ = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "yaml_differ.lua")

-- Each case: YAML text, then the JSON text of its value.
local function check_all(cases)
  for i = 1, #cases, 2 do
    local ok, v = pcall(yaml.decode, cases[i])
    if not ok then error(string.format("%q: %s", cases[i], tostring(v)), 2) end
    local d = differ(v, json.decode(cases[i + 1]))
    if d then error(string.format("%q: %s", cases[i], d), 2) end
  end
end

-- Each case: YAML text, a piece of the message, line, column.
local function refuse_all(cases)
  for i = 1, #cases, 4 do
    local ok, err = pcall(yaml.decode, cases[i])
    if ok then error(string.format("%q was accepted", cases[i]), 2) end
    local where = string.format("%q: %s", cases[i], tostring(err))
    truthy(type(err) == "table" and err.kind == "decode", "a decode error object: " .. where)
    truthy(err.message:find(cases[i + 1], 1, true), "the message says " .. cases[i + 1] .. ": " .. where)
    truthy(err.message:find(string.format(" at line %d, column %d ", cases[i + 2], cases[i + 3]), 1, true), "line and column: " .. where)
    eq({ err.line, err.column }, { cases[i + 2], cases[i + 3] }, "line and column fields: " .. where)
  end
end

test("block mappings and sequences, compact and nested", function()
  check_all({
    "a: 1\nb:\n  c: x\n  d: [1, 2]\n", '{"a":1,"b":{"c":"x","d":[1,2]}}',
    "- a\n-\n- - x\n  - y\n- k: v\n  l: w\n", '["a",null,["x","y"],{"k":"v","l":"w"}]',
    "key:\n- 1\n- 2\nother: 3\n", '{"key":[1,2],"other":3}',
    "- a:\n  - x\n  b: 2\n", '[{"a":["x"],"b":2}]',
    "  indented: top\n  next: 2\n", '{"indented":"top","next":2}',
    "? a\n: 1\n? b\n? |\n  block key\n: 2\n", '{"a":1,"b":null,"block key\\n":2}',
    "a:\n  # a comment\n  b: 1 # another\n# at the margin\nc: x#y\n", '{"a":{"b":1},"c":"x#y"}',
    "empty: \nalso: ~\nnull: Null\n", '{"empty":null,"also":null,"null":null}',
    "a: {}\nb: []\n", '{"a":{},"b":[]}',
  })
end)

test("keys are strings as written; duplicates and complex keys are refused", function()
  check_all({
    "200: ok\n'404': no\n1.10: a\n0x1F: b\n~: c\ntrue: d\n!!str 12: e\n", '{"200":"ok","404":"no","1.10":"a","0x1F":"b","~":"c","true":"d","12":"e"}',
    "\"\": empty\n'a b': c\n", '{"":"empty","a b":"c"}',
  })
  refuse_all({
    "a: 1\nb: 2\na: 3\n", 'duplicate key "a" (first on line 1)', 3, 1, "200: x\n\"200\": y\n", 'duplicate key "200"', 2, 1,
    "{a: 1, a: 2}", 'duplicate key "a"', 1, 8, "[a, b]: c\n", "a mapping or a sequence as a key is not supported", 1, 1,
    "? [a]\n: b\n", "a mapping or a sequence as a key", 1, 1, "a: 1\n: 2\n", "a mapping entry without a key", 2, 1,
  })
end)

test("scalars: the core schema's null, booleans, integers and floats", function()
  check_all({
    "[null, Null, NULL, ~, true, True, FALSE, yes, no, on, Off]", '[null,null,null,null,true,true,false,"yes","no","on","Off"]',
    "[0, -3, +7, 007, 0o17, 0x1F, 0xff, -0, 0777, 1_000, 0b1, 0x, -0x1]", '[0,-3,7,7,15,31,255,0,777,"1_000","0b1","0x","-0x1"]',
    "[1.5, 1., .5, -.5, 1e3, 2.5E-3, +1.0e+2, 1.2.3, 1e, .]", '[1.5,1.0,0.5,-0.5,1000.0,0.0025,100.0,"1.2.3","1e","."]',
    "[9223372036854775807, -9223372036854775808]", "[9223372036854775807,-9223372036854775808]",
    "[9223372036854775808, 0x10000000000000000, 1e400]", '[9223372036854775808.0,18446744073709551616.0,"$inf"]',
  })
  local v = yaml.decode("[.inf, -.Inf, +.INF, .nan, .NaN, -0.0]")
  eq({ v[1], v[2], v[3] }, { math.huge, -math.huge, math.huge }, "infinities")
  truthy(v[4] ~= v[4] and v[5] ~= v[5], "NaN")
  eq(1 / v[6], -math.huge, "-0.0 keeps its sign")
  check_all({ "[1e400]", '["$inf"]' })
end)

test("quoted scalars: escapes and line folding", function()
  check_all({
    [["\x41\u00e9\U0001F600\uD83D\uDE00 \t\\\"\/\0\a\b\e\f\n\r\v\N\_\L\P\ "]], '"Aé😀😀 \\t\\\\\\"/\\u0000\\u0007\\b\\u001b\\f\\n\\r\\u000b\\u0085\\u00a0\\u2028\\u2029 "',
    "'it''s \\n'", '"it\'s \\\\n"',
    "q: \"a  \n   b\n\n  c \\\n   d\\\n\n  e\"\n", '{"q":"a b\\nc d\\ne"}',
    "q: 'a\n  b\n\n\n  c '\n", '{"q":"a b\\n\\nc "}',
    "\"a\tb\": \"\tc\"\n", '{"a\\tb":"\\tc"}',
  })
  refuse_all({
    'a: "bad \\q"', "unknown escape \\q", 1, 9, 'a: "\\u12"', "\\u needs 4 hexadecimal digits", 1, 5,
    'a: "\\uD800 x"', "a lone UTF-16 surrogate", 1, 5, 'a: "\\UFFFFFFFF"', "an escape beyond U+10FFFF", 1, 5,
    "a: 'open\n", "a quoted string that is never closed", 1, 4,
    "a: \"x\n---\ny\"\n", "a document marker inside a quoted string", 2, 1,
    "\"two\nlines\": x\n", "a key cannot span lines", 1, 1,
  })
end)

test("plain scalars: multi-line, and what they cannot start with", function()
  check_all({
    "plain: a\n  b\n\n  c\nnext: 1\n", '{"plain":"a b\\nc","next":1}',
    "- a\n  - b\n- c:d\n- http://x.y/z?a=b#f\n", '["a - b","c:d","http://x.y/z?a=b#f"]',
    "k: -x\nl: ?y\nm: :z\nn: a\tb\n", '{"k":"-x","l":"?y","m":":z","n":"a\\tb"}',
    "top\nlevel\n", '"top level"',
    "a: \u{2028}x\u{85}y\n", '{"a":"\\u2028x\\u0085y"}',
  })
  refuse_all({
    "a: @b\n", "'@' cannot start a plain scalar", 1, 4, "a: `b\n", "'`' cannot start a plain scalar", 1, 4,
    "a: b: c\n", "a mapping cannot start on the line of another key", 1, 5,
    "a: b\n  c: d\n", "a ':' that is not allowed here", 2, 4, "- a\n  b: c\n", "a ':' that is not allowed here", 2, 4,
    "a: 'x'#c\n", "a comment needs a space before its '#'", 1, 7,
  })
end)

test("block scalars: literal, folded, chomping, indentation", function()
  check_all({
    "a: |\n  l1\n\n  l3\n\n\nb: 2", '{"a":"l1\\n\\nl3\\n","b":2}',
    "a: >\n  f1\n  f2\n\n  f3\n    more\n  f4\n", '{"a":"f1 f2\\nf3\\n  more\\nf4\\n"}',
    "- |-\n  x\n\n- |+\n  x\n\n\n- >-\n  a\n  b\n- |\n  x", '["x","x\\n\\n\\n","a b","x"]',
    "- |2\n   lead\n  next\n- >1\n  sp\n", '[" lead\\nnext\\n"," sp\\n"]',
    "a: |  # comment\n   three\n    four\n", '{"a":"three\\n four\\n"}',
    "- >\n\n folded\n  more\n back\n", '["\\nfolded\\n more\\nback\\n"]',
    "--- |\n  doc\n...\n", '"doc\\n"',
  })
  refuse_all({
    "a: |x\n  y\n", "a block scalar's header", 1, 5,
    "a: |\n    \n  x\n", "an empty line at the start of a block scalar has more spaces", 2, 1,
  })
end)

test("flow collections", function()
  check_all({
    "[a, [b, c], {d: e}, ]", '["a",["b","c"],{"d":"e"}]',
    "{a: [1,\n  2], b: {c: d,\n e: f}, g, \"h\":i, j: }", '{"a":[1,2],"b":{"c":"d","e":"f"},"g":null,"h":"i","j":null}',
    "[a: b, ? c : d, \"e\":f]", '[{"a":"b"},{"c":"d"},{"e":"f"}]',
    "{a:1, url: http://x:80/}", '{"a:1":null,"url":"http://x:80/"}',
    "[\n  # comment\n  a,\n  b # c\n]", '["a","b"]',
  })
  refuse_all({
    "[a, b", "a flow sequence '[' that is never closed", 1, 1, "{a: b\n", "a flow mapping '{' that is never closed", 1, 1,
    "[a b: c, d] e", "unexpected text after the value", 1, 13, "[a, , b]", "unexpected ','", 1, 5,
    "{a: b c: d}", "expected ',' or '}' in the flow mapping", 1, 8,
    "[\n---\n]", "a document marker inside a flow collection", 2, 1,
    "[a, |\n b]", "a block scalar ('|' or '>') cannot be inside a flow collection", 1, 5,
  })
end)

test("anchors, aliases (copies) and merge keys", function()
  check_all({
    "a: &x {p: 1}\nb: *x\nc: &x 2\nd: *x\n&k key: v\n*x : two\nk: *k\n", '{"a":{"p":1},"b":{"p":1},"c":2,"d":2,"key":"v","2":"two","k":"key"}',
    "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\nl:\n  <<: [{x: 9}, *b, {z: 0}]\n", '{"base":{"x":1,"y":2},"m":{"x":1,"y":3},"l":{"x":9,"y":2,"z":0}}',
    "a: {<<: {k: v}, \"<<\": literal}", '{"a":{"k":"v","<<":"literal"}}',
    "- &s [1, 2]\n- *s\n- !!seq &e []\n- *e\n", "[[1,2],[1,2],[],[]]",
  })
  local v = yaml.decode("a: &x {p: [1]}\nb: *x\n")
  truthy(v.a ~= v.b and v.a.p ~= v.b.p, "an alias is a copy, not the same table")
  refuse_all({
    "a: *nope\n", "the alias *nope names no anchor before it", 1, 4,
    "a: &x [*x]\n", "the alias *x is inside the node it names", 1, 8,
    "a: &x\n  b: *x\n", "the alias *x is inside the node it names", 2, 6,
    "a:\n  <<: 1\n", "a merge key '<<' needs a mapping or a list of mappings", 2, 3,
    "a:\n  <<: {}\n  <<: {}\n", "a second merge key", 3, 3, "a: &x &y 1\n", "a node with two anchors", 1, 7,
    "a: &x 1\nb: &y *x\n", "an alias cannot have an anchor or a tag", 2, 7,
  })
end)

test("tags and directives", function()
  check_all({
    "--- !!map\na: !!seq\n- !!str 1\n- !!int '2'\n- !!float 3\n- !!bool true\n- !!null ''\n- !!str\n- ! 12\n- !!int 0x10\n",
    '{"a":["1",2,3.0,true,null,"","12",16]}',
    "%TAG !e! tag:yaml.org,2002:\n---\n[!e!int 5, !<tag:yaml.org,2002:str> 6]", '[5,"6"]',
    "%YAML 1.1\n---\n[yes, 010]\n", '["yes",10]',
    "%FUTURE reserved\n--- x\n", '"x"',
    "a: !!binary |\n  aGVs\n  bG8=\n", '{"a":"aGVsbG8="}',
  })
  refuse_all({
    "a: !Ref x\n", "unknown tag !Ref", 1, 4, "a: !!set {x}\n", "the tag !!set is not supported", 1, 4,
    "a: !e!x 1\n", "the tag handle !e! is not declared", 1, 4, "a: !!int x\n", '!!int on "x", which is not an int', 1, 4,
    "a: !!map [1]\n", "!!map on a sequence", 1, 4, "a: !!seq\n", "!!seq on an empty value", 1, 4,
    "a: !!binary 'a%b'\n", "!!binary needs base64 text", 1, 4, "%YAML 2.0\n---\na\n", "YAML 2.0 is not supported", 1, 1,
    "%YAML 1.2\n%YAML 1.2\n---\n", "a second %YAML directive", 2, 1,
    "%YAML 1.2\na: 1\n", "directives must be followed by '---'", 2, 1,
  })
end)

test("documents and streams", function()
  eq({ yaml.decode(""), yaml.decode("# only a comment\n") }, { json.null, json.null }, "an empty stream, comments only")
  local docs = yaml.decode_all("--- a\n--- |\n  b\n...\n%YAML 1.2\n---\n- c\n---\n")
  truthy(json.is_array(docs), "decode_all gives an array")
  eq(json.encode(docs), '["a","b\\n",["c"],null]', "the documents")
  eq(#yaml.decode_all(""), 0, "no documents")
  eq(json.encode(yaml.decode_all("a: 1\n...\n...\nb: 2\n")), '[{"a":1},{"b":2}]', "bare documents ended by '...'")
  local p = yaml.decode("\239\187\191a: 1\r\nb: [1,\r\n  2]\r\nc: |\r\n  x\r\n  y\r\n")
  eq(json.encode(p, { sort_keys = true }), '{"a":1,"b":[1,2],"c":"x\\ny\\n"}', "a BOM and CRLF line breaks")
  refuse_all({
    "--- a\n--- b\n", "a second document in the stream", 2, 1,
    "- a\nb: c\n", "unexpected text after the document's top value", 2, 1,
    "--- a: 1\n", "a block mapping cannot start on the '---' line", 1, 6,
  })
end)

test("indentation, tabs, bad text: refused with where", function()
  refuse_all({
    "a:\n\tb: 1\n", "a tab cannot indent a block", 2, 1, "a:\n  \tb: 1\n", "a tab cannot indent a block", 2, 3,
    "a:\n  b: 1\n c: 2\n", "bad indentation", 3, 2,
    "a: b\n- c\n", "a sequence entry '- ' where a mapping key was expected", 2, 1,
    "- a\n- b: - c\n", "a block sequence cannot start here", 2, 6, "a: 1\nb: \255\n", "invalid UTF-8 (byte 0xFF)", 2, 4,
    "a: \192\128\n", "invalid UTF-8", 1, 4, "a: \237\160\128\n", "invalid UTF-8", 1, 4,
    "é: b\1\n", "control character U+0001", 1, 5, "a: \194\128\n", "control character U+0080", 1, 4,
    "a: 1\r\nb: @\r\n", "'@' cannot start", 2, 4,
  })
  check_all({ "a:\t1\nb:\t[1,\t2]\nc:\n-\tx\n", '{"a":1,"b":[1,2],"c":["x"]}' })
  local ok, err = pcall(yaml.decode, "a: 1\r\nb: @")
  eq({ ok, err.position }, { false, 10 }, "the byte counts the CR of each line break")
  ok, err = pcall(yaml.decode, "\239\187\191x: @")
  eq(err.position, 7, "and the BOM")
end)

test("options and arguments", function()
  for _, c in ipairs({
    { "decode", 1, nil, "bad argument #1 to 'decode' (string expected, got number)" },
    { "decode_all", "", 5, "bad argument #2 to 'decode_all' (table expected, got number)" },
    { "decode", "", { maxdepth = 1 }, "unknown option 'maxdepth' (known: 'max_aliases', 'max_depth')" },
    { "decode", "", { max_depth = 0 }, "option 'max_depth' must be a positive integer, got 0" },
    { "decode", "", { max_aliases = 1.5 }, "option 'max_aliases' must be a non-negative integer, got 1.5" },
  }) do
    local err = h.fails("argument", function() yaml[c[1]](c[2], c[3]) end)
    truthy(tostring(err):find(c[4], 1, true), tostring(err))
  end
  eq(yaml.decode("a: &x 1\nb: *x", { max_aliases = 1 }).b, 1, "one alias node allowed")
  local _, err = pcall(yaml.decode, "a: &x 1\nb: *x", { max_aliases = 0 })
  truthy(tostring(err):find("aliases expand to more than 0 nodes", 1, true), tostring(err))
end)

test("hostile input: depth, alias bombs, size", function()
  local function refused(text, piece, opts)
    local t0, ok, err = os.clock(), pcall(yaml.decode, text, opts)
    truthy(not ok and tostring(err):find(piece, 1, true) and os.clock() - t0 < 1, piece .. ", at once: " .. tostring(err))
  end
  local nest = {}
  for i = 1, 1001 do nest[i] = string.rep(" ", i - 1) .. "k:" end
  refused(string.rep("[", 1001) .. string.rep("]", 1001), "nesting too deep (more than 1000 levels")
  refused(string.rep("- ", 1001) .. "x", "nesting too deep (more than 1000 levels")
  refused(table.concat(nest, "\n") .. " v", "nesting too deep (more than 1000 levels")
  eq(#yaml.decode(string.rep("[", 1000) .. string.rep("]", 1000)), 1, "1000 levels are fine")
  eq(#yaml.decode(string.rep("[", 5000) .. string.rep("]", 5000), { max_depth = 5000 }), 1, "a raised max_depth")
  refused(string.rep("[", 200000) .. string.rep("]", 200000), "nesting too deep for Lua's stack", { max_depth = 300000 })
  local bomb = { "a: &a [x, x, x, x, x, x, x, x, x, x]" }
  for i = 2, 12 do bomb[i] = string.format("%s: &%s [%s]", string.char(96 + i), string.char(96 + i), string.rep("*" .. string.char(95 + i), 10, ", ")) end
  refused(table.concat(bomb, "\n"), "aliases expand to more than 10000 nodes (max_aliases)")
  -- Blank lines after a deep nest are read once, not once per level that ends there.
  local t0 = os.clock()
  yaml.decode(table.concat(nest, "\n", 1, 1000) .. " v" .. string.rep("\n   # c\n", 300000) .. "x: 1")
  yaml.decode("a: " .. string.rep("x", 5000000) .. "\nb: '" .. string.rep("y ", 1000000) .. "'\n")
  truthy(os.clock() - t0 < 3, "long lines and many blank lines take linear time: " .. (os.clock() - t0) .. " s")
end)

-- A 5 MB OpenAPI document as PyYAML writes them (block style, quoted where needed, folded).
-- Its speed is scripts/bench's business (a test's clock is CI's load); this bound only says
-- the decoder is not quadratic (~1.1 s of CPU on a quiet machine; a quadratic one takes minutes).
test("a 5 MB OpenAPI document decodes, in linear time", function()
  local PATH = "  /v1/r%d/{id}:\n    get:\n      operationId: getR%d\n      summary: Get a resource by its id, with a summary long enough\n"
    .. "        to be folded onto the next line\n      description: |\n        Multi-line description.\n        With `code` and: colons.\n\n"
    .. "        New paragraph.\n      parameters:\n      - name: id\n        in: path\n        required: true\n"
    .. "        schema: {type: integer, format: int64, minimum: 1}\n      responses:\n        200:\n          description: OK\n          content:\n"
    .. "            application/json:\n              schema: {$ref: '#/components/schemas/R%d'}\n        '404': {description: Not found}\n"
    .. "      tags: [resources, group%d]\n      deprecated: %s\n      x-rate: 1.5\n"
  local lines = { "openapi: 3.0.3\ninfo: {title: Big, version: '1.0'}\npaths:\n" }
  for i = 1, 7400 do lines[i + 1] = string.format(PATH, i, i, i, i % 17, i % 13 == 0) end
  local text = table.concat(lines)
  local t0 = os.clock()
  local op = yaml.decode(text).paths["/v1/r7400/{id}"].get
  local took = os.clock() - t0
  print(string.format("%.1f MB in %.2f s", #text / 1e6, took))
  eq({ #text > 5e6, op.operationId, op.responses["200"].content["application/json"].schema["$ref"], op.deprecated, op.tags[2] },
    { true, "getR7400", "#/components/schemas/R7400", false, "group5" }, "5 MB, and its last operation")
  truthy(h.sanitizer or took < 20, "decoded in " .. took .. " s of CPU: not linear")
end)

h.done()
