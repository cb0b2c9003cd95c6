-- Credentials a session or request gives: Digest (libcurl answers the challenge), client
-- certificates (mutual TLS against the test nginx, which asks for one), and .netrc files.
-- Run on the GnuTLS libcurl too (scripts/test): TLS options behave the same on both flavours.
-- libcurl passes: gnutls
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy, fails = h.eq, h.truthy, h.fails

local BIN = h.env("LUNET_HTTPBIN")
local TLS = h.env("LUNET_NGINX_TLS")
local CA = h.env("LUNET_TEST_CA")
local CLIENT_CERT = h.env("LUNET_TEST_CLIENT_CERT")
local CLIENT_KEY = h.env("LUNET_TEST_CLIENT_KEY")   -- encrypted with the passphrase below
local CLIENT_PASS = "lunet-client"

local temp_file = h.temp_file

test("digest: a session's auth.digest answers httpbin's challenge; a wrong password is a 401", function()
  -- httpbin's digest endpoint also wants the cookie its challenge set: the session keeps cookies.
  local s = http.session{ auth = { digest = { "user", "passwd" } }, cookies = true }
  local r = s:get(BIN .. "/digest-auth/auth/user/passwd")
  eq(r.status, 200, "status")
  eq(r.json, { authenticated = true, user = "user" }, "httpbin's verdict")
  local wrong = http.session{ auth = { digest = { "user", "nope" } }, cookies = true }
  eq(wrong:get(BIN .. "/digest-auth/auth/user/passwd").status, 401, "a wrong password")
end)

test("digest: a request's own Authorization replaces the session's digest", function()
  local s = http.session{ auth = { digest = { "user", "passwd" } } }
  local r = s:get(BIN .. "/headers", { headers = { Authorization = "Bearer own" } })
  eq(r.json.headers.Authorization, "Bearer own", "the request's field, no digest exchange")
end)

test("digest: auth needs { user, password } and names the schemes it takes", function()
  local e = fails("argument", function() http.session{ auth = { digest = {} } } end, "no user")
  truthy(tostring(e):find("auth.digest needs", 1, true), "names the field: " .. tostring(e))
  e = fails("argument", function() http.session{ auth = { kerberos = {} } } end, "unknown scheme")
  truthy(tostring(e):find("digest = { user, password }", 1, true), "lists digest: " .. tostring(e))
  e = fails("argument", function() http.session{ auth = { basic = { "u", "p" }, bearer = "t" } } end, "two schemes")
  truthy(tostring(e):find("one scheme", 1, true), "one at a time: " .. tostring(e))
end)

test("client certificate: the TLS server sees it with its key and passphrase, and none without", function()
  local opts = { ca_file = CA, cert = CLIENT_CERT, cert_key = CLIENT_KEY, cert_password = CLIENT_PASS }
  local r = http.get(TLS .. "/client-cert", opts)
  eq(r.body, "SUCCESS CN=lunet test client\n", "verified, with its subject")
  eq(http.get(TLS .. "/client-cert", { ca_file = CA }).body, "NONE \n", "no certificate offered")
  local s = http.session{ base_url = TLS, ca_file = CA, cert = CLIENT_CERT, cert_key = CLIENT_KEY, cert_password = CLIENT_PASS }
  eq(s:get("/client-cert").body, "SUCCESS CN=lunet test client\n", "as a session option")
end)

test("client certificate: a wrong passphrase or a missing file fails with a message, no crash", function()
  -- By IP, not by name: a connection the test above opened with the right passphrase would be
  -- reused (libcurl matches connections by certificate, not by passphrase).
  local by_ip = TLS:gsub("//localhost:", "//127.0.0.1:")
  local e = fails("tls", function()
    http.get(by_ip .. "/client-cert", { ca_file = CA, cert = CLIENT_CERT, cert_key = CLIENT_KEY, cert_password = "wrong" })
  end, "wrong passphrase")
  -- lunet names the files itself: libcurl's text differs by flavour (OpenSSL names the key
  -- file, GnuTLS says "error reading X.509 potentially-encrypted key file").
  truthy(tostring(e):find("key " .. CLIENT_KEY, 1, true), "names the key file: " .. tostring(e))
  e = fails("tls", function() http.get(TLS .. "/client-cert", { ca_file = CA, cert = "/nonexistent/client.pem" }) end, "missing file")
  truthy(tostring(e):find("client certificate /nonexistent/client.pem", 1, true), "names the certificate file: " .. tostring(e))
end)

test("netrc: the file's entry for the host answers a basic-auth challenge; own credentials win", function()
  local host = BIN:match("^http://([^:/]+)")
  local netrc = temp_file("# a comment\nmachine other.example login x password y\n\nmachine " .. host
    .. "\n  login netuser\n  password \"net pass\"\n")
  local s = http.session{ netrc = netrc }
  eq(s:get(BIN .. "/basic-auth/netuser/net%20pass").status, 200, "a quoted password with a space, across lines")
  os.remove(netrc)
  netrc = temp_file("machine other.example login x password y\nmachine " .. host .. " login netuser password netpass\n")
  s = http.session{ netrc = netrc }
  local r = s:get(BIN .. "/basic-auth/netuser/netpass")
  eq(r.status, 200, "credentials from the file")
  eq(r.json.user, "netuser", "the user from the file")
  eq(http.get(BIN .. "/basic-auth/netuser/netpass").status, 401, "not without netrc")
  eq(s:get(BIN .. "/basic-auth/netuser/netpass", { netrc = false }).status, 401, "a request's netrc = false turns it off")
  eq(http.get(BIN .. "/basic-auth/netuser/netpass", { netrc = netrc }).status, 200, "as a request option")
  local own = http.session{ netrc = netrc, auth = { basic = { "me", "mine" } } }
  eq(own:get(BIN .. "/basic-auth/me/mine").status, 200, "the session's auth wins over the file")
  os.remove(netrc)
end)

test("netrc: no entry for the host, or no file at all, sends no credentials and is no error", function()
  local netrc = temp_file("machine other.example login x password y\n")
  eq(http.get(BIN .. "/basic-auth/x/y", { netrc = netrc }).status, 401, "no entry for this host")
  os.remove(netrc)
  eq(http.get(BIN .. "/basic-auth/x/y", { netrc = "/nonexistent/netrc" }).status, 401, "no file")
  local e = fails("argument", function() http.get(BIN .. "/get", { netrc = 42 }) end, "a number")
  truthy(tostring(e):find("netrc", 1, true), "names the option: " .. tostring(e))
end)

h.done()
