-- The proxy variables of the environment (http_proxy, all_proxy, no_proxy and their upper-case
-- forms) route requests as they route curl's. lunet reads them once, at its first transfer, and
-- when none is set tells libcurl "no proxy" itself instead of letting it look them up for every
-- request (CurlGlobal.environmentNamesNoProxy): these tests check that the variables still work
-- when they are set, for the first request of a process and for the ones after it on a reused
-- handle. httpbin answers absolute-form requests, so it serves as the proxy.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local PROXY_VARS = { "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY" }

-- Runs `code` with lunet -e under exactly the proxy variables in `vars` (the others unset).
local function run_with(vars, code)
  local parts = { "env" }
  for _, name in ipairs(PROXY_VARS) do parts[#parts + 1] = "-u " .. name end
  for name, value in pairs(vars) do parts[#parts + 1] = name .. "=" .. q(value) end
  parts[#parts + 1] = q(LUNET) .. " -e " .. q(code)
  return h.run(table.concat(parts, " "))
end

-- Two requests in one process: the second runs on the handle the first left configured.
local TWICE_THROUGH_PROXY = [[
local s = http.session{}
for i = 1, 2 do print(i, s:get("http://proxied.test/anything/x").json.url) end
]]

test("http_proxy carries a request, and the next one on the same handle", function()
  local code, out = run_with({ http_proxy = HTTPBIN }, TWICE_THROUGH_PROXY)
  eq({ code, out }, { 0, "1\thttp://proxied.test/anything/x\n2\thttp://proxied.test/anything/x\n" }, "through the proxy")
end)

test("all_proxy and ALL_PROXY carry a request", function()
  for _, name in ipairs({ "all_proxy", "ALL_PROXY" }) do
    local code, out = run_with({ [name] = HTTPBIN }, TWICE_THROUGH_PROXY)
    eq({ code, out }, { 0, "1\thttp://proxied.test/anything/x\n2\thttp://proxied.test/anything/x\n" }, name)
  end
end)

-- Through httpbin, nginx's /index.json is httpbin's own path: a 404. Direct, nginx's 200.
local NGINX_STATUS = string.format([[
local s = http.session{}
for i = 1, 2 do print(i, s:get(%q).status) end
]], NGINX .. "/index.json")

test("no_proxy and NO_PROXY keep a host off the proxy", function()
  local code, out = run_with({ http_proxy = HTTPBIN }, NGINX_STATUS)
  eq({ code, out }, { 0, "1\t404\n2\t404\n" }, "without no_proxy, nginx's URL goes to the proxy")
  for _, name in ipairs({ "no_proxy", "NO_PROXY" }) do
    code, out = run_with({ http_proxy = HTTPBIN, [name] = "127.0.0.1" }, NGINX_STATUS)
    eq({ code, out }, { 0, "1\t200\n2\t200\n" }, name)
  end
end)

test("with no proxy variable, requests go straight to the server; a session's proxy still applies", function()
  local code, out = run_with({}, NGINX_STATUS)
  eq({ code, out }, { 0, "1\t200\n2\t200\n" }, "direct")
  code, out = run_with({}, string.format([[
local s = http.session{ proxy = %q }
for i = 1, 2 do print(i, s:get("http://proxied.test/anything/x").json.url) end
print(http.get(%q).status)
]], HTTPBIN, NGINX .. "/index.json"))
  eq({ code, out }, { 0, "1\thttp://proxied.test/anything/x\n2\thttp://proxied.test/anything/x\n200\n" }, "the session's proxy, and none for http.get")
end)

test("a proxy variable that names nothing listening fails the request, naming the proxy's port", function()
  local code, out = run_with({ http_proxy = "http://127.0.0.1:1" }, string.format("http.get(%q)", NGINX .. "/index.json"))
  truthy(code ~= 0, "exit status " .. tostring(code))
  truthy(out:find("port 1", 1, true), out)
end)

-- A dead proxy is named as the fault (issue 35): libcurl's own message names only an address.
local DEAD = "http://127.0.0.1:1"

test("a dead proxy is kind connect and the message names the proxy (environment, option, command line)", function()
  local code, out = run_with({ http_proxy = DEAD }, string.format([[
local ok, e = pcall(http.get, %q)
print(e.kind, e.message)]], NGINX .. "/index.json"))
  eq(code, 0, out)
  truthy(out:find("^connect\tthe proxy http://127.0.0.1:1 could not be reached", 1), out)
  code, out = run_with({}, string.format([[
local ok, e = pcall(http.get, %q, { proxy = "http://user:secret@127.0.0.1:1" })
print(e.kind, e.message)]], NGINX .. "/index.json"))
  truthy(out:find("^connect\tthe proxy http://user:%*%*%*@127.0.0.1:1 could not be reached"), out)
  truthy(not out:find("secret", 1, true), "the proxy's password is not shown: " .. out)
  local status, cli_out = h.run("env -u http_proxy -u all_proxy -u ALL_PROXY -u no_proxy -u NO_PROXY " .. q(LUNET) .. " GET " .. q(NGINX .. "/index.json") ..
    " --proxy http:" .. DEAD .. " 2>&1")
  eq(status, 1, cli_out)
  truthy(cli_out:find("the proxy http://127.0.0.1:1 could not be reached", 1, true), cli_out)
end)

test("a server that is down, with a proxy that no_proxy skips, is not blamed on the proxy", function()
  local code, out = run_with({ http_proxy = DEAD, no_proxy = "127.0.0.1" }, [[
local ok, e = pcall(http.get, "http://127.0.0.1:1/x")
print(e.kind, e.message)]])
  eq(code, 0, out)
  truthy(out:find("^connect\t") and not out:find("proxy", 1, true), out)
  -- A proxy given as an option is skipped for no_proxy's hosts too (libcurl reads it either way).
  code, out = run_with({ no_proxy = "127.0.0.1" }, [[
local ok, e = pcall(http.get, "http://127.0.0.1:1/x", { proxy = "]] .. DEAD .. [[" })
print(e.kind, e.message)]])
  eq(code, 0, out)
  truthy(out:find("^connect\t") and not out:find("proxy", 1, true), out)
end)
