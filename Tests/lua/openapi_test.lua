-- http.openapi against real servers: a FastAPI application serving the OpenAPI 3.1 document it
-- generates (Tests/servers/openapi_server.py: every parameter kind, two security schemes, planted
-- faults), a YAML 3.0 document whose $refs reach other files, and a Swagger 2.0 one, both
-- served by httpbin's /anything, which echoes what it was sent. Load-time errors name their
-- place; requests that break the document are refused before anything is sent; responses are
-- checked; the prompt completes operations and parameters.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local HERE = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./")
local FIXTURES = HERE .. "../Fixtures/openapi/"
local BIN = h.env("LUNET_HTTPBIN")

local pipe, pid, port = h.start_venv_server("openapi_server.py")
local SHOP = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(pipe, pid); h.remove_temps() end)
local TOKEN, KEY = "t0ken-for-tests", "k3y-for-tests"

local function shop(opts) return http.openapi(SHOP .. "/openapi.json", opts) end

test("FastAPI's 3.1 document: operations by operationId, the base URL from where it came", function()
  local api = shop()
  local ids = {}
  for _, op in ipairs(api:operations()) do ids[#ids + 1] = op.id end
  table.sort(ids)
  eq(ids, { "badShape", "crashAtMaximum", "createItem", "deleteItem", "getItem", "lenient", "listItems", "whoAmI", "withKey" }, "every operation")
  eq(api:session().base_url, SHOP .. "/", "no servers: the document's origin")
  fails("argument", function() return api.getItm end, "a misspelled operation")
end)

test("parameters of every kind: path, query, header, cookie; a JSON body", function()
  local api = shop()
  local r = api.getItem{ item_id = 1, verbose = true, ["x-request-id"] = "abc", session = "s1" }
  eq(r.status, 200)
  eq(r.json.name, "first", "the path parameter")
  eq(r.headers["x-request-id"], "abc", "the header parameter")
  eq(r.headers["x-session-seen"], "s1", "the cookie parameter")
  local list = api.listItems{ limit = 1, tag = "b" }.json
  eq(#list, 1, "query parameters")
  eq(list[1].name, "second", "filtered by the enum query parameter")
  local created = api.createItem{ body = { name = "made", price = 3.5, tags = json.array({ "a", "c" }) } }
  eq(created.status, 201)
  eq(created.json.name, "made", "the body as JSON")
end)

test("a call that breaks the document is kind schema with its path and rule, and nothing is sent", function()
  local api = shop()
  local before = #api.listItems{ limit = 100 }.json
  local e = fails("schema", function() api.createItem{ body = { name = "x", price = -1 } } end)
  eq(e.path, "/body/price", "where: " .. tostring(e))
  truthy(e.rule == "exclusiveMinimum", "the rule: " .. tostring(e.rule))
  e = fails("schema", function() api.createItem{ body = { price = 2 } } end)
  truthy(e.path:find("^/body") and e.rule == "required", "a required property: " .. tostring(e))
  e = fails("schema", function() api.getItem{ item_id = "one" } end)
  eq(e.path, "/parameters/item_id", "a wrong type in a parameter")
  e = fails("schema", function() api.getItem{} end)
  eq(e.rule, "required", "a required parameter missing")
  fails("argument", function() api.getItem{ item_id = 1, nope = 2 } end, "a name that is no parameter")
  eq(#api.listItems{ limit = 100 }.json, before, "nothing was created")
  -- validate = false sends it, and the server says no
  eq(shop({ validate = false }).createItem{ body = { name = "x", price = -1 } }.status, 422, "unchecked: the server's 422")
end)

test("responses are checked against the schema of their status; undeclared statuses are reported", function()
  local api = shop()
  eq(api.badShape{ n = 2 }.json.n, 2, "a response that matches")
  local e = fails("schema", function() api.badShape{ n = 3 } end)
  truthy(e.response and e.response.status == 200, "the response is in the error")
  eq(e.path, "/n", "where in the body")
  eq(shop({ validate = false }).badShape{ n = 3 }.json.n, "odd", "validate = false: no check")
  local r = api.deleteItem{ item_id = 999 }
  eq(r.status, 404)
  truthy(r.undeclared, "a status the document does not declare is marked")
  truthy(api:notes()[1]:find("404", 1, true), "and noted: " .. tostring(api:notes()[1]))
end)

test("security schemes from the document take credentials by scheme name", function()
  eq(shop().whoAmI{}.status, 401, "no credentials: the server refuses")
  local api = shop({ security = { HTTPBearer = TOKEN, APIKeyHeader = KEY } })
  eq(api.whoAmI{}.json.user, "tester", "http bearer")
  eq(api.withKey{}.json.key, "ok", "apiKey in a header")
  eq(shop({ auth = { bearer = TOKEN } }).whoAmI{}.status, 200, "or the session's own auth option")
end)

test("help: what an operation takes and answers", function()
  local text = shop().createItem:help_text()
  truthy(text:find("createItem: POST /items", 1, true) and text:find("price: number (> 0", 1, true) and text:find("201", 1, true), text)
end)

test("the prompt completes operations after api. and parameters inside {", function()
  local repl = require "lunet.repl"
  _G.test_api = shop()
  eq(repl.complete("test_api.getI"), { "test_api.getItem" }, "an operation")
  eq(repl.complete("test_api.getItem{ item_id = 1, ve"), { "verbose" }, "a parameter")
  eq(repl.complete("test_api.createItem({ b"), { "body" }, "the body")
  _G.test_api = nil
end)

-- The YAML 3.0 document, its server's port from httpbin's address.
local function pets(opts)
  opts = opts or {}
  opts.server_variables = { port = BIN:match(":(%d+)$") }
  return http.openapi(FIXTURES .. "petstore/openapi.yaml", opts)
end

test("YAML 3.0 with $refs across files: servers' variables, styles, discriminator, security", function()
  local api = pets({ security = { bearer = "b-token", apiKeyQuery = "q-key", basicAuth = { "u", "p" } } })
  eq(api:session().base_url, BIN .. "/anything/v1/", "the server with its variables filled")
  local echo = api.listPets{ limit = 5, tags = json.array({ "x", "y" }), ids = json.array({ 1, 2 }), filter = { kind = "cat" } }.json
  eq(echo.args.limit, "5", "a parameter from parameters.yaml")
  eq(echo.args.tags, { "x", "y" }, "form, exploded: repeated")
  eq(echo.args.ids, "1,2", "form, not exploded: joined")
  eq(echo.args["filter[kind]"], "cat", "deepObject")
  eq(echo.headers.Authorization, "Bearer b-token", "the document's default security: bearer")
  echo = api.getPet{ petId = 7, ["X-Trace"] = "t1" }.json
  truthy(echo.url:find("/pets/7?", 1, true) and echo.args.api_key == "q-key", "apiKey in the query: " .. echo.url)
  eq(echo.headers["X-Trace"], "t1", "a header parameter")
  echo = api["DELETE /pets/{petId}"]{ petId = 7 }.json
  truthy(echo.headers.Authorization:find("^Basic "), "an operation without an id, by method and path; basic auth")
  echo = api.addPet{ body = { kind = "dog", name = "Rex", good = true } }.json
  eq(echo.json, { kind = "dog", name = "Rex", good = true }, "the body")
  local e = fails("schema", function() api.addPet{ body = { kind = "cat", name = "Tom", lives = "nine" } } end)
  truthy(e.path:find("^/body"), "oneOf under a discriminator: " .. tostring(e))
  fails("schema", function() api.getPet{ petId = 0 } end, "a path parameter under its minimum")
end)

test("OpenAPI 3.1: the discriminator picks the branch, as in 3.0", function()
  local doc = h.temp_file(string.format([[
openapi: 3.1.0
info: { title: pets, version: "1" }
servers: [ { url: "%s/anything" } ]
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf: [ { $ref: "#/components/schemas/Cat" }, { $ref: "#/components/schemas/Dog" } ]
              discriminator: { propertyName: kind }
      responses: { "200": { description: echo } }
components:
  schemas:
    Cat: { type: object, required: [kind], properties: { kind: { const: Cat }, lives: { type: integer } } }
    Dog: { type: object, required: [kind], properties: { kind: { const: Dog } } }
]], BIN))
  local api = http.openapi(doc)
  eq(api.addPet{ body = { kind = "Cat", lives = 9 } }.status, 200, "a cat")
  local e = fails("schema", function() api.addPet{ body = { kind = "Cow" } } end)
  eq(e.rule, "discriminator", "a value the discriminator maps to nothing: " .. tostring(e))
  e = fails("schema", function() api.addPet{ body = { kind = "Cat", lives = "nine" } } end)
  eq(e.path, "/body/lives", "the cat's own schema says where, not oneOf's 'none matched': " .. tostring(e))
end)

test("oauth2 client credentials from the document's flow; server = by description", function()
  local server, spid, sport = h.start_server("auth_server.py")
  local base = "http://127.0.0.1:" .. sport
  local doc = h.temp_file(string.format([[
openapi: 3.0.3
info: { title: tokens, version: "1" }
servers:
  - { url: "http://127.0.0.1:1/nowhere", description: first }
  - { url: "%s", description: the auth server }
security: [ { oauth: [] } ]
paths:
  /oauth/resource:
    get: { operationId: resource, responses: { "200": { description: ok } } }
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows: { clientCredentials: { tokenUrl: "%s/oauth/token", scopes: {} } }
]], base, base))
  local ok, err = pcall(function()
    local api = http.openapi(doc, { server = "the auth server", security = { oauth = { client_id = "oa", client_secret = "oa-secret" } } })
    eq(api:session().base_url, base .. "/", "the server chosen by its description")
    eq(api.resource{}.status, 200, "a token from the flow's tokenUrl, then the resource")
    eq(http.openapi(doc, { server = 2 }):session().base_url, base .. "/", "or by its index")
    fails("argument", function() http.openapi(doc, { server = 3 }) end, "a server that is not there")
  end)
  h.stop_server(server, spid)
  if not ok then error(err, 0) end
end)

test("formats, nullable and readOnly in a 3.0 document", function()
  local doc = h.temp_file(string.format([[
openapi: 3.0.3
info: { title: formats, version: "1" }
servers: [ { url: "%s/anything" } ]
paths:
  /things:
    post:
      operationId: addThing
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                id: { type: integer, readOnly: true }
                when: { type: string, format: date-time, nullable: true }
                key: { type: string, format: uuid }
                n: { type: integer, format: int32 }
      responses: { "200": { description: echo } }
]], BIN))
  local api = http.openapi(doc)
  eq(api.addThing{ body = { when = "2026-01-02T03:04:05Z", key = "123e4567-e89b-12d3-a456-426614174000", n = 5 } }.status, 200, "as the formats say")
  eq(api.addThing{ body = { when = json.null } }.status, 200, "nullable: null")
  eq(fails("schema", function() api.addThing{ body = { when = "yesterday" } } end).path, "/body/when", "date-time")
  eq(fails("schema", function() api.addThing{ body = { key = "not-a-uuid" } } end).path, "/body/key", "uuid")
  eq(fails("schema", function() api.addThing{ body = { n = 2 ^ 40 // 1 } } end).path, "/body/n", "int32")
  eq(fails("schema", function() api.addThing{ body = { id = 1 } } end).path, "/body/id", "readOnly: not in a request")
end)

test("Swagger 2.0: host and basePath, body and formData parameters, collectionFormat", function()
  local text = assert(h.read_file(FIXTURES .. "swagger2/swagger.json")):gsub("HTTPBIN_HOST", (BIN:gsub("^http://", "")))
  local path = h.temp_file(text)
  local api = http.openapi(path, { security = { key = "k2" } })
  eq(api:session().base_url, BIN .. "/anything/v2/", "schemes, host, basePath")
  local echo = api.createOrder{ body = { qty = 2, note = "n" } }.json
  eq(echo.json, { qty = 2, note = "n" }, "the body parameter")
  eq(echo.headers["X-Api-Key"], "k2", "apiKey in a header")
  fails("schema", function() api.createOrder{ body = { qty = 0 } } end, "the body's schema")
  echo = api["GET /orders"]{ status = json.array({ "a", "b" }), tag = json.array({ "x", "y" }), page = 2 }.json
  eq(echo.args.status, "a,b", "csv")
  eq(echo.args.tag, { "x", "y" }, "multi")
  fails("schema", function() api["GET /orders"]{ page = 0 } end, "a 2.0 parameter is its own schema")
  echo = api.sendForm{ body = { a = "x", n = 3 } }.json
  eq(echo.form, { a = "x", n = "3" }, "formData as a form")
end)

test("documents that cannot be used are refused at load time, naming the place", function()
  local function refused(file, needle)
    local e = fails("openapi", function() http.openapi(FIXTURES .. "broken/" .. file) end, file)
    truthy(tostring(e):find(needle, 1, true), file .. ": " .. tostring(e))
    return e
  end
  refused("not-openapi.json", "not an OpenAPI document")
  local e = refused("bad-ref.yaml", "#/components/parameters/Missing names nothing")
  truthy(e.where:find("#/paths/~1x/get/parameters/0", 1, true), "where: " .. tostring(e.where))
  refused("cycle.yaml", "comes back to itself")
  refused("twice.yaml", "operationId 'same' is used twice")
  fails("openapi", function() http.openapi(h.temp_file("openapi: 3.0.0\npaths: [")) end, "YAML that does not parse")
end)

test("docs/openapi.md's first example runs as written, against the test server", function()
  local doc = assert(h.read_file(HERE .. "../../docs/openapi.md"))
  local block = assert(doc:match("```lua\n(.-)```"), "a lua block")
  block = block:gsub("127%.0%.0%.1:8000", "127.0.0.1:" .. port)
  local printed = {}
  local env = setmetatable({ print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    printed[#printed + 1] = table.concat(parts, "\t")
  end, help = function() end }, { __index = _G })
  assert(load(block, "=docs/openapi.md", "t", env))()
  local all = table.concat(printed, "\n")
  -- each `--> x` comment in the block is what its line prints
  for expected in block:gmatch("%-%->%s*([^\n]+)") do
    local words = {}
    for w in expected:gmatch("%S+") do words[#words + 1] = w end
    truthy(all:find(table.concat(words, "\t"), 1, true), "printed: " .. expected .. "\n" .. all)
  end
end)

h.done()
