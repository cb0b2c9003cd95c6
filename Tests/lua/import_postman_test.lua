-- `lunet import postman` (docs/import.md): collections in format v2.1 and v2.0 written for these
-- tests (Tests/data/postman: every body mode, every auth kind lunet imports, folders, variables,
-- disabled entries, scripts), with an environment, as `lunet test` files that pass against
-- httpbin and the auth server; credentials only as environment variables; scripts counted, kept
-- as comments, translated where certain; bad input named with its place.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local json = require "lunet.json"
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")
local HERE = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local server, pid, auth_port = h.start_server("auth_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local UPLOAD = h.temp_file("invoice contents\n", ".txt")

local function collection(name)
  local text = h.read_file(HERE .. "../data/postman/" .. name):gsub("UPLOAD_FILE", UPLOAD)
  return h.temp_file(text, ".json")
end

local ENVIRONMENT = json.encode({ name = "local", values = {
  { key = "baseUrl", value = HTTPBIN, enabled = true },
  { key = "authBase", value = "http://127.0.0.1:" .. auth_port, enabled = true },
  { key = "token", value = "env-token-value", type = "secret", enabled = true },
  { key = "partnerKey", value = "partner-key-value", type = "default", enabled = true },
  { key = "digestPassword", value = "passwd", type = "secret", enabled = true },
  { key = "itemId", value = "7", enabled = false },
} })
-- What the credentials are, given to the test run (the import never writes them).
local RUN_ENV = "LUNET_PM_TOKEN=env-token-value LUNET_PM_DIGESTPASSWORD=passwd LUNET_PM_BASIC_PASSWORD=passwd " ..
  "LUNET_PM_OAUTH2_CLIENT_SECRET=pm-app-secret LUNET_PM_AWS_SECRET_KEY=lunet/test+secret "

test("a v2.1 collection with its environment: a test file that passes, credentials never written, scripts counted", function()
  local out_file = h.tmpname() .. "_test.lua"
  local code, out = h.run(q(LUNET) .. " import postman " .. q(collection("shop.postman_collection.json")) ..
    " --environment " .. q(h.temp_file(ENVIRONMENT, ".json")) .. " -o " .. q(out_file))
  eq(code, 0, out)
  local text = h.read_file(out_file)
  for _, secret in ipairs({ "env-token-value", "pm-app-secret", "lunet/test+secret" }) do
    truthy(not text:find(secret, 1, true), secret .. " is never written:\n" .. text)
  end
  -- (httpbin's basic and digest URLs hold the password "passwd" themselves: the auth does not)
  truthy(text:find('basic = { "user", need("LUNET_PM_BASIC_PASSWORD") }', 1, true), "the folder's basic password from the environment")
  truthy(text:find("Postman collection v2.1", 1, true), "the format named")
  truthy(text:find("-- Scripts: 13 JavaScript scripts, kept as comments beside their requests; 15 assertions translated to expect().", 1, true), text)
  truthy(text:find('describe("Catalogue"', 1, true) and text:find('describe("Orders"', 1, true), "folders as groups")
  truthy(text:find('expect(r.json.args.q).to.equal("lua")', 1, true) and text:find("expect(r.json.json.items[1].sku)", 1, true), "JSON paths, 0 made 1")
  truthy(text:find("-- | pm.expect(pm.response.json().json).to.eql({items: []});", 1, true), "what is not certain stays a comment")
  truthy(not text:find("X-Debug", 1, true) and not text:find("debug=1", 1, true) and not text:find("gift", 1, true), "disabled entries left out")
  truthy(text:find('["itemId"] = "42"', 1, true), "a disabled environment value does not replace the collection's")
  local c2, tap = h.run(RUN_ENV .. q(LUNET) .. " test " .. q(out_file))
  eq(c2, 0, tap .. "\n" .. text)
  truthy(tap:find("12 passed, 0 failed", 1, true), tap)
  -- Without the credentials, a test that needs one fails naming it.
  local c3, tap2 = h.run(q(LUNET) .. " test " .. q(out_file))
  truthy(c3 ~= 0 and tap2:find("LUNET_PM_TOKEN is not set", 1, true), tap2)
end)

test("a v2.0 collection: a URL as a string, headers as one string, auth as a map", function()
  local out_file = h.tmpname() .. "_test.lua"
  local env = h.temp_file(json.encode({ values = { { key = "baseUrl", value = HTTPBIN } } }), ".json")
  local code, out = h.run(q(LUNET) .. " import postman " .. q(collection("legacy.postman_collection.json")) .. " -e " .. q(env) .. " -o " .. q(out_file))
  eq(code, 0, out)
  local text = h.read_file(out_file)
  truthy(not text:find("legacy-token-value", 1, true) and text:find('need("LUNET_PM_BEARER_TOKEN")', 1, true), text)
  truthy(text:find('url = v("{{baseUrl}}/anything/users/17/orders/{{order}}?x=:userId")', 1, true), "path variables in the path only: " .. text)
  local c2, tap = h.run("LUNET_PM_BEARER_TOKEN=t " .. q(LUNET) .. " test " .. q(out_file))
  eq(c2, 0, tap .. "\n" .. text)
  truthy(tap:find("3 passed, 0 failed", 1, true), tap)
end)

test("the shapes early v2 files have: _postman_schema, .../v2/ schemas, variables by id, null values, a password in the URL", function()
  local postman = require "lunet.import.postman"
  local render = require "lunet.import.postman_render"
  for _, info in ipairs({ '{"name": "a", "_postman_schema": "https://schema.getpostman.com/#2.0.0"}',
                          '{"name": "b", "schema": "http://schema.getpostman.com/collection/v2/collection.json"}' }) do
    local model = postman.read('{"info": ' .. info .. ', "variable": [{"id": "v1", "value": "x"}, {"id": "v5", "value": null}], "item": [' ..
      '{"name": "r", "request": "http://shamasis:pa55@echo.example/status/400?q=1#{{search}}"}]}')
    eq(model.format, "v2.0")
    eq({ model.variables[1].value, model.variables[2].value }, { "x", "" }, "a null value is empty")
    local text = render.test(model, "f.json")
    truthy(not text:find("pa55", 1, true) and text:find('auth = { basic = { "shamasis", need("LUNET_PM_URL_PASSWORD") } }', 1, true)
      and text:find('url = v("http://echo.example/status/400?q=1#{{search}}")', 1, true), text)
  end
end)

test("scripts: the certain forms translated, the sandbox's old tests[] forms too, the rest left to the comment", function()
  local t = require("lunet.import.postman_scripts").translate([[
pm.test("Status code is 200", function () { pm.response.to.have.status(200); });
var data = pm.response.json();
pm.expect(data.items[0].name).to.eql('a');
pm.expect(pm.response.json().n).to.equal(-1.5);
pm.expect(data.ok).to.eql(null);
pm.expect(data).to.eql({a: 1});
pm.expect(data.x).to.eql(someVariable);
pm.expect(pm.response.code).to.be.oneOf([200, 201]);
tests["response code is 401"] = responseCode.code === 401;
tests["has it"] = responseBody.has("authenticated");
pm.response.to.have.header("X-Id");]])
  eq(t, { "expect(r).to.have_status(200)", 'expect(r.json.items[1].name).to.equal("a")', "expect(r.json.n).to.equal(-1.5)",
          "expect(r.json.ok).to.equal(json.null)", "expect(r).to.have_status(401)", 'expect(r.body).to.contain("authenticated")',
          'expect(r).to.have_header("X-Id")' })
end)

test("bad input: not JSON, not a collection (a JSON pointer), an unknown format: exit 2, nothing written", function()
  local out_file = h.tmpname()
  os.remove(out_file)
  local function refused(text, want, env)
    local code, out = h.run(q(LUNET) .. " import postman " .. q(h.temp_file(text, ".json")) ..
      (env and (" --environment " .. q(h.temp_file(env, ".json"))) or "") .. " -o " .. q(out_file))
    eq(code, 2, out)
    truthy(out:find(want, 1, true), want .. " in: " .. out)
    eq(io.open(out_file), nil, "nothing written")
  end
  local v21 = '"info": {"name": "x", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"}'
  refused('{"info": {\n "name": }', "the collection is not JSON: unexpected character '}' (expected a value) at line 2, column 10")
  refused('{"info": {"name": "x", "schema": "https://schema.getpostman.com/json/collection/v1.0.0/collection.json"}, "item": []}',
    "not collection format v2.0 or v2.1")
  refused('{' .. v21 .. ', "item": [{"name": "a", "request": {"method": "GET", "url": "http://h/", "header": [{"value": "x"}]}}]}',
    "a header without a key at /item/0/request/header/0")
  refused('{' .. v21 .. ', "item": [{"name": "f", "item": [{"name": "a"}]}]}', "an item that is neither a folder nor a request at /item/0/item/0/request")
  refused('{' .. v21 .. ', "item": []}', "no values array at /values (the environment)", '{"name": "e"}')
end)

h.done()
