-- HTTP/3 where the loaded libcurl brings it (bookworm-backports' GnuTLS libcurl 8: scripts/test
-- runs this file on it too), and a clear error naming what to install where it does not. The
-- server: Tests/servers/h3_server.py (aioquic, QUIC on UDP 127.0.0.1 only, nothing on TCP), with the
-- test servers' certificate, so every request below also checks ca_file on QUIC's TLS.
-- libcurl passes: gnutls
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local LUNET = h.lunet()
local CA = h.env("LUNET_TEST_CA")
local DIR = h.env("LUNET_TEST_SERVERS")
local BIN = h.env("LUNET_HTTPBIN")
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local HAS_HTTP3 = http.libcurl().http3
local server, pid, port = h.start_venv_server("h3_server.py", DIR .. "/tls/server.pem", DIR .. "/tls/server.key")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local H3 = "https://127.0.0.1:" .. port

if not HAS_HTTP3 then
  test("without HTTP/3 in libcurl: http_version 3 and 3-only fail at once, kind argument, naming what to install", function()
    for _, v in ipairs({ "3", "3-only" }) do
      local e = fails("argument", function() http.get(H3 .. "/echo", { http_version = v, ca_file = CA, timeout = 5 }) end, v)
      truthy(e.message:find("libcurl3-gnutls", 1, true) and e.message:find("LUNET_LIBCURL", 1, true), e.message)
      truthy(e.message:find(http.libcurl().version, 1, true), "names the libcurl loaded: " .. e.message)
    end
    local s = http.session{ base_url = H3, http_version = "3" }
    fails("argument", function() s:get("/echo") end, "a session's http_version")
    eq(http.get(BIN .. "/get").status, 200, "other requests go on")
    local code, out = h.run(q(LUNET) .. " --http3-only GET " .. q(H3 .. "/echo") .. " 2>&1")
    eq(code, 1, "the command line exits 1")
    truthy(out:find("HTTP/3 needs a libcurl built with it", 1, true), out)
  end)
else
  test("http_version 3-only: GET and POST over QUIC, r.http_version is \"3\", CA checked", function()
    local r = http.get(H3 .. "/echo?a=1", { http_version = "3-only", ca_file = CA })
    eq({ r.status, r.http_version, r.json.http_version, r.json.path }, { 200, "3", "3", "/echo?a=1" }, "GET")
    r = http.post(H3 .. "/echo", { http_version = "3-only", ca_file = CA, json = { n = 42 } })
    eq({ r.status, r.http_version, json.decode(r.json.body).n }, { 200, "3", 42 }, "POST with a JSON body")
    eq(http.get(H3 .. "/bytes/300000", { http_version = "3-only", ca_file = CA }).body, string.rep("x", 300000), "300 KB")
    fails("tls", function() http.get(H3 .. "/echo", { http_version = "3-only", timeout = 5 }) end, "no CA: the certificate is not trusted")
    eq(http.get(H3 .. "/echo", { http_version = "3-only", insecure = true }).http_version, "3", "insecure")
  end)

  test("http_version 3 tries QUIC first: a server on UDP alone answers; a session's requests share the connection", function()
    local s = http.session{ base_url = H3, http_version = "3", ca_file = CA }
    local tasks = {}
    for i = 1, 10 do tasks[i] = s:get_async("/echo?i=" .. i) end
    local opened = 0
    for i, t in ipairs(tasks) do
      local r = t:await()
      eq({ r.status, r.http_version, r.json.path }, { 200, "3", "/echo?i=" .. i }, "request " .. i)
      opened = opened + r.connections_opened
    end
    truthy(opened <= 2, "ten requests on at most two connections: " .. opened)
    eq(s:get("/status/418").status, 418, "a status")
  end)

  test("nothing listening: HTTP/3 fails within its timeout, kind connect or timeout, and the host goes on", function()
    local t0 = require("lunet.core").now()
    local ok, e = pcall(http.get, "https://127.0.0.1:9/echo", { http_version = "3-only", ca_file = CA, timeout = 2 })
    truthy(not ok and (e.kind == "connect" or e.kind == "timeout"), "kind: " .. tostring(e))
    truthy(require("lunet.core").now() - t0 < 4, "bounded")
    eq(http.get(H3 .. "/echo", { http_version = "3-only", ca_file = CA }).status, 200, "the next request")
  end)

  test("the command line's --http3 and --http3-only, the prompt, and lunet load speak HTTP/3", function()
    local code, out = h.run(q(LUNET) .. " --http3-only --verify " .. q(CA) .. " --print=b GET " .. q(H3 .. "/echo?cli=1"))
    eq(code, 0, out)
    eq(json.decode(out).http_version, "3", "--http3-only")
    code, out = h.run(q(LUNET) .. " --http3 --verify " .. q(CA) .. " --print=h GET " .. q(H3 .. "/echo"))
    truthy(code == 0 and out:find("^HTTP/3 200"), "--http3's head: " .. out)
    code, out = h.run(q(LUNET) .. " --http3 --http3-only GET " .. q(H3 .. "/echo") .. " 2>&1")
    eq(code, 2, "both: a usage error: " .. out)
    code, out = h.run(q(LUNET) .. " --http3-only --curl GET " .. q(H3 .. "/echo"))
    truthy(out:find("--http3-only", 1, true), "--curl says it: " .. out)
    local lines = string.format("r = http.get(%q, { http_version = '3-only', ca_file = %q })\nr.http_version\n", H3 .. "/echo", CA)
    code, out = h.run("printf %s " .. q(lines) .. " | " .. q(LUNET))
    truthy(code == 0 and out:match("^%s*\"?3\"?%s*$"), "the prompt shows the value: " .. out)
    local script = h.temp_file(string.format([[
options = { session = { base_url = %q, http_version = "3-only", ca_file = %q } }
return function(vu) local r = vu.session:get("/echo") assert(r.http_version == "3", r.http_version) end
]], H3, CA), ".lua")
    local export = h.tmpname()
    code, out = h.run(q(LUNET) .. " load " .. q(script) .. " --vus 2 --iterations 10 --quiet --summary-export " .. q(export) .. " 2>&1")
    eq(code, 0, "lunet load: " .. out)
    local summary = json.decode(h.read_file(export))
    eq(summary.metrics.http_reqs.count, 10, "ten requests over HTTP/3")
    eq(summary.metrics.checks and summary.metrics.checks.fails or 0, 0, "none failed")
  end)
end
