-- auth = { oauth2 = { ... } } and { fetch_token = function(session) }: the session fetches an
-- access token when it needs one, keeps it until shortly before it expires, fetches one at a
-- time, and on a 401 invalid_token fetches another and sends the request again, once.
-- Tests/servers/auth_server.py is the token endpoint and the resource; its /oauth/stats counts.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy, fails = h.eq, h.truthy, h.fails

local server, pid, port = h.start_server("auth_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

-- Each test its own client (the server knows any id, with the secret ID-secret).
local function client(id, extra, token_query)
  local o = { token_url = BASE .. "/oauth/token" .. (token_query or ""), client_id = id, client_secret = id .. "-secret" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return http.session{ base_url = BASE, auth = { oauth2 = o } }
end
local function stats(id) return http.get(BASE .. "/oauth/stats?client=" .. id).json end

test("client credentials: one token for many requests, sent as Bearer, client id and secret as Basic", function()
  local s = client("cc", { scope = { "read", "write" } })
  for i = 1, 4 do eq(s:get("/oauth/resource").json, { client = "cc", token_ok = true }, "request " .. i) end
  local st = stats("cc")
  eq({ st.token_requests, st.grants.client_credentials, st.client_auth.basic, st.resource_requests }, { 1, 1, 1, 4 },
    "one token request, four resource requests")
  eq(st.last_scope, "read write", "the scopes, space-separated")
  eq(s:with{ headers = { ["X-Derived"] = "1" } }:get("/oauth/resource").status, 200, "a derived session")
  eq(stats("cc").token_requests, 1, "shares the token")
end)

test("one token request at a time: a burst of requests waits for the one in flight", function()
  local s = client("burst", nil, "?slow=0.3")
  local list = {}
  for i = 1, 8 do list[i] = s:get_async("/oauth/resource") end
  for i, r in ipairs(task.all(list):await()) do eq(r.status, 200, "request " .. i) end
  eq(stats("burst").token_requests, 1, "one token request for eight requests")
end)

test("a token is fetched again before it expires, without a refused request", function()
  local s = client("expiring", nil, "?expires_in=1")
  eq(s:get("/oauth/resource").status, 200, "first")
  task.sleep(1.0)   -- past expires_in less its margin
  eq(s:get("/oauth/resource").status, 200, "after expiry")
  local st = stats("expiring")
  eq({ st.token_requests, st.resource_requests }, { 2, 2 }, "a new token, and no request went out with the old one")
end)

test("a 401 invalid_token gets a new token and the request is sent again, once", function()
  local s = client("revoked")
  eq(s:get("/oauth/resource").status, 200, "first")
  http.get(BASE .. "/oauth/revoke?client=revoked")
  local r = s:get("/oauth/resource")
  eq(r.status, 200, "answered after one refresh")
  local st = stats("revoked")
  eq({ st.token_requests, st.resource_requests }, { 2, 3 }, "one more token; the refused request and its retry")
  -- A server that refuses every token: one refresh, then the 401 is the answer.
  http.get(BASE .. "/oauth/reject?client=revoked")
  eq(s:get("/oauth/resource").status, 401, "refused again after one retry")
  eq(stats("revoked").token_requests, 3, "exactly one more token request")
  local strict = client("revoked-strict", nil, nil)
  strict = strict:with{ accept_status = "2xx" }
  http.get(BASE .. "/oauth/reject?client=revoked-strict")
  local e = fails("status", function() strict:get("/oauth/resource") end, "validated")
  eq(e.response.status, 401, "the error carries the 401")
  eq(stats("revoked-strict").token_requests, 2, "the first token and one refresh")
end)

test("password grant; then its refresh token, rotated; client credentials in the form on request", function()
  local s = client("pw", { grant = "password", username = "alice", password = "alice-pass", client_auth = "body" })
  eq(s:get("/oauth/resource").status, 200, "with a password grant's token")
  http.get(BASE .. "/oauth/revoke?client=pw")
  eq(s:get("/oauth/resource").status, 200, "refreshed")
  http.get(BASE .. "/oauth/revoke?client=pw")
  eq(s:get("/oauth/resource").status, 200, "refreshed with the rotated refresh token")
  local st = stats("pw")
  eq({ st.grants.password, st.grants.refresh_token, st.client_auth.body }, { 1, 2, 3 }, "password once, then refresh tokens")
end)

test("refresh_token grant: the configured refresh token, then the ones the endpoint rotates in", function()
  local first = http.post(BASE .. "/oauth/token", { form = { grant_type = "password", username = "alice", password = "alice-pass",
    client_id = "rt", client_secret = "rt-secret" } }).json
  local s = client("rt", { grant = "refresh_token", refresh_token = first.refresh_token })
  eq(s:get("/oauth/resource").status, 200, "first")
  http.get(BASE .. "/oauth/revoke?client=rt")
  eq(s:get("/oauth/resource").status, 200, "again with the rotated token (the first is spent)")
  eq(stats("rt").grants.refresh_token, 2, "two refresh grants")
end)

test("a token endpoint that refuses: kind auth, its error named, the secret not", function()
  local s = http.session{ base_url = BASE, auth = { oauth2 = { token_url = "/oauth/token", client_id = "bad", client_secret = "wrong-secret" } } }
  local e = fails("auth", function() s:get("/oauth/resource") end, "wrong secret")
  truthy(tostring(e):find("the token endpoint answered 401: invalid_client", 1, true), tostring(e))
  truthy(not tostring(e):find("wrong-secret", 1, true), "no secret in: " .. tostring(e))
  e = fails("argument", function() http.session{ auth = { oauth2 = { client_id = "x" } } } end, "no token_url")
  truthy(tostring(e):find("needs token_url", 1, true), tostring(e))
  e = fails("argument", function() http.session{ auth = { oauth2 = { token_url = "/t", client_id = "x", grant = "password" } } } end, "password")
  truthy(tostring(e):find("needs username and password", 1, true), tostring(e))
  e = fails("argument", function() http.session{ auth = { oauth2 = { token_url = "/t", client_id = "x", scopes = "a" } } } end, "typo")
  truthy(tostring(e):find("did you mean 'scope'", 1, true), tostring(e))
end)

test("fetch_token: any function that returns a token and its lifetime, called once for many requests", function()
  local calls = 0
  local s = http.session{ base_url = BASE, auth = { fetch_token = function(session)
    calls = calls + 1
    local j = session:post("/oauth/token", { form = { grant_type = "client_credentials", client_id = "custom",
      client_secret = "custom-secret" } }).json
    return j.access_token, j.expires_in
  end } }
  for i = 1, 3 do eq(s:get("/oauth/resource").status, 200, "request " .. i) end
  eq(calls, 1, "one call")
  local failing = http.session{ auth = { fetch_token = function() error("no vault today") end } }
  local e = fails("auth", function() failing:get(BASE .. "/oauth/resource") end, "a failing fetch_token")
  truthy(tostring(e):find("no vault today", 1, true), tostring(e))
  local path = h.tmpname()
  s:save(path)
  truthy(not h.read_file(path):find("auth", 1, true), "a session file cannot keep a function: no auth in it")
  os.remove(path)
end)

test("tokens are masked: r:curl(), HAR (which leaves the token exchange out); a request's own Authorization wins", function()
  local s = client("masked")
  local path = h.tmpname()
  local rec = http.record(path)
  local r = s:get("/oauth/resource")
  rec.stop()
  local text = h.read_file(path)
  os.remove(path)
  local doc = json.decode(text)
  eq(#doc.log.entries, 1, "the resource request only")
  truthy(not text:find("at-masked", 1, true) and not text:find("masked-secret", 1, true), "no token or secret in the HAR")
  local line = r:curl()
  truthy(line:find("Authorization: ***", 1, true) and not line:find("at-masked", 1, true), "r:curl(): " .. line)
  local own = client("own")
  eq(own:get("/oauth/resource", { headers = { Authorization = "Bearer mine" } }).status, 401, "its own token, refused")
  eq(stats("own").token_requests, 0, "no token fetched for it")
end)

h.done()
