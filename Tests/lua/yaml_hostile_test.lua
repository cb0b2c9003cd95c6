-- yaml.decode on a hostile document (an OpenAPI document fetched from a server is YAML), beyond
-- yaml_test's depth, alias-bomb and 5 MB cases: 100,000 levels of every kind of nesting, long
-- scalars and lines without an end in linear time and bounded memory, many anchors, merge-key
-- chains, foreign and huge tags, error messages that quote the document kept short, numbers at
-- the edges, BOMs, invalid UTF-8 and CR-only line ends: a decode error naming line and column,
-- never a crash.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local yaml = require "lunet.yaml"

-- Decoding `text` fails with a decode error whose message has `piece`, at line and column (when
-- given), within `bound` seconds; the error.
local function refused(text, piece, line, column, opts, bound)
  local t0 = os.clock()
  local ok, err = pcall(yaml.decode, text, opts)
  local took = os.clock() - t0
  local shown = tostring(err):sub(1, 300)
  truthy(not ok and type(err) == "table" and err.kind == "decode", "a decode error: " .. shown)
  truthy(err.message:find(piece, 1, true), piece .. ": " .. shown)
  if line then eq({ err.line, err.column }, { line, column }, "where: " .. shown) end
  truthy(took < (bound or 2), string.format("at once: %.2f s for %s", took, piece))
  return err
end

test("100,000 levels of flow, block and mixed nesting: a decode error with its place, no crash", function()
  local N, BIG = 100000, { max_depth = 10000000 }
  for _, c in ipairs({
    { string.rep("[", N) .. string.rep("]", N), 1, 1001 },
    { string.rep("{a: ", N) .. "1" .. string.rep("}", N), 1, 4001 },
    { string.rep("- ", N) .. "x", 1, 2001 },
    { string.rep("? ", N) .. "x", 1, 2001 },
    { "a:\n  " .. string.rep("[{b: ", N), 2, 2499 },
  }) do
    refused(c[1], "nesting too deep (more than 1000 levels", c[2], c[3])
  end
  -- max_depth raised past what Lua's stack holds: the stack's end, reported the same way.
  for _, text in ipairs({ string.rep("[", N), string.rep("{a: ", N) .. "1", string.rep("- ", N) .. "x",
    string.rep("? ", N) .. "x", string.rep("- ", N // 2) .. string.rep("[{a: ", N) }) do
    refused(text, "nesting too deep for Lua's stack", nil, nil, BIG, 5)
  end
end)

-- Seconds to decode mk(n) for n and 4n; the second is at most ~4 times the first (linear), with
-- room for a busy machine.
local function linear(name, mk, n)
  local took = {}
  for i, size in ipairs({ n, 4 * n }) do
    local text = mk(size)
    collectgarbage()
    local t0 = os.clock()
    local ok, err = pcall(yaml.decode, text)
    took[i] = os.clock() - t0
    truthy(ok or (type(err) == "table" and err.kind == "decode"), name .. ": " .. tostring(err):sub(1, 200))
  end
  truthy(took[2] < 8 * took[1] + 0.5, string.format("%s: linear, %.2f s then %.2f s for 4 times the text", name, took[1], took[2]))
end

test("long scalars, lines without an end, long flow collections: linear time", function()
  local M = 1000000
  linear("a plain scalar", function(n) return "a: " .. string.rep("x", n) end, 2 * M)
  linear("a line without an end, no key", function(n) return string.rep("x", n) end, 2 * M)
  linear("a double-quoted scalar never closed", function(n) return 'a: "' .. string.rep("x", n) end, 2 * M)
  linear("escapes", function(n) return 'a: "' .. string.rep("\\t", n // 2) .. '"' end, M // 2)
  linear("'' in a single-quoted scalar", function(n) return "a: '" .. string.rep("''", n // 2) .. "'" end, M // 2)
  linear("a quoted scalar over many lines", function(n) return 'a: "' .. string.rep("x\n ", n // 3) .. '"' end, M // 2)
  linear("a plain scalar over many lines", function(n) return "a: " .. string.rep("x\n ", n // 3) end, M // 2)
  linear("a literal block scalar", function(n) return "a: |\n" .. string.rep("  xxxxxxxxx\n", n // 12) end, M)
  linear("a comment", function(n) return "# " .. string.rep("x", n) .. "\na: 1" end, 2 * M)
  linear("a flow sequence never closed", function(n) return "[" .. string.rep("x,", n // 2) end, M // 2)
  linear("CR-only line ends", function(n) return string.rep("- x\r", n // 4) end, M // 2)
  linear("!!binary", function(n) return "a: !!binary " .. string.rep("QUJD", n // 4) end, 2 * M)
end)

test("a 50 MB scalar decodes within bounded memory", function()
  local script = h.script([[
    local yaml = require "lunet.yaml"
    local v = yaml.decode("a: " .. string.rep("x", 50000000) .. "\nb: 1\n")
    print(#v.a, v.b)
  ]])
  local code, out = h.run("/usr/bin/time -f 'maxrss=%M' " .. h.lunet() .. " " .. script)
  eq(code, 0, out)
  truthy(out:find("50000000\t1", 1, true), out)
  local kb = tonumber(out:match("maxrss=(%d+)"))
  truthy(kb and kb < 600 * 1024, "memory: " .. tostring(kb) .. " KB for a 50 MB scalar")
end)

test("many anchors, merge-key chains and lists, foreign tags: bounded", function()
  local list = {}
  for i = 1, 100000 do list[i] = "- &a" .. i .. " x" end
  local t0 = os.clock()
  eq(#yaml.decode(table.concat(list, "\n")), 100000, "100,000 anchors")
  truthy(os.clock() - t0 < 5, "100,000 anchors in linear time")
  local chain = { "m0: &m0 {k0: 1}" }
  for i = 1, 3000 do chain[i + 1] = string.format("m%d: &m%d {<<: *m%d, k%d: 1}", i, i, i - 1, i) end
  refused(table.concat(chain, "\n"), "aliases expand to more than 10000 nodes (max_aliases)")
  refused("a: &a {x: 1}\nb: {<<: [" .. string.rep("*a", 100000, ", ") .. "]}", "aliases expand to more than 10000 nodes")
  refused("a: &a {<<: *a}", "is inside the node it names", 1, 12)
  refused("a: !!python/object/apply:os.system [ls]", "the tag !!python/object/apply:os.system is not supported", 1, 4)
  refused("a: !!python/object:os.system ls", "the tag !!python/object:os.system is not supported", 1, 4)
  refused("a: !Ref x", "unknown tag !Ref", 1, 4)
  eq(#yaml.decode("a: !!binary " .. string.rep("QUJD", 2000000)).a, 8000000, "a large !!binary kept as its text")
  refused("a: !!binary QUJ", "!!binary needs base64 text", 1, 4)
end)

test("an error quoting the document (a key, an alias, a tag, a value) quotes at most a few hundred bytes", function()
  local long = string.rep("n", 1000000)
  for _, c in ipairs({
    { long .. ": 1\n" .. long .. ": 2", "duplicate key", 2, 1 },
    { "a: *" .. long, "names no anchor before it", 1, 4 },
    { "a: !" .. long .. " 1", "unknown tag !nnn", 1, 4 },
    { "a: !" .. long .. "!x 1", "is not declared by a %TAG directive", 1, 4 },
    { "a: !<" .. long .. "> 1", "unknown tag !<nnn", 1, 4 },
    { "a: !!" .. long .. " 1", "is not supported", 1, 4 },
    { "a: !!int " .. long, "which is not an int", 1, 4 },
  }) do
    local err = refused(c[1], c[2], c[3], c[4])
    truthy(#err.message < 500, string.format("%s: a message of %d bytes", c[2], #err.message))
    truthy(err.message:find("at line " .. c[3], 1, true), "still says where: " .. err.message)
  end
end)

test("numbers at the edges, keys that are not strings, duplicates", function()
  local v = yaml.decode("a: [.inf, -.inf, .nan, 1e400, 0x7fffffffffffffff, 0x8000000000000000, -9223372036854775808, "
    .. string.rep("9", 400) .. ", 0x" .. string.rep("f", 100000) .. "]")
  eq({ v.a[1], v.a[2], v.a[3] ~= v.a[3], v.a[4] }, { math.huge, -math.huge, true, math.huge })
  eq({ math.type(v.a[5]), math.type(v.a[6]), math.type(v.a[7]), math.type(v.a[8]), math.type(v.a[9]) },
    { "integer", "float", "integer", "float", "float" }, "beyond 64 bits: a float")
  refused("[a]: 1", "a mapping or a sequence as a key is not supported", 1, 1)
  refused("{[a]: 1}", "a mapping or a sequence as a key is not supported", 1, 2)
  refused("200: a\n'200': b", 'duplicate key "200" (first on line 1)', 2, 1)
  eq(yaml.decode("1: a\n1.0: b\n~: c\ntrue: d"), { ["1"] = "a", ["1.0"] = "b", ["~"] = "c", ["true"] = "d" }, "keys as written")
end)

test("BOMs, invalid UTF-8, CR-only line ends: refused or read, with the place", function()
  eq(yaml.decode("\239\187\191a: 1"), { a = 1 }, "a leading BOM is skipped")
  refused("\255\254a\0:\0 \0001\0", "invalid UTF-8 (byte 0xFF)", 1, 1)
  refused("a: \224\128\128", "invalid UTF-8", 1, 4)
  refused("a: \226\130", "invalid UTF-8", 1, 4)
  refused(string.rep("a: x\n", 1000000) .. "b: \255", "invalid UTF-8 (byte 0xFF)", 1000001, 4)
  refused("a: " .. string.rep("é", 1000000) .. "\192", "invalid UTF-8", 1, 1000004)
  eq(yaml.decode("a: 1\rb: [x,\r y]\r"), { a = 1, b = json.array({ "x", "y" }) }, "CR-only line ends")
  local err = refused("a: 1\rb: 2\rc: @", "'@' cannot start a plain scalar", 3, 4)
  eq(err.position, 14, "the byte in the text given")
  refused("a: \0", "control character U+0000", 1, 4)
  refused("a: \27]0;title\7", "control character U+001B", 1, 4)
end)

h.done()
