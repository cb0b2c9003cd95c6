-- `lunet api` from the shell against the FastAPI test server (Tests/servers/openapi_server.py): the
-- operations listed, a call from HTTPie's items with the one-shot options, a request that
-- breaks the document refused before sending, and --check finding the server's planted faults
-- (a 500 at a parameter's maximum, a response that breaks its schema, a forbidden body
-- accepted) each once, shrunk, with a curl line, the same with the same seed.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local pipe, pid, port = h.start_venv_server("openapi_server.py")
local SPEC = "http://127.0.0.1:" .. port .. "/openapi.json"
h.cleanup(after_all, function() h.stop_server(pipe, pid); h.remove_temps() end)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function api(args)
  local err = h.tmpname()
  local code, out = h.run("{ " .. q(LUNET) .. " api " .. args .. " 2>" .. q(err) .. "; }")
  return code, out, h.read_file(err) or ""
end

test("lunet api SPEC lists the operations; OPERATION --help tells one", function()
  local code, out = api(q(SPEC))
  eq(code, 0, out)
  truthy(out:find("getItem%s+GET%s+/items/{item_id}") and out:find("createItem%s+POST%s+/items"), out)
  -- Issue 47, item 8: the summaries line up in a column of their own, after padded paths.
  local columns = {}
  for line in out:gmatch("[^\n]+") do
    local at = line:find("%S+%s+%u+%s+/%S*%s%s+%S")
    local summary_at = line:match("^%S+%s+%u+%s+/%S*%s%s+()%S")
    if at and summary_at then columns[summary_at] = true end
  end
  local n = 0
  for _ in pairs(columns) do n = n + 1 end
  truthy(n <= 1, "every summary starts in one column:\n" .. out)
  -- Issue 47, item 8: `item_id=1` where a parameter was meant: the hint says `item_id==1`.
  local hint_code, _, hint_err = api(q(SPEC) .. " getItem item_id=1 --offline")
  eq(hint_code, 2, hint_err)
  truthy(hint_err:find("'item_id' is a path parameter, given as item_id==1", 1, true), hint_err)
  code, out = api(q(SPEC) .. " createItem --help")
  truthy(code == 0 and out:find("body (application/json, required)", 1, true), out)
  -- Issue 47, item 3: --ids, the ids alone in the document's order (what completions read).
  local ids_code, ids = api(q(SPEC) .. " --ids")
  eq(ids_code, 0, ids)
  local from_listing = {}
  for line in select(2, api(q(SPEC))):gmatch("[^\n]+") do from_listing[#from_listing + 1] = line:match("^(%S+)") end
  eq(ids, table.concat(from_listing, "\n") .. "\n", "one id a line, in the listing's order")
end)

test("a call from items: name==value parameters, field=value and field:=json body fields, -v", function()
  local code, out, err = api(q(SPEC) .. " getItem item_id==1 X-Request-Id:cli-1 -v")
  eq(code, 0, err)
  truthy(out:find("GET /items/1 HTTP/1.1", 1, true) and out:find('"name":"first"', 1, true), out)
  -- Issue 47, item 8: a header parameter goes out spelled as typed, not as the document's x-request-id.
  truthy(out:find("\nX-Request-Id: cli-1\n", 1, true), "the header as typed:\n" .. out)
  truthy(out:lower():find("x-request-id: cli-1", 1, true), "a header parameter from a Name:value item:\n" .. out)
  code, out, err = api(q(SPEC) .. " createItem name=cli price:=4 tags:='[\"b\"]' --print=b")
  eq(code, 0, err)
  truthy(out:find('"name":"cli"', 1, true) and out:find('"price":4', 1, true), out)
end)

test("a request that breaks the document: exit 2, the place named, nothing sent", function()
  local code, out, err = api(q(SPEC) .. " createItem name=x price:=-1 --check-status")
  eq(code, 2, out)
  truthy(err:find("/body/price", 1, true), err)
  code, out, err = api(q(SPEC) .. " getItem")
  truthy(code == 2 and err:find("item_id", 1, true), err)
  code, out, err = api(q(SPEC) .. " getItm")
  truthy(code == 2 and err:find("did you mean 'getItem'", 1, true), err)
  code, out = api(q(SPEC) .. " createItem name=x price:=-1 --no-validate --check-status")
  eq(code, 4, "unchecked, the server's 422 (--check-status): " .. out)
end)

test("a response that breaks its schema: printed, then exit 1", function()
  local code, out, err = api(q(SPEC) .. " badShape n==3")
  eq(code, 1, out .. err)
  truthy(out:find('"odd"', 1, true) and err:find("/n", 1, true), out .. err)
end)

test("--check finds each planted fault once, shrunk, with a curl line; the same seed, the same run", function()
  local code, out = api(q(SPEC) .. " --check --seed 7 --max-examples 30")
  eq(code, 1, out)
  truthy(out:find("crashAtMaximum: server error", 1, true), "the 500 at the maximum:\n" .. out)
  truthy(out:find("badShape: response breaks its schema", 1, true), "the response breaking its schema:\n" .. out)
  truthy(out:find("lenient: forbidden request accepted", 1, true), "the forbidden body accepted:\n" .. out)
  local failures = select(2, out:gsub("\n✗ ", "")) + (out:find("^✗ ") and 1 or 0)
  eq(failures, 3, "nothing else fails:\n" .. out)
  truthy(out:find('arguments: {"n":100}', 1, true), "shrunk to the one argument:\n" .. out)
  truthy(out:find("again: curl ", 1, true), "a curl line to send it again:\n" .. out)
  local _, again = api(q(SPEC) .. " --check --seed 7 --max-examples 30")
  eq(again, out, "the same seed, the same requests and report")
  code, out = api(q(SPEC) .. " --check --seed 7 --operation listItems")
  eq(code, 0, "one operation, no failure:\n" .. out)
end)

test("api:check{} from a test file: the same report as a table", function()
  local report = http.openapi(SPEC):check{ seed = 7, max_examples = 30, operation = "crashAtMaximum" }
  eq(#report.failures, 1, "one failure")
  eq(report.failures[1].kind, "server error")
  eq(report.failures[1].args.n, 100, "at the maximum")
end)

h.done()
