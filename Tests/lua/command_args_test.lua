-- lunet.cli.argv, the one reader of every command's words (the one-shot line, test, load and its
-- subcommands, api, grpc): each form of option, the end of options, lists, clusters, an unknown
-- option named with the nearest, or handed to the command, and each problem's message.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local argv = require "lunet.cli.argv"

local SPEC = {
  takes = { ["--out"] = "out", ["-o"] = "out", ["--tag"] = "tag" },
  flags = { ["--verbose"] = "verbose", ["-v"] = "verbose", ["-b"] = "body" },
  lists = { tag = true },
  what = { ["--out"] = "FILE", ["-o"] = "FILE" },
  help = "x --help",
}

-- The table read, with the words in c.words; or the problem's message.
local function read(words, extra)
  local spec = {}
  for k, v in pairs(SPEC) do spec[k] = v end
  for k, v in pairs(extra or {}) do spec[k] = v end
  local ok, c = pcall(argv.read, words, spec, function(m) error({ usage = m }, 0) end,
    function(c, w) c.words = c.words or {}; c.words[#c.words + 1] = w end)
  if not ok then return nil, type(c) == "table" and c.usage or error(c, 0) end
  return c
end

test("values given apart, after '=', and in a short option", function()
  eq(read({ "--out", "a" }).out, "a")
  eq(read({ "--out=a=b" }).out, "a=b", "only the first '=' splits")
  eq(read({ "-o", "a" }).out, "a")
  eq(read({ "--out=" }).out, "", "an empty value is a value")
end)

test("flags, lists, positional words in order, '-' is a word", function()
  local c = read({ "w1", "--verbose", "--tag", "x", "-", "--tag=y", "w2" })
  eq(c.verbose, true)
  eq(c.tag, { "x", "y" }, "a list option given twice")
  eq(c.words, { "w1", "-", "w2" })
  eq(read({}).tag, {}, "a list is there when never given")
end)

test("'--' ends the options, or hands the rest on whole", function()
  eq(read({ "--", "--verbose", "-o" }).words, { "--verbose", "-o" }, "words after it, options or not")
  local c = read({ "a", "--", "--verbose", "b" }, { rest = "rest" })
  eq(c.rest, { "--verbose", "b" })
  eq(c.words, { "a" })
  eq(read({ "a" }, { rest = "rest" }).rest, {}, "an empty rest when there is no '--'")
end)

test("short options cluster where the command says so", function()
  local c = read({ "-vb", "-ofile" }, { clusters = true })
  eq({ c.verbose, c.body, c.out }, { true, true, "file" })
  eq(read({ "-vo", "f" }, { clusters = true }).out, "f", "the last of a cluster takes the next word")
  local _, err = read({ "-vx" }, { clusters = true })
  truthy(err and err:find("unknown option '-x'", 1, true), err)
  _, err = read({ "-vb" })
  truthy(err and err:find("unknown option '-vb'", 1, true), "no clusters: one unknown word: " .. tostring(err))
end)

test("problems: a missing value, a flag with a value, an unknown option with the nearest", function()
  local _, err = read({ "--out" })
  eq(err, "option '--out' needs a value (FILE)")
  _, err = read({ "--tag" })
  eq(err, "option '--tag' needs a value")
  _, err = read({ "--verbose=yes" })
  eq(err, "option '--verbose' takes no value")
  _, err = read({ "--verbos" })
  eq(err, "unknown option '--verbos'; did you mean '--verbose'? (x --help)")
  _, err = read({ "--zzzzzzzz" })
  eq(err, "unknown option '--zzzzzzzz' (x --help)")
end)

test("an option the command does not read can be handed on, with its value", function()
  local passed = {}
  local c = read({ "--print", "hb", "word", "-x", "--out", "o" }, { unknown = function(_, a, take_value)
    passed[#passed + 1] = a
    if a == "--print" then passed[#passed + 1] = take_value() end
    return true
  end })
  eq(passed, { "--print", "hb", "-x" })
  eq({ c.out, c.words }, { "o", { "word" } })
end)

h.done()
