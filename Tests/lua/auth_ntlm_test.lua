-- auth = { ntlm = { user, password } } and { negotiate = true }, answered by libcurl. The test
-- server (Tests/servers/auth_server.py /ntlm) runs the NTLM handshake and checks the NTLMv2 proof of
-- the type-3 message against its password; /negotiate asks for Negotiate, which needs a
-- Kerberos ticket this machine does not have.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails

local server, pid, port = h.start_server("auth_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

test("ntlm: libcurl answers the challenge with a type-1 then a type-3 message the server verifies", function()
  local s = http.session{ auth = { ntlm = { "LUNET\\ntuser", "ntpass" } } }
  local r = s:get(BASE .. "/ntlm")
  eq(r.status, 200, "authenticated")
  eq(r.json, { authenticated = true, user = "ntuser" }, "the server's verdict")
  local wrong = http.session{ auth = { ntlm = { "LUNET\\ntuser", "nope" } } }
  r = wrong:get(BASE .. "/ntlm")
  eq({ r.status, r.json.reason }, { 401, "wrong user or password" }, "a wrong password is refused")
end)

test("ntlm: the handshake as the server saw it: nothing, a type-1 message, a type-3 message", function()
  local r = http.session{ auth = { ntlm = { "LUNET\\ntuser", "ntpass" } } }:get(BASE .. "/ntlm?key=hs")
  eq(r.status, 200, "authenticated")
  local log = http.get(BASE .. "/ntlm/log?key=hs").json
  eq(#log, 3, "three requests: " .. json.encode(log))
  eq(log[1], "", "the first carries no credentials")
  truthy(log[2]:find("^NTLM TlRMTVNTUAAB"), "then NTLMSSP type 1: " .. log[2])
  truthy(log[3]:find("^NTLM TlRMTVNTUAAD"), "then type 3: " .. log[3])
end)

test("ntlm: auth needs { user, password }; --curl style masking in r:curl()", function()
  local e = fails("argument", function() http.session{ auth = { ntlm = {} } } end, "no user")
  truthy(tostring(e):find("auth.ntlm needs { user, password }", 1, true), tostring(e))
  local r = http.session{ auth = { ntlm = { "LUNET\\ntuser", "ntpass" } } }:get(BASE .. "/ntlm")
  local line = r:curl()
  truthy(not line:find("ntpass", 1, true), "no password in: " .. line)
  -- issue 35: r:curl() says what the command line's --curl says: the scheme and the user.
  truthy(line:find("--ntlm -u 'LUNET\\ntuser:***'", 1, true), "the scheme and user: " .. line)
end)

test("negotiate without a Kerberos ticket: the server's 401 comes back, no crash", function()
  local s = http.session{ auth = { negotiate = true } }
  local r = s:get(BASE .. "/negotiate")
  eq({ r.status, r.json.negotiate }, { 401, false }, "no token could be made, so none was sent")
  local e = fails("argument", function() http.session{ auth = { negotiate = "yes" } } end, "not true")
  truthy(tostring(e):find("Kerberos ticket", 1, true), tostring(e))
end)

h.done()
