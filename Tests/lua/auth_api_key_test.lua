-- auth = { api_key = { header = NAME | query = NAME, value = KEY } }: the key reaches the server
-- (Tests/servers/auth_server.py's /echo says what it received), and its value is masked in r:curl()
-- and HAR recordings even under a name lunet.secrets would not take for a credential's.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy, fails = h.eq, h.truthy, h.fails
local secrets = require "lunet.secrets"

local server, pid, port = h.start_server("auth_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

local function har_of(fn)
  local path = h.tmpname()
  local rec = http.record(path)
  fn()
  rec.stop()
  local text = h.read_file(path)
  os.remove(path)
  return text, json.decode(text)
end

test("api_key in a header: sent on every request, masked under a name of its own", function()
  truthy(not secrets.is_secret_name("X-Gateway"), "X-Gateway is no credential's name by itself")
  local s = http.session{ base_url = BASE, auth = { api_key = { header = "X-Gateway", value = "gw-key-123" } } }
  local r = s:get("/echo")
  eq(r.json.headers["x-gateway"], { "gw-key-123" }, "the server got the key")
  eq(s:get("/echo", { headers = { ["X-Gateway"] = "own" } }).json.headers["x-gateway"], { "own" }, "a request's own value wins")
  local line = r:curl()
  truthy(line:find("-H 'X-Gateway: ***'", 1, true) and not line:find("gw-key-123", 1, true), "r:curl() masks it: " .. line)
  local _, doc = har_of(function() s:get("/echo?page=2") end)
  local sent
  for _, f in ipairs(doc.log.entries[1].request.headers) do if f.name == "X-Gateway" then sent = f.value end end
  eq(sent, "***", "the HAR's request field is masked")
  truthy(not json.encode(doc.log.entries[1].request):find("gw-key-123", 1, true), "the key is nowhere in the recorded request")
end)

test("api_key in the query: added to every URL, masked in r:curl() and HAR", function()
  local s = http.session{ base_url = BASE, auth = { api_key = { query = "gwq", value = "q key/1" } } }
  local r = s:get("/echo?page=2")
  eq(r.json.query, "page=2&gwq=q%20key%2F1", "added after the request's own parameters, encoded")
  eq(s:get("/echo").json.query, "gwq=q%20key%2F1", "a URL without a query gets one")
  eq(s:get("/echo?gwq=mine").json.query, "gwq=mine", "a request that gives the parameter keeps its own")
  local line = r:curl()
  truthy(line:find("gwq=***", 1, true) and not line:find("q%20key", 1, true), "r:curl() masks it: " .. line)
  local _, doc = har_of(function() s:get("/echo?page=3") end)
  local q = doc.log.entries[1].request
  truthy(q.url:find("gwq=***", 1, true), "the HAR URL is masked: " .. q.url)
  truthy(not json.encode(q):find("q%20key", 1, true), "the key is nowhere in the recorded request")
end)

test("api_key in a header keeps cached responses apart: one key's answer never serves another", function()
  local c = http.cache{ dir = false }
  local a = http.session{ base_url = BASE, cache = c, auth = { api_key = { header = "X-Gateway", value = "key-a" } } }
  local b = http.session{ base_url = BASE, cache = c, auth = { api_key = { header = "X-Gateway", value = "key-b" } } }
  eq(a:get("/echo/cacheable").json.headers["x-gateway"], { "key-a" }, "a, from the server")
  local r = a:get("/echo/cacheable")
  eq(r.cache, "hit", "a again, from the cache")
  r = b:get("/echo/cacheable")
  eq({ r.cache, r.json.headers["x-gateway"] }, { "miss", { "key-b" } }, "b's own answer, from the server")
end)

test("api_key: one of header or query, and a value", function()
  local e = fails("argument", function() http.session{ auth = { api_key = { header = "A", query = "b", value = "v" } } } end, "both")
  truthy(tostring(e):find("one of header", 1, true), tostring(e))
  e = fails("argument", function() http.session{ auth = { api_key = { header = "A" } } } end, "no value")
  truthy(tostring(e):find("value = KEY", 1, true), tostring(e))
  e = fails("argument", function() http.session{ auth = { api_key = { header = "A B", value = "v" } } } end, "a bad name")
  truthy(tostring(e):find("not a field name", 1, true), tostring(e))
end)

h.done()
