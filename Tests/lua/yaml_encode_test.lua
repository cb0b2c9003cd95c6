-- yaml.encode and yaml.encode_all (lua/lunet/yaml/emit.lua, docs/yaml.md "Writing"): what they
-- write reads back, through lunet.yaml and through PyYAML (the tests' venv), as the value given;
-- no string is ever plain; ordered mappings keep their order; what has no YAML is refused.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local yaml = require "lunet.yaml"
local differ = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "yaml_differ.lua")

-- Values that must read back as themselves, hostile strings among them.
local VALUES = {
  { name = "x", count = 3, ratio = 0.5, big = 1e300, on = true, off = false, none = json.null },
  json.array({ 1, "two", json.array({}), {}, { a = json.array({ { b = "c" } }) } }),
  { ["no"] = "yes", ["0755"] = "0755", ["null"] = "~", ["true"] = "false", [""] = "", ["a: b"] = "- c", ["#x"] = "&y *z" },
  { lines = "one\n  two\n\nthree\n", kept = "a\n\n\n", stripped = "a\nb", leading = "  indented\nx\n", crlf = "a\r\nb\n" },
  { controls = "bell\7 esc\27 nul\0 del\127", c1 = "\194\133 \194\155", separators = "\226\128\168 \226\128\169", bom = "\239\187\191x" },
  { floats = json.array({ 1.0, -0.0, 3.25e-10, 1e16 }), ints = json.array({ 0, -1, math.maxinteger, math.mininteger }) },
  { nested = { deeper = { deepest = json.array({ json.array({ 1 }), json.array({}) }) } } },
}

test("every value reads back as itself through lunet.yaml", function()
  for i, v in ipairs(VALUES) do
    local text = yaml.encode(v)
    local d = differ(yaml.decode(text), v)
    truthy(d == nil, string.format("value %d: %s\n%s", i, tostring(d), text))
  end
  local docs = yaml.decode_all(yaml.encode_all(VALUES))
  eq(#docs, #VALUES, "a stream of them")
  eq(yaml.decode(yaml.encode("just text")), "just text", "a scalar document")
  eq(yaml.decode(yaml.encode(json.array({}))), json.array({}), "an empty sequence")
end)

test("strings are never plain; ordered mappings keep their order; plain ones are sorted", function()
  eq(yaml.encode({ a = "no" }), '---\na: "no"\n')
  eq(yaml.encode(yaml.map("kind", "Job", "apiVersion", "batch/v1", "skipped", nil, "n", 1, "count", 2)),
    '---\nkind: "Job"\napiVersion: "batch/v1"\n"n": 1\ncount: 2\n', "YAML 1.1 reads a plain n as false: quoted")
  eq(yaml.encode({ b = 1, a = 2 }), "---\na: 2\nb: 1\n")
  eq(yaml.encode({ list = json.array({ yaml.map("name", "x", "image", "y") }) }), '---\nlist:\n  - name: "x"\n    image: "y"\n')
end)

test("what has no YAML is refused with a message that names it", function()
  local cyclic = {}
  cyclic.self = cyclic
  h.fails("argument", function() yaml.encode(cyclic) end, "a cycle")
  local e = h.fails("argument", function() yaml.encode({ f = print }) end)
  truthy(e.message:find("no scalar for a function", 1, true), e.message)
  e = h.fails("argument", function() yaml.encode({ [1] = "a", x = "b" }) end)
  truthy(e.message:find("key must be a string", 1, true), e.message)
  h.fails("argument", function() yaml.encode_all("text") end)
  local deep, cur = {}, nil
  cur = deep
  for _ = 1, 300000 do cur.a = {}; cur = cur.a end
  e = h.fails("argument", function() yaml.encode(deep) end, "nesting past Lua's stack")
  truthy(e.message:find("nested too deeply to write (more than 1000 levels", 1, true), e.message)
  -- 1000 levels are written, and read back; 1001 are refused
  local at_limit = {}
  cur = at_limit
  for _ = 1, 999 do cur.a = {}; cur = cur.a end
  cur.a = 1
  eq(yaml.decode(yaml.encode(at_limit)), at_limit, "1000 levels")
  cur.a = { 1 }
  h.fails("argument", function() yaml.encode(at_limit) end, "1001 levels")
end)

local PYTHON = os.getenv("LUNET_VENV") and os.getenv("LUNET_VENV") .. "/bin/python3"
local NO_PYYAML = not PYTHON and "LUNET_VENV is not set (scripts/test makes the venv)"
  or (h.run(PYTHON .. " -c 'import yaml'") ~= 0 and "the venv has no PyYAML (scripts/venv installs it)") or nil

test("PyYAML reads what lunet writes as the same values", { skip = NO_PYYAML }, function()
  local file = h.temp_file(yaml.encode_all(VALUES))
  local code, out = h.run(PYTHON .. [[ -c 'import sys, yaml, json
docs = list(yaml.safe_load_all(open(sys.argv[1], encoding="utf-8")))
print(json.dumps(docs, ensure_ascii=False))' ]] .. file)
  eq(code, 0, out)
  local back = json.decode(out)
  for i, v in ipairs(VALUES) do
    local d = differ(back[i], json.decode(json.encode(v)))
    truthy(d == nil, string.format("value %d: %s", i, tostring(d)))
  end
end)

h.done()
