-- http.openapi against ../shared/HOSTILE.md's classes, second part: a path parameter's bytes
-- never change the path (dot segments, slashes, ?, #, CR LF), and a document read from one
-- host that names another as its server, or its token endpoint, does not get the session's
-- credentials (or the client secret) sent there.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")

local pipe, pid, port = h.start_server("echo_head_server.py")
local ECHO = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(pipe, pid) end)

local function doc(server, path, params)
  return { openapi = "3.0.3", info = { title = "t", version = "1" }, servers = { { url = server } },
           paths = { [path] = { get = { operationId = "x", parameters = params, responses = { default = { description = "any" } } } } } }
end
local function file_api(d, opts) return http.openapi(h.temp_file(json.encode(d), ".json"), opts) end
local ID = { { name = "id", ["in"] = "path", required = true, schema = { type = "string" } } }

test("a path parameter's bytes are percent-encoded: no dot segment, slash, query or fragment changes the path", function()
  local api = file_api(doc(ECHO .. "/api/v1", "/users/{id}/info", ID))
  local cases = {
    { "..", "/api/v1/users/%2E%2E/info" }, { ".", "/api/v1/users/%2E/info" },
    { "../../..", "/api/v1/users/..%2F..%2F../info" }, { "a/b", "/api/v1/users/a%2Fb/info" },
    { "a?b=1", "/api/v1/users/a%3Fb%3D1/info" }, { "a#f", "/api/v1/users/a%23f/info" },
    { "a\r\nX: 1", "/api/v1/users/a%0D%0AX%3A%201/info" }, { "v1.2", "/api/v1/users/v1.2/info" },
  }
  for _, c in ipairs(cases) do
    local r = api.x{ id = c[1] }
    eq(r.body:match("^GET (%S+) HTTP"), c[2], string.format("%q", c[1]))
  end
  -- label and matrix styles too: their prefix does not make a dot segment either
  local label = { { name = "id", ["in"] = "path", required = true, style = "label", schema = { type = "string" } } }
  api = file_api(doc(ECHO .. "/api", "/x/{id}/y", label))
  eq(api.x{ id = "" }.body:match("^GET (%S+) HTTP"), "/api/x/%2E/y", "an empty label")
  eq(api.x{ id = "." }.body:match("^GET (%S+) HTTP"), "/api/x/.%2E/y", "a label of a dot")
end)

-- httpbin's /base64/ serves what it decodes: a document from a server
local function served(d) return h.served_by_httpbin(BIN, json.encode(d)) end

test("a document from one host naming another as its server: the session's credentials are not sent there", function()
  local d = doc(ECHO .. "/api", "/x", nil)
  d.components = { securitySchemes = { b = { type = "http", scheme = "bearer" } } }
  d.security = { { b = {} } }
  local url = served(d)
  for _, opts in ipairs({ { auth = { bearer = "AUTHSECRET" } }, { security = { bearer = "SECSECRET" } },
                          { headers = { Authorization = "Bearer HDRSECRET" } }, { headers = { ["X-Api-Key"] = "KEYSECRET" } } }) do
    local e = tostring(fails("openapi", function() http.openapi(url, opts).x{} end))
    truthy(e:find(ECHO, 1, true) and e:find("base_url", 1, true), "refused, naming the server and the way out: " .. e)
    truthy(not e:find("SECRET", 1, true), "no credential in the message: " .. e)
  end
  -- The user names the host: then it gets them. Without credentials, the document's server is used.
  local body = http.openapi(url, { base_url = ECHO .. "/api", auth = { bearer = "GIVEN" } }).x{}.body
  truthy(body:find("Authorization: Bearer GIVEN", 1, true), body)
  body = http.openapi(url, { server = ECHO .. "/api", auth = { bearer = "GIVEN" } }).x{}.body
  truthy(body:find("Authorization: Bearer GIVEN", 1, true), body)
  body = http.openapi(url).x{}.body
  truthy(body:find("^GET /api/x ") and not body:find("Authorization", 1, true), body)
  -- A server on the document's own host (here a relative one) gets them.
  local r = http.openapi(served(doc("/anything/same", "/x", nil)), { auth = { bearer = "SAMEHOST" } }).x{}
  eq(r.json.headers.Authorization, "Bearer SAMEHOST")
end)

test("a fetched document naming a token endpoint on another host: the client secret is not sent there", function()
  local d = doc("/anything/api", "/x", nil)
  d.components = { securitySchemes = { o = { type = "oauth2", flows = { clientCredentials = { tokenUrl = ECHO .. "/oauth/token", scopes = {} } } } } }
  d.security = { { o = {} } }
  local url = served(d)
  local e = tostring(fails("openapi", function()
    http.openapi(url, { security = { oauth2 = { client_id = "cid", client_secret = "CLIENTSECRET" } } }).x{}
  end))
  truthy(e:find(ECHO, 1, true) and e:find("token_url", 1, true), "refused, naming the endpoint and the way out: " .. e)
  truthy(not e:find("CLIENTSECRET", 1, true), "no secret in the message: " .. e)
  -- Named by the user: the flow asks that endpoint (the echo server answers no token, so the
  -- call fails later, as an auth failure, not as this refusal).
  local ok, err = pcall(function()
    http.openapi(url, { security = { oauth2 = { client_id = "cid", client_secret = "CLIENTSECRET", token_url = ECHO .. "/oauth/token" } } }).x{}
  end)
  truthy(not ok and not tostring(err):find("another host", 1, true), "the named endpoint is asked: " .. tostring(err))
  -- A token endpoint on the document's own host is taken as the document says.
  d.components.securitySchemes.o.flows.clientCredentials.tokenUrl = BIN .. "/status/401"
  ok, err = pcall(function()
    http.openapi(served(d), { security = { oauth2 = { client_id = "cid", client_secret = "s" } } }).x{}
  end)
  truthy(not ok and not tostring(err):find("another host", 1, true), "same host: asked: " .. tostring(err))
end)

test("a $ref cycle between schemas, and a document nested past any need: clear errors, in bounded time", function()
  local d = doc(ECHO, "/x", nil)
  d.paths["/x"].post, d.paths["/x"].get = d.paths["/x"].get, nil
  d.paths["/x"].post.requestBody = { content = { ["application/json"] = { schema = { ["$ref"] = "#/components/schemas/A" } } } }
  d.components = { schemas = { A = { ["$ref"] = "#/components/schemas/B" }, B = { ["$ref"] = "#/components/schemas/A" } } }
  local t0 = os.time()
  local e = tostring(fails("schema", function() file_api(d).x{ body = { a = 1 } } end))
  truthy(e:find("cycle", 1, true), e)
  local deep = string.rep('{"a":', 100000) .. "1" .. string.rep("}", 100000)
  local text = '{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"x":' .. deep .. "}"
  e = tostring(fails("openapi", function() http.openapi(h.temp_file(text, ".json")) end))
  truthy(e:find("too deep", 1, true), e)
  truthy(os.time() - t0 <= 5, "bounded: " .. (os.time() - t0) .. " s")
end)

h.done()
