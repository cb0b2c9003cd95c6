-- lunet.schema against the JSON Schema Test Suite (Tests/Fixtures/JSON-Schema-Test-Suite, from ../shared/testdata
-- beside the repository; its SOURCE names the commit): every file of tests/draft4 and
-- tests/draft2020-12, their optional/ files and the optional/format/ files of the formats
-- lunet checks (date, date-time, email, hostname, ipv4, ipv6, uri, uuid; `unknown` too).
-- $refs to http://localhost:1234/... read the suite's remotes/ directory through opts.load.
-- Prints, per dialect, the cases passed of those run.
--
-- Left out, and why (the list is checked: a case named on it that passes, or one the suite no
-- longer has, fails this test, so the list stays true):
--
-- | file | cases | why |
-- |---|---|---|
-- | draft4/definitions.json, draft4/ref.json, draft2020-12/defs.json, draft2020-12/ref.json | groups that `$ref` the draft's metaschema (http(s)://json-schema.org/...) | lunet ships no metaschemas and fetches nothing; the suite has none under remotes/ |
-- | draft4/optional/zeroTerminatedFloats.json | all | 1.0 is an integer in every dialect (draft 6's rule, which OpenAPI 3.0 users rely on), not draft 4's "no fraction written" |
-- | draft2020-12/optional/format/ecmascript-regex.json | all | format "regex" is not checked |
-- | draft2020-12/optional/cross-draft.json | all | a $ref into a draft 2019-09 document is read as the referring dialect |
-- | optional/format/ files of other formats | all | duration, time, iri, idn-*, json-pointer, uri-reference, uri-template, regex: not checked |
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local schema = require "lunet.schema"

local HERE = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local SUITE = HERE .. "../Fixtures/JSON-Schema-Test-Suite"   -- a copy of ../shared/testdata's (SOURCE says which)

local FORMATS = { ["date-time"] = true, date = true, email = true, hostname = true, ipv4 = true,
  ipv6 = true, uri = true, uuid = true, unknown = true }

local METASCHEMA = "uses the draft's metaschema, which lunet does not ship"

-- file -> true (all of it) or { [group description] = true | { [test description] = true } }
local LEFT_OUT = {
  ["draft4/definitions.json"] = { ["validate definition against metaschema"] = METASCHEMA },
  ["draft4/ref.json"] = { ["remote ref, containing refs itself"] = METASCHEMA },
  ["draft2020-12/defs.json"] = { ["validate definition against metaschema"] = METASCHEMA },
  ["draft2020-12/ref.json"] = { ["remote ref, containing refs itself"] = METASCHEMA },
  ["draft4/optional/zeroTerminatedFloats.json"] = "1.0 is an integer in every dialect",
  ["draft2020-12/optional/cross-draft.json"] = "one dialect per compilation",
  ["draft2020-12/optional/format/ecmascript-regex.json"] = "format \"regex\" is not checked",
}

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

if not read(SUITE .. "/SOURCE") then
  error("the JSON Schema Test Suite is not at " .. SUITE .. " (Tests/Fixtures holds a copy of the suite: " ..
    "draft4, draft2020-12 and remotes)", 0)
end

--- The suite's remotes: http://localhost:1234/PATH is remotes/PATH.
local function load(u)
  local path = u:match("^http://localhost:1234/(.*)$")
  if not path then return nil, "not one of the suite's remotes" end
  local text = read(SUITE .. "/remotes/" .. path)
  if not text then return nil, "no file remotes/" .. path end
  return json.decode(text)
end

local function files(dir)
  local _, out = h.run("ls " .. SUITE .. "/tests/" .. dir .. "/*.json")
  local list = {}
  for path in out:gmatch("[^\n]+") do list[#list + 1] = path:match("tests/(.*)$") end
  return list
end

--- How the left-out list treats a case: nil (run it), or the reason it is left out.
local function left_out(file, group, test_name)
  local entry = LEFT_OUT[file]
  if type(entry) ~= "table" then return entry end
  local g = entry[group]
  if type(g) == "table" then return g[test_name] end
  return g
end

--- Runs one file: passed, total (of the cases not left out), failures, left-out cases seen
--- and those that passed anyway.
local function run_file(file, dialect)
  local opts = { load = load, dialect = dialect, formats = file:find("/format/") and true or nil }
  local passed, total, failures, seen, stale = 0, 0, {}, {}, {}
  for _, group in ipairs(json.decode(read(SUITE .. "/tests/" .. file))) do
    local ok, v = pcall(schema.compile, group.schema, opts)
    for _, t in ipairs(group.tests) do
      local good = false
      local got
      if ok then
        local fine, res = pcall(v.validate, v, t.data)
        good, got = fine and res == t.valid, fine and tostring(res) or tostring(res)
      else
        got = "compile error: " .. tostring(v)
      end
      local name = group.description .. " / " .. t.description
      if left_out(file, group.description, t.description) then
        seen[#seen + 1] = name
        -- a case named on the list must still fail (a whole file left out may pass in part)
        if good and type(LEFT_OUT[file]) == "table" then stale[#stale + 1] = name end
      else
        total = total + 1
        if good then passed = passed + 1
        else failures[#failures + 1] = name .. ": expected " .. tostring(t.valid) .. ", got " .. got end
      end
    end
  end
  return passed, total, failures, seen, stale
end

local results = {}
for _, dialect in ipairs({ "draft4", "draft2020-12" }) do
  local list = files(dialect)
  for _, f in ipairs(files(dialect .. "/optional")) do list[#list + 1] = f end
  for _, f in ipairs(files(dialect .. "/optional/format")) do
    if FORMATS[f:match("([^/]*)%.json$")] or LEFT_OUT[f] then list[#list + 1] = f end
  end
  local sum = { passed = 0, total = 0, left_out = 0 }
  results[dialect] = sum
  for _, file in ipairs(list) do
    test(file, function()
      local passed, total, failures, seen, stale = run_file(file, dialect == "draft4" and "draft4" or nil)
      sum.passed, sum.total, sum.left_out = sum.passed + passed, sum.total + total, sum.left_out + #seen
      if LEFT_OUT[file] and #seen == 0 then error("the left-out list names cases " .. file .. " does not have") end
      if #stale > 0 then error("left out but passing (take them off the list):\n  " .. table.concat(stale, "\n  ")) end
      if #failures > 0 then error(#failures .. " of " .. total .. " cases failed:\n  " .. table.concat(failures, "\n  ")) end
    end)
  end
end

test("summary", function()
  for _, dialect in ipairs({ "draft4", "draft2020-12" }) do
    local r = results[dialect]
    print(string.format("%s: %d / %d cases passed (%d left out, listed at the top of this file)",
      dialect, r.passed, r.total, r.left_out))
  end
end)

h.done()
