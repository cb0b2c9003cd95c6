-- The test runner (lunet.testing) and the HAR recorder (lunet.har). The runner runs as a child
-- process on the fixture files in Tests/Fixtures/testrunner, whose outcomes are known; the
-- assertions, JSONPath and HAR are also checked in this process.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails

local BIN = h.env("LUNET_HTTPBIN")
local TLS = h.env("LUNET_NGINX_TLS")
local CA = h.env("LUNET_TEST_CA")

local function q(s) return "'" .. string.gsub(s, "'", "'\\''") .. "'" end

local function absolute(p)
  if string.sub(p, 1, 1) == "/" then return p end
  return (os.getenv("PWD") or ".") .. "/" .. p
end

local LUNET = absolute(h.lunet())
-- The repository's root: the runner reports paths relative to where it runs.
local ROOT = absolute((arg[0]:gsub("[^/]*$", "")) .. "../..")
local FIX = "Tests/Fixtures/testrunner"
-- `lunet test` as the runner's main() sees it (run.lua stands in for the subcommand).
local RUNNER = LUNET .. " " .. FIX .. "/run.lua"

local function tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end
local TMP = tmpdir()

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

--- Runs the runner with `args` (a shell word string) in the repository root: exit status,
--- standard output, standard error.
local function run(args)
  local err = TMP .. "/stderr"
  local code, out = h.run("{ cd " .. q(ROOT) .. " && " .. RUNNER .. " " .. args .. " 2>" .. q(err) .. "; }")
  return code, out, read(err)
end

local function lines(s)
  local out = {}
  for line in string.gmatch(s, "(.-)\n") do out[#out + 1] = line end
  return out
end

local function results(tap)
  local out = {}
  for _, line in ipairs(lines(tap)) do
    if string.find(line, "^ok ") or string.find(line, "^not ok ") then out[#out + 1] = line end
  end
  return out
end

local function has(text, piece, what)
  truthy(string.find(text, piece, 1, true), (what or "output") .. " has " .. string.format("%q", piece) .. "\n" .. text)
end

local F = FIX .. "/"
local EXPECTED_RESULTS = {
  "not ok 1 - " .. F .. "fail_test.lua > a table difference",
  "not ok 2 - " .. F .. "fail_test.lua > a string difference",
  "not ok 3 - " .. F .. "fail_test.lua > a plain error",
  "not ok 4 - " .. F .. "fail_test.lua > setup > never reaches its body",
  "ok 5 - " .. F .. "fail_test.lua > passes after the failures",
  "ok 6 - " .. F .. "httpbin_test.lua > httpbin > a JSON echo",
  "not ok 7 - " .. F .. "httpbin_test.lua > httpbin > a status that is not expected",
  "ok 8 - " .. F .. "nested/describe_test.lua > api > first",
  "ok 9 - " .. F .. "nested/describe_test.lua > api > users > second",
  "ok 10 - " .. F .. "nested/describe_test.lua > order",
  "ok 11 - " .. F .. "only_test.lua > chosen",
  "ok 12 - " .. F .. "only_test.lua > also chosen",
  "ok 13 - " .. F .. "pass_test.lua > equal compares tables deeply",
  "ok 14 - " .. F .. "pass_test.lua > match, truthy, falsy, nil, within, contain",
  "ok 15 - " .. F .. "pass_test.lua > fail_with checks the error's kind",
  "ok 16 - " .. F .. "pass_test.lua > have_json_path on a table and a string",
  "ok 17 - " .. F .. "skip_test.lua > skip() # SKIP",
  "ok 18 - " .. F .. "skip_test.lua > test.skip() # SKIP",
  "ok 19 - " .. F .. "skip_test.lua > an option with a reason # SKIP needs a server",
  "ok 20 - " .. F .. "skip_test.lua > runs",
  "not ok 21 - " .. F .. "timeout_test.lua > hangs",
  "ok 22 - " .. F .. "timeout_test.lua > runs after the hang",
  "not ok 23 - " .. F .. "toplevel_error_test.lua",
  "ok 24 - " .. F .. "with space/space_test.lua > found",
}
local SUMMARY = "14 passed, 7 failed, 3 skipped"

-- One run over every fixture, with both reports; several tests read it.
local JUNIT, JSON = TMP .. "/report.xml", TMP .. "/report.json"
local full_code, full_out, full_err = run(FIX .. " --junit " .. q(JUNIT) .. " --json " .. q(JSON))

test("the fixtures: TAP lines in file order, the summary line, exit status 1", function()
  eq(full_code, 1, "exit status (stderr: " .. full_err .. ")")
  local all = lines(full_out)
  eq(all[1], "TAP version 13", "first line")
  eq(results(full_out), EXPECTED_RESULTS, "result lines")
  eq(all[#all - 1], "1..24", "the plan")
  eq(all[#all], SUMMARY, "the summary is the last line")
  has(full_out, "# hello from a test\nok 13 - ", "print in a test: a TAP comment before its result")
  has(full_out, "# " .. F .. "only_test.lua: 2 tests not run because only() is used in the file")
end)

test("failure diagnostics: the source line, expected and actual, a table diff", function()
  has(full_out, "  message: 'expected values to be equal'")
  has(full_out, "  at: '" .. F .. "fail_test.lua:4'")
  has(full_out, [[  source: 'expect(got).to.equal({ name = "lunet", tags = { "http", "tcp" }, version = { major = 1, minor = 1 }, extra = true })']])
  has(full_out, "  diff: |-\n    extra: missing (expected true)\n    tags[2]: expected \"tcp\", got \"lua\"\n    version.major: expected 1, got 0\n")
  has(full_out, "  expected: |-\n    {\n      extra = true,\n")
  has(full_out, "strings differ at byte 15 (line 2, column 6)")
  has(full_out, "  at: '" .. F .. "fail_test.lua:13'\n  source: 'return t.field'")
  has(full_out, "  message: 'in before_each: " .. F .. "fail_test.lua:17: setup broke'")
  has(full_out, "  message: '" .. F .. "toplevel_error_test.lua:3: broken at load time'")
  has(full_out, "  message: 'timed out after 0.2 s'\n  type: 'timeout'")
end)

test("a failing assertion on a response shows its request and status", function()
  has(full_out, "  message: 'expected status 200, got 418'")
  has(full_out, "  request: 'GET " .. BIN .. "/status/418'\n  response_status: 418\n")
  has(full_out, "  response_body: |-\n")
end)

-- A small XML reader: raises on a document that is not well-formed; returns the root element
-- { name, attrs, children }.
local function parse_xml(s)
  local pos = 1
  local root
  local stack = {}
  local function check_text(t)
    for ref in string.gmatch(t, "&([^;]*);") do
      if not (ref == "amp" or ref == "lt" or ref == "gt" or ref == "quot" or ref == "apos" or ref:match("^#%d+$") or ref:match("^#x%x+$")) then
        error("bad entity &" .. ref .. ";")
      end
    end
    if string.find(string.gsub(t, "&[^;]*;", ""), "[&<]") then error("a bare & or < in " .. t) end
  end
  while true do
    local lt = string.find(s, "<", pos, true)
    local text = string.sub(s, pos, (lt or #s + 1) - 1)
    check_text(text)
    if #stack == 0 and not string.find(text, "^%s*$") then error("text outside the root: " .. text) end
    if not lt then break end
    if string.sub(s, lt, lt + 1) == "<?" then
      pos = assert(string.find(s, "?>", lt, true), "unclosed <?") + 2
    elseif string.sub(s, lt, lt + 3) == "<!--" then
      pos = assert(string.find(s, "-->", lt, true), "unclosed comment") + 3
    elseif string.sub(s, lt, lt + 1) == "</" then
      local name, after = string.match(s, "^</([%w_:%-%.]+)%s*>()", lt)
      if not name then error("bad closing tag at " .. lt) end
      local top = table.remove(stack)
      if not top or top.name ~= name then error("</" .. name .. "> closes " .. (top and top.name or "nothing")) end
      pos = after
    else
      local name, p = string.match(s, "^<([%w_:%-%.]+)()", lt)
      if not name then error("bad tag at " .. lt) end
      local el = { name = name, attrs = {}, children = {} }
      while true do
        local k, v, after = string.match(s, '^%s+([%w_:%-%.]+)="([^"<]*)"()', p)
        if not k then break end
        check_text(v)
        if el.attrs[k] then error("attribute " .. k .. " twice") end
        el.attrs[k] = v
        p = after
      end
      local close, after = string.match(s, "^%s*(/?)>()", p)
      if not close then error("bad tag <" .. name .. " at " .. lt) end
      if #stack > 0 then table.insert(stack[#stack].children, el)
      elseif root then error("a second root element")
      else root = el end
      if close == "" then stack[#stack + 1] = el end
      pos = after
    end
  end
  if #stack > 0 then error("unclosed <" .. stack[#stack].name .. ">") end
  return assert(root, "no root element")
end

local function all_named(el, name, out)
  out = out or {}
  if el.name == name then out[#out + 1] = el end
  for _, c in ipairs(el.children) do all_named(c, name, out) end
  return out
end

test("the JUnit report: well-formed, counts, failures, valid against the schema", function()
  local xml = read(JUNIT)
  eq(string.sub(xml, 1, 38), '<?xml version="1.0" encoding="UTF-8"?>', "declaration")
  local root = parse_xml(xml)
  eq(root.name, "testsuites", "root element")
  eq({ root.attrs.tests, root.attrs.failures, root.attrs.skipped }, { "24", "7", "3" }, "run counts")
  local suites = all_named(root, "testsuite")
  eq(#suites, 9, "a testsuite per file")
  eq(suites[1].attrs.name, F .. "fail_test.lua", "suite name")
  eq({ suites[1].attrs.tests, suites[1].attrs.failures }, { "5", "4" }, "fail_test.lua counts")
  eq(#all_named(root, "testcase"), 24, "testcases")
  eq(#all_named(root, "failure"), 7, "failures")
  eq(#all_named(root, "skipped"), 3, "skipped")
  local case = suites[1].children[1]
  eq({ case.attrs.classname, case.attrs.name }, { F .. "fail_test.lua", "a table difference" }, "classname and name")
  truthy(case.attrs.time:match("^%d+%.%d%d%d$"), "time in seconds: " .. case.attrs.time)
  eq(case.children[1].attrs.message, "expected values to be equal", "failure message")
  has(xml, 'tags[2]: expected "tcp", got "lua"', "the failure's details")
  has(xml, 'name="setup &gt; never reaches its body"', "names are escaped")
  has(xml, "(local &apos;t&apos;)", "quotes in attributes are escaped")
  if h.run("command -v xmllint") == 0 then
    local code, out = h.run("xmllint --noout --schema " .. q(ROOT .. "/" .. FIX .. "/junit.xsd") .. " " .. q(JUNIT))
    eq(code, 0, "xmllint --schema junit.xsd: " .. out)
  else
    print("# xmllint is not installed (apt-get install libxml2-utils): schema not checked")
  end
end)

test("the JUnit report escapes what XML cannot hold", function()
  local path = TMP .. "/xml_test.lua"
  write(path, 'test("<&> \\"quotes\\" \\1 \\255 ]]>", function() error("bad \\0 bytes \\255 & <tags>") end)\n')
  local code = run(q(path) .. " --junit " .. q(TMP .. "/escape.xml"))
  eq(code, 1, "exit status")
  local xml = read(TMP .. "/escape.xml")
  local root = parse_xml(xml)
  eq(#all_named(root, "failure"), 1, "one failure")
  truthy(utf8.len(xml), "valid UTF-8")
  truthy(not string.find(xml, "[%z\1-\8\11\12\14-\31]"), "no control characters")
  if h.run("command -v xmllint") == 0 then
    local c, out = h.run("xmllint --noout --schema " .. q(ROOT .. "/" .. FIX .. "/junit.xsd") .. " " .. q(TMP .. "/escape.xml"))
    eq(c, 0, "xmllint: " .. out)
  end
end)

test("the JSON report: files, tests with name, status, duration, message", function()
  local r = json.decode(read(JSON))
  eq(r.summary.passed, 14, "passed")
  eq(r.summary.failed, 7, "failed")
  eq(r.summary.skipped, 3, "skipped")
  eq(#r.files, 9, "files")
  eq(r.files[1].path, F .. "fail_test.lua", "first file")
  local t = r.files[1].tests[1]
  eq({ t.name, t.status, t.message }, { "a table difference", "failed", "expected values to be equal" }, "a failed test")
  eq(math.type(t.duration) ~= nil, true, "duration is a number")
  eq(t.failure.at, F .. "fail_test.lua:4", "failure.at")
  truthy(t.failure.diff:find('tags[2]: expected "tcp", got "lua"', 1, true), "failure.diff")
  eq(r.files[8].error, F .. "toplevel_error_test.lua:3: broken at load time", "a file's top-level error")
  local skipped = r.files[6].tests[3]
  eq({ skipped.status, skipped.skip_reason }, { "skipped", "needs a server" }, "a skipped test")
  eq(r.files[5].tests[1].output, { "hello from a test" }, "printed lines")
end)

test("--jobs N runs files in child processes with the same output", function()
  local code, out = run(FIX .. " --jobs 4 --json " .. q(TMP .. "/jobs.json"))
  eq(code, 1, "exit status")
  eq(out, full_out, "TAP output, byte for byte")
  local a, b = json.decode(read(JSON)), json.decode(read(TMP .. "/jobs.json"))
  eq(b.summary.passed, a.summary.passed, "passed")
  eq(b.summary.failed, a.summary.failed, "failed")
  eq(#b.files, #a.files, "files")
  for i = 1, #a.files do
    eq(b.files[i].path, a.files[i].path, "file order")
    eq(#b.files[i].tests, #a.files[i].tests, "tests of " .. a.files[i].path)
  end
end)

test("one file, --filter, paths with spaces; all passing exits 0", function()
  local code, out = run(F .. "pass_test.lua")
  eq(code, 0, "exit status")
  eq(lines(out)[#lines(out)], "4 passed, 0 failed", "summary without skipped")
  code, out = run(F .. "pass_test.lua --filter 'fail_with'")
  eq(code, 0, "exit status with a filter")
  eq(results(out), { "ok 1 - " .. F .. "pass_test.lua > fail_with checks the error's kind" }, "the matching test only")
  code, out = run(q(F .. "with space/space_test.lua") .. " " .. F .. "nested --filter=users")
  eq(code, 0, "exit status")
  eq(results(out), { "ok 1 - " .. F .. "nested/describe_test.lua > api > users > second" }, "filtered over two paths")
  code, out = run(q(F .. "with space"))
  eq(results(out), { "ok 1 - " .. F .. "with space/space_test.lua > found" }, "a directory with a space")
end)

test("no tests: exit 1 and 'no tests found'", function()
  local empty = TMP .. "/empty"
  os.execute("mkdir -p " .. q(empty))
  local code, out, err = run(q(empty))
  eq(code, 1, "exit status")
  eq(lines(out)[#lines(out)], "0 passed, 0 failed", "summary")
  has(out .. err, "no tests found")
  code, out, err = run(F .. "pass_test.lua --filter nothing-matches-this")
  eq(code, 1, "a filter that matches nothing")
  has(err, "no tests found")
end)

test("bad arguments exit 2 with a message", function()
  local code, _, err = run("--bogus")
  eq(code, 2, "unknown option")
  has(err, "unknown option '--bogus'")
  code, _, err = run("--jobs 0")
  eq(code, 2, "--jobs 0")
  code, _, err = run(q(TMP .. "/does-not-exist"))
  eq(code, 2, "a missing path")
  has(err, "does-not-exist")
  code = run("--filter '[' " .. FIX)
  eq(code, 2, "a bad pattern")
  local out
  code, out = run("--help")
  eq(code, 0, "--help")
  has(out, "usage: lunet test")
end)

test("--timeout applies to every test; the run goes on", function()
  local path = TMP .. "/hang_test.lua"
  write(path, 'test("hangs", function() task.source().task:await() end)\n' ..
              'test("sleeps past it", function() task.sleep(5) end)\n' ..
              'test("next", function() end)\n')
  local started = os.time()
  local code, out = run(q(path) .. " --timeout 0.1")
  eq(code, 1, "exit status")
  eq(results(out), { "not ok 1 - " .. path .. " > hangs", "not ok 2 - " .. path .. " > sleeps past it", "ok 3 - " .. path .. " > next" }, "results")
  has(out, "timed out after 0.1 s")
  truthy(os.time() - started < 4, "the run did not wait for the sleeping test")
end)

test("main() returns the exit status and does not exit", function()
  local testing = require "lunet.testing"
  local report = TMP .. "/inproc.json"
  eq(testing.main({ ROOT .. "/" .. F .. "skip_test.lua", "--report-json", report }), 0, "passing file")
  local r = json.decode(read(report))
  eq({ r.summary.passed, r.summary.skipped }, { 1, 3 }, "counts")
  eq(testing.main({ "--bogus" }, { stderr = io.open("/dev/null", "w") }), 2, "usage error")
end)

-- Assertions, in this process -------------------------------------------------------------

local expect = require("lunet.testing").expect

local function failure(fn)
  local ok, f = pcall(fn)
  truthy(not ok, "the expectation should have failed")
  truthy(require("lunet.testing.expect").is_failure(f), "a Failure object: " .. tostring(f))
  return f
end

test("expect: messages, the caller's line, negation", function()
  local f = failure(function() expect({ a = { 1, 2 }, b = "x" }).to.equal({ a = { 1, 3 }, b = "x" }) end)
  eq(f.message, "expected values to be equal", "message")
  eq(f.diff, "a[2]: expected 3, got 2", "diff")
  truthy(f.at:match("testrunner_test%.lua:%d+$"), "at: " .. tostring(f.at))
  truthy(f.source:find("expect({ a = { 1, 2 }, b = \"x\" })", 1, true), "source: " .. tostring(f.source))
  f = failure(function() expect(1).never.to.equal(1) end)
  eq(f.message, "expected a value other than 1", "negated message")
  f = failure(function() expect(3, "retries").to.be_within(0, 2) end)
  eq(f.message, "retries: expected a number within [0, 2]", "a label")
  f = failure(function() expect(function() end).to.fail_with("timeout") end)
  eq(f.actual, "it returned normally", "fail_with on a function that returns")
  f = failure(function() expect(function() http.get("http://127.0.0.1:1/") end).to.fail_with("timeout") end)
  truthy(f.actual:find('kind "connect"', 1, true), "the kind it failed with: " .. f.actual)
  f = failure(function() expect("abc").to.match("^%d+$") end)
  eq(f.actual, '"abc"', "match shows the string")
  require("lunet.testing.expect").matchers.be_even = function(actual)
    return type(actual) == "number" and actual % 2 == 0, function()
      return { message = "expected an even number", negated = "expected an odd number", actual = actual }
    end
  end
  expect(4).to.be_even()
  f = failure(function() expect(3).to.be_even() end)
  eq({ f.message, f.actual }, { "expected an even number", "3" }, "a custom matcher")
  f = failure(function() expect(4, "n").never.to.be_even() end)
  eq(f.message, "n: expected an odd number", "a custom matcher, negated")
  require("lunet.testing.expect").matchers.be_even = nil
  local ok, err = pcall(function() return expect(1).to.eqaul(1) end)
  truthy(not ok and tostring(err):find("unknown matcher 'eqaul'", 1, true), "an unknown matcher: " .. tostring(err))
end)

test("expect: responses, headers and JSON paths", function()
  local r = http.get(BIN .. "/response-headers?X-Rep=a&X-Rep=b&Content-Type=application/json")
  expect(r).to.have_status(200).to.have_header("x-rep").to.have_header("X-REP", "b")
  expect(r).never.to.have_header("x-missing")
  local f = failure(function() expect(r).to.have_header("X-Rep", "c") end)
  eq(f.request, "GET " .. BIN .. "/response-headers?X-Rep=a&X-Rep=b&Content-Type=application/json", "the request")
  eq(f.response_status, 200, "the status")
  f = failure(function() expect(r).to.have_json_path("$.nope.deeper") end)
  truthy(f.actual:find("nothing matched; the path matched up to $", 1, true), f.actual)
  local e = fails("status", function() http.session{ accept_status = "2xx" }:get(BIN .. "/status/503") end)
  expect(e).to.have_status(503)
  f = failure(function() expect(e).to.have_status("2xx") end)
  eq(f.request, "GET " .. BIN .. "/status/503", "the request of an error's response")
end)

test("JSONPath subset", function()
  local jp = require "lunet.testing.jsonpath"
  local doc = json.decode([[{"store": {"book": [
    {"title": "A", "price": 8, "tags": ["x"], "isbn": "1"},
    {"title": "B", "price": 12, "available": true},
    {"title": "C", "price": 8.5, "available": false, "it's": "q"}
  ], "name": "s", "empty": null}}]])
  local function find(path) return (jp.find(doc, path)) end
  eq(find("$.store.name"), { "s" }, ".key")
  eq(find("$['store']['book'][0]['title']"), { "A" }, "['key'] and [0]")
  eq(find("$.store.book[-1].title"), { "C" }, "[-1]")
  eq(find("$.store.book[*].title"), { "A", "B", "C" }, "[*]")
  eq(find("$.store.book[?(@.price == 8)].title"), { "A" }, "== number")
  eq(find("$.store.book[?(@.price > 8)].title"), { "B", "C" }, "> number")
  eq(find("$.store.book[?(@.title != 'A')].title"), { "B", "C" }, "!= string")
  eq(find('$.store.book[?(@.available == true)].title'), { "B" }, "== true")
  eq(find("$.store.book[?(@.available)].title"), { "B", "C" }, "exists")
  eq(find("$.store.book[?(@.tags[0] == \"x\")].title"), { "A" }, "a nested @ path")
  eq(find("$..title"), { "A", "B", "C" }, "recursive descent")
  eq(find("$.store.book[2]['it\\'s']"), { "q" }, "an escaped quote")
  eq(find("$.store.empty"), { json.null }, "null")
  eq(find("$.store.book[5]"), {}, "out of range")
  eq(select(2, jp.find(doc, "$.store.book[1].price")), { "$['store']['book'][1]['price']" }, "normalized paths")
  for _, bad in ipairs({ "store", "$.", "$[", "$[?(@.a ~ 1)]", "$['a", "$[1" }) do
    local ok, err = pcall(jp.parse, bad)
    truthy(not ok and tostring(err):find("invalid JSONPath", 1, true), "a syntax error for " .. bad .. ": " .. tostring(err))
  end
end)

test("show: pretty values and diffs", function()
  local show = require "lunet.testing.show"
  eq(show.show({ 1, "two", { x = true } }), '{ 1, "two", { x = true } }', "one line")
  eq(show.show(0.1 + 0.2), "0.30000000000000004", "floats read back as themselves")
  eq(show.show("a\nb\255"), '"a\\nb\\xFF"', "escapes")
  local t = {}
  t.self = t
  eq(show.show(t), "{ self = <cycle> }", "cycles")
  truthy(#show.show(string.rep("x", 10000), { max = 300 }) < 400, "long strings are cut")
  eq(show.diff({ a = 1, list = { 1, 2 }, ["b c"] = 1 }, { a = 1, list = { 1 }, extra = 2, ["b c"] = "1" }),
    { '["b c"]: expected 1, got "1"', 'extra: not expected (got 2)', 'list[2]: missing (expected 2)' }, "diff lines")
  eq(show.clean("ok\0\255é"), "ok\\x00\\xFFé", "clean")
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. q(TMP)) end)
h.done()
