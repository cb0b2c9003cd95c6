-- Issue 33, items 2-5: secrets going where they should not. One user's cached answer never
-- serves another (Cookie, a jar's cookies, API-key headers; in memory and on disk across
-- processes); credentials are dropped on a redirect to another origin; a token request is not
-- redirected to another origin; a named session is bound to its host.
-- Two instances of Tests/servers/integrity_server.py are two origins (127.0.0.1, two ports); each
-- records what reached it.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
h.cleanup(after_all, h.remove_caches)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local url = require "lunet.url"

local sa, pida, porta = h.start_server("integrity_server.py")
local sb, pidb, portb = h.start_server("integrity_server.py")
h.cleanup(after_all, function() h.stop_server(sa, pida); h.stop_server(sb, pidb) end)
local A = "http://127.0.0.1:" .. porta
local B = "http://127.0.0.1:" .. portb

local function received(origin)
  return http.get(origin .. "/_log?clear=1").json
end

-- The value of header `name` in a recorded request (or an /echo answer), nil when absent.
local function header(rec, name)
  for _, f in ipairs(rec.headers) do if f[1]:lower() == name:lower() then return f[2] end end
  return nil
end

local CACHEABLE = "/echo?cc=max-age=600"

-- ---------------------------------------------------------------------------------------------
-- Item 2: the cache keeps users apart
-- ---------------------------------------------------------------------------------------------

test("two requests that differ only in a Cookie header get their own cache entries", function()
  local c = h.fresh_cache()
  local s = http.session{ cache = c }
  local alice = s:get(A .. CACHEABLE .. "&t=cookie", { headers = { Cookie = "user=alice" } })
  local bob = s:get(A .. CACHEABLE .. "&t=cookie", { headers = { Cookie = "user=bob" } })
  truthy(alice.json.n ~= bob.json.n, "bob's request went to the server, not alice's entry (" .. alice.json.n .. ", " .. bob.json.n .. ")")
  eq(header(bob.json, "Cookie"), "user=bob", "bob's answer was made for bob")
  eq(bob.cache, "miss", "bob: a miss")
  -- Each is still cached for its own holder.
  eq(s:get(A .. CACHEABLE .. "&t=cookie", { headers = { Cookie = "user=alice" } }).json.n, alice.json.n, "alice again: her entry")
  eq(s:get(A .. CACHEABLE .. "&t=cookie", { headers = { Cookie = "user=bob" } }).json.n, bob.json.n, "bob again: his entry")
end)

test("two sessions sharing a cache, each with its jar's cookie, get their own entries", function()
  local c = h.fresh_cache()
  local alice = http.session{ cache = c, cookies = true }
  local bob = http.session{ cache = c, cookies = true }
  alice:get(A .. "/set-cookie?name=user&value=alice")
  bob:get(A .. "/set-cookie?name=user&value=bob")
  local ra = alice:get(A .. CACHEABLE .. "&t=jar")
  eq(header(ra.json, "Cookie"), "user=alice", "alice's jar sent her cookie")
  local rb = bob:get(A .. CACHEABLE .. "&t=jar")
  eq(header(rb.json, "Cookie"), "user=bob", "bob's request reached the server with his cookie, not alice's cached answer")
  truthy(ra.json.n ~= rb.json.n, "two answers")
  eq(alice:get(A .. CACHEABLE .. "&t=jar").cache, "hit", "alice's own entry still serves her")
  -- A session without cookies does not get alice's answer either.
  local nobody = http.session{ cache = c }
  eq(header(nobody:get(A .. CACHEABLE .. "&t=jar").json, "Cookie"), nil, "a cookie-less request gets a cookie-less answer")
end)

test("requests that differ in a credential header lunet masks (X-Api-Key, a declared api_key header) are kept apart", function()
  local c = h.fresh_cache()
  local s = http.session{ cache = c }
  for _, name in ipairs({ "X-Api-Key", "X-Auth-Token", "Private-Token" }) do
    local one = s:get(A .. CACHEABLE .. "&t=" .. name, { headers = { [name] = "one" } })
    local two = s:get(A .. CACHEABLE .. "&t=" .. name, { headers = { [name] = "two" } })
    eq(header(two.json, name), "two", name .. ": the second holder's request reached the server")
    truthy(one.json.n ~= two.json.n, name .. ": two answers")
  end
  -- auth.api_key names any header, masked or not: its value keeps entries apart too.
  local k1 = http.session{ cache = c, auth = { api_key = { header = "X-Tenant", value = "one" } } }
  local k2 = http.session{ cache = c, auth = { api_key = { header = "X-Tenant", value = "two" } } }
  local r1 = k1:get(A .. CACHEABLE .. "&t=declared")
  local r2 = k2:get(A .. CACHEABLE .. "&t=declared")
  eq(header(r2.json, "X-Tenant"), "two", "the second key's request reached the server")
  truthy(r1.json.n ~= r2.json.n, "two answers")
end)

test("on disk across processes (--cache): another X-Api-Key or Cookie is a miss, the same one a hit", function()
  local dir = h.tmpname()
  os.remove(dir)
  local env = "XDG_CACHE_HOME=" .. dir .. " "
  local function run(item)
    local code, out = h.run(env .. h.lunet() .. " --cache --print=b GET '" .. A .. CACHEABLE .. "&t=disk' '" .. item .. "'")
    eq(code, 0, "lunet " .. item .. ": " .. out)
    return json.decode(out)
  end
  local first = run("X-Api-Key:alice")
  eq(run("X-Api-Key:alice").n, first.n, "the same key: answered from the disk cache")
  local other = run("X-Api-Key:bob")
  truthy(other.n ~= first.n, "another key: a miss")
  eq(header(other, "X-Api-Key"), "bob", "made for bob")
  local cookie = run("Cookie:user=carol")
  truthy(cookie.n ~= first.n and cookie.n ~= other.n, "a cookie holder gets no one else's answer")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 3: credentials stay behind on a redirect to another origin
-- ---------------------------------------------------------------------------------------------

local function via_a_to(origin, path, status)
  return A .. "/redirect?status=" .. (status or 302) .. "&to=" .. url.encode(origin .. path)
end

-- The one request B received since it was last asked: its recorded form.
local function only_request(origin)
  local got = received(origin)
  eq(#got, 1, "requests that reached " .. origin .. " (" .. h.show(got) .. ")")
  return got[1]
end

test("an api_key session's header, a masked custom header, Authorization and Cookie stay behind on a redirect to another port", function()
  received(A); received(B)
  local s = http.session{ auth = { api_key = { header = "X-Tenant-Key", value = "k-123" } } }
  local r = s:get(via_a_to(B, "/echo"), { headers = { ["X-Auth-Token"] = "t-456", Authorization = "Bearer b-789", Cookie = "c=1",
                                                      ["X-Plain"] = "kept" } })
  eq(r.status, 200, "followed to B")
  eq(r.redirects, 1, "one redirect")
  truthy(r.url:find(B, 1, true) == 1, "the response is B's: " .. r.url)
  local at_a = only_request(A)
  eq(header(at_a, "X-Tenant-Key"), "k-123", "A, the origin asked, got the key")
  local at_b = only_request(B)
  for _, name in ipairs({ "X-Tenant-Key", "X-Auth-Token", "Authorization", "Cookie" }) do
    eq(header(at_b, name), nil, name .. " did not reach B")
  end
  eq(header(at_b, "X-Plain"), "kept", "other fields went on")
end)

-- Issue 46, item 14: the names real APIs give their keys, and names a session declares.
test("real APIs' key names and a session's secret_names stay behind on a redirect, and are masked in r:curl()", function()
  received(A); received(B)
  local s = http.session{ secret_names = { "X-Gateway-Thing" } }
  local keys = { ["Ocp-Apim-Subscription-Key"] = "azure-1", ["x-functions-key"] = "fn-2", ["X-Auth-Key"] = "cf-3",
                 ["X-Storage-Pass"] = "sw-4", ["X-Gateway-Thing"] = "own-5", ["X-Plain"] = "kept" }
  local r = s:get(via_a_to(B, "/echo?sig=sas-6"), { headers = keys })
  eq(r.status, 200, "followed to B")
  local at_a, at_b = only_request(A), only_request(B)
  eq(header(at_a, "X-Gateway-Thing"), "own-5", "A, the origin asked, got it")
  for name in pairs(keys) do
    if name ~= "X-Plain" then eq(header(at_b, name), nil, name .. " did not reach B") end
  end
  eq(header(at_b, "X-Plain"), "kept", "other fields went on")
  local shown = s:get(A .. "/echo?sig=sas-6", { headers = keys }):curl()
  for _, secret in ipairs({ "azure-1", "fn-2", "cf-3", "sw-4", "own-5", "sas-6" }) do
    truthy(not shown:find(secret, 1, true), secret .. " masked in r:curl(): " .. shown)
  end
  truthy(shown:find("kept", 1, true), "the rest shown")
end)

test("a redirect within the origin keeps them", function()
  received(A)
  local s = http.session{ auth = { api_key = { header = "X-Tenant-Key", value = "k-123" } } }
  local r = s:get(via_a_to(A, "/echo"))
  eq(r.status, 200, "followed")
  eq(header(r.json, "X-Tenant-Key"), "k-123", "the same origin got the key again")
  eq(#received(A), 2, "two requests reached A")
end)

test("-A api-key on the command line: the key does not follow to another origin", function()
  received(A); received(B)
  local code, out = h.run(h.lunet() .. " --follow --print=b -A api-key -a X-Api-Key:secret-1 GET '" .. via_a_to(B, "/echo") .. "'")
  eq(code, 0, out)
  eq(header(only_request(A), "X-Api-Key"), "secret-1", "A got it")
  eq(header(only_request(B), "X-Api-Key"), nil, "B did not")
end)

test("SigV4's X-Amz-Security-Token and signature stay behind", function()
  received(A); received(B)
  local s = http.session{ auth = { aws_sigv4 = { provider = "aws:amz:us-east-1:service", key = "AKID", secret = "S", token = "session-tok" } } }
  local r = s:get(via_a_to(B, "/echo"))
  eq(r.status, 200, "followed")
  local at_a = only_request(A)
  eq(header(at_a, "X-Amz-Security-Token"), "session-tok", "A got the token")
  truthy(header(at_a, "Authorization"), "and a signature")
  local at_b = only_request(B)
  eq(header(at_b, "X-Amz-Security-Token"), nil, "B got no token")
  eq(header(at_b, "Authorization"), nil, "nor a signature")
end)

test("307 keeps the method and body, not the credentials; 302 turns a POST into a GET without a body", function()
  received(A); received(B)
  local s = http.session{ headers = { ["X-Api-Key"] = "k" } }
  local r = s:post(via_a_to(B, "/echo", 307), { body = "payload", content_type = "text/plain" })
  local at_b = only_request(B)
  eq({ at_b.method, at_b.body_len, header(at_b, "X-Api-Key") }, { "POST", 7, nil }, "307 to B")
  eq(r.json.method, "POST", "answered by B")
  received(A)
  s:post(via_a_to(B, "/echo", 302), { body = "payload", content_type = "text/plain" })
  at_b = only_request(B)
  eq({ at_b.method, at_b.body_len, header(at_b, "Content-Type") }, { "GET", 0, nil }, "302 to B")
  received(A)
end)

test("redirects followed by lunet keep max_redirects, follow = false and the whole call's timeout", function()
  received(A); received(B)
  local s = http.session{ headers = { ["X-Api-Key"] = "k" } }
  local loop = A .. "/redirect?to=" .. url.encode(A .. "/redirect?to=" .. url.encode(A .. "/redirect?to=" .. url.encode(A .. "/echo")))
  local e = fails("redirects", function() s:get(loop, { max_redirects = 2 }) end, "max_redirects = 2, three redirects")
  truthy(e.message:find("2", 1, true), e.message)
  eq(s:get(loop, { max_redirects = 3 }).status, 200, "max_redirects = 3 reaches the end")
  local r = s:get(via_a_to(B, "/echo"), { follow = false })
  eq(r.status, 302, "follow = false: the redirect is the answer")
  received(A); received(B)
  -- Two hops of 0.8 s: each is under the timeout, the call is not.
  local slow = A .. "/redirect?sleep=0.8&to=" .. url.encode(B .. "/sleep?s=0.8")
  local t0 = require("lunet.core").now()
  fails("timeout", function() s:get(slow, { timeout = 1.2 }) end, "0.8 s, then a redirect to 0.8 s, within 1.2 s")
  local took = require("lunet.core").now() - t0
  truthy(took >= 1.1, "it ran to the timeout: " .. took)
  truthy(took < 4, "bounded: " .. took)
end)

-- ---------------------------------------------------------------------------------------------
-- Item 4: the token request is not redirected to another origin
-- ---------------------------------------------------------------------------------------------

local function oauth_session(token_url, extra)
  local o = { token_url = token_url, client_id = "app", client_secret = "client-secret-1" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return http.session{ base_url = A, auth = { oauth2 = o } }
end

test("a token endpoint that redirects to another origin (307 or 302) is kind auth; the secret never reaches it", function()
  for _, status in ipairs({ 307, 308, 302 }) do
    for _, client_auth in ipairs({ "basic", "body" }) do
      received(A); received(B)
      local s = oauth_session(via_a_to(B, "/token?mode=ok", status), { client_auth = client_auth })
      local e = fails("auth", function() s:get("/echo") end, status .. " " .. client_auth)
      truthy(e.message:find("another origin", 1, true), e.message)
      eq(#received(B), 0, status .. " " .. client_auth .. ": nothing reached the other origin")
      local at_a = received(A)
      eq(#at_a, 1, "only the token request reached A (the API request was not sent)")
    end
  end
end)

test("a 307 within the token endpoint's origin is followed, with the form", function()
  received(A)
  local s = oauth_session(A .. "/redirect?status=307&to=" .. url.encode(A .. "/token?mode=ok"), { client_auth = "body" })
  local r = s:get("/echo")
  eq(header(r.json, "Authorization"), "Bearer tok-123", "the token from the redirected request")
  local got = received(A)
  eq(#got, 3, "redirect, token, API request")
  truthy(got[2].body:find("client_secret=client-secret-1", 1, true), "the form went with the 307: " .. got[2].body)
end)

-- ---------------------------------------------------------------------------------------------
-- Item 5: a named session is its host's
-- ---------------------------------------------------------------------------------------------

test("--session NAME saved against one host sends nothing of it to another; each host has its own", function()
  local cfg = h.tmpname()
  os.remove(cfg)
  local env = "XDG_CONFIG_HOME=" .. cfg .. " "
  local function lunet(args)
    local code, out = h.run(env .. h.lunet() .. " --print=b " .. args)
    eq(code, 0, args .. ": " .. out)
    return json.decode(out)
  end
  received(A); received(B)
  lunet("--session s1 -a user:pw GET " .. A .. "/echo X-Session-Secret:abc")
  local at_b = lunet("--session s1 GET " .. B .. "/echo")
  eq({ header(at_b, "X-Session-Secret"), header(at_b, "Authorization") }, { nil, nil }, "B got nothing saved against A")
  local at_a = lunet("--session s1 GET " .. A .. "/echo")
  eq(header(at_a, "X-Session-Secret"), "abc", "A still gets its session's header")
  truthy(header(at_a, "Authorization"), "and its auth")
  local dir = cfg .. "/lunet/sessions/"
  -- (every loopback spelling is one folder, "localhost": issue 47, item 1)
  truthy(h.file_size(dir .. "localhost_" .. porta .. "/s1.json"), "A's file is in A's folder")
  truthy(h.file_size(dir .. "localhost_" .. portb .. "/s1.json"), "B has a session of its own")
  -- From Lua: the host is the session's base_url's, or `host`; a bare name without one is refused.
  local code, out = h.run(env .. h.lunet() .. " -e " .. "'print(http.session{ name = \"s1\", host = \"" .. A .. "\" }.headers[\"X-Session-Secret\"])'")
  eq({ code, out }, { 0, "abc\n" }, "host = A opens A's session")
  local e = fails("argument", function() http.session{ name = "s1" } end, "no host")
  truthy(e.message:find("per host", 1, true), e.message)
  fails("argument", function() http.session{ host = A } end, "host without a name")
  os.execute("rm -rf '" .. cfg .. "'")
end)

test("two runs saving one --session at once keep both their updates (item 16)", function()
  local cfg = h.tmpname()
  os.remove(cfg)
  local env = "XDG_CONFIG_HOME=" .. cfg .. " "
  local function run_bg(item, cookie)
    -- Each run reads the session, waits a second on the server, then saves: both read it
    -- before either saves.
    return io.popen(env .. h.lunet() .. " --session shared GET '" .. A .. "/redirect?sleep=1&to=" .. url.encode(A .. "/set-cookie?name=" .. cookie .. "&value=v") ..
      "' --follow " .. item .. " >/dev/null 2>&1; echo $?")
  end
  local one, two = run_bg("X-One:1", "c1"), run_bg("X-Two:2", "c2")
  eq({ one:read("l"), two:read("l") }, { "0", "0" }, "both runs")
  one:close(); two:close()
  local path = cfg .. "/lunet/sessions/localhost_" .. porta .. "/shared.json"
  local data = json.decode(h.read_file(path))
  eq({ data.headers["X-One"], data.headers["X-Two"] }, { "1", "2" }, "both headers kept")
  local names = {}
  for _, line in ipairs(data.cookies) do names[#names + 1] = line:match("\t([^\t]*)\t[^\t]*$") end
  table.sort(names)
  eq(names, { "c1", "c2" }, "both cookies kept")
  os.execute("rm -rf '" .. cfg .. "'")
end)

h.done()
