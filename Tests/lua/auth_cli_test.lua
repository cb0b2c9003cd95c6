-- The one-shot command line's auth schemes (-A/--auth-type, -a/--auth, --aws-sigv4, -A oauth2
-- with a session file), against Tests/servers/auth_server.py; secrets masked in -v, --offline, --curl.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local server, pid, port = h.start_server("auth_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- Runs lunet with these arguments (stdin from /dev/null): exit status, stdout, stderr.
local function lunet(line, env)
  local err = h.tmpname()
  local p = io.popen((env or "") .. " " .. LUNET .. " " .. line .. " </dev/null 2>" .. err .. "; echo \"__exit=$?\"")
  local out = p:read("a")
  p:close()
  local stderr = h.read_file(err)
  os.remove(err)
  return tonumber(out:match("__exit=(%d+)%s*$")), (out:gsub("__exit=%d+%s*$", "")), stderr
end

test("-A api-key: NAME:KEY in a header, NAME==KEY in the query; masked in -v, --offline and --curl", function()
  local code, out = lunet("-b -A api-key -a X-Gateway:cli-key-1 " .. q(BASE .. "/echo"))
  eq({ code, json.decode(out).headers["x-gateway"] }, { 0, { "cli-key-1" } }, "the header reached the server")
  code, out = lunet("-b -A api-key -a gwq==cli-key-2 " .. q(BASE .. "/echo?a=1"))
  eq({ code, json.decode(out).query }, { 0, "a=1&gwq=cli-key-2" }, "the parameter reached the server")
  code, out = lunet("-v --pretty=none -A api-key -a X-Gateway:cli-key-1 " .. q(BASE .. "/echo"))
  truthy(out:find("\nX-Gateway: ***\n", 1, true), "-v shows the field masked:\n" .. out)
  truthy(not out:match("^(.-)\n\n"):find("cli-key-1", 1, true), "not the key, in the request head:\n" .. out)
  code, out = lunet("-v --pretty=none -A api-key -a gwq==cli-key-2 " .. q(BASE .. "/echo"))
  truthy(out:find("^GET /echo%?gwq=%*%*%* HTTP/1.1\n"), "-v masks the parameter:\n" .. out)
  code, out = lunet("--offline -A api-key -a X-Gateway:cli-key-1 " .. q(BASE .. "/echo"))
  truthy(out:find("X-Gateway: ***", 1, true) and not out:find("cli-key-1", 1, true), "--offline:\n" .. out)
  code, out = lunet("--curl -A api-key -a gwq==cli-key-2 " .. q(BASE .. "/echo"))
  truthy(out:find("gwq=***", 1, true) and not out:find("cli-key-2", 1, true), "--curl:\n" .. out)
  code, out = lunet("-v --pretty=none -A bearer -a tok-in-v " .. q(BASE .. "/echo"))
  truthy(out:find("\nAuthorization: ***\n", 1, true), "-v masks Authorization too:\n" .. out)
end)

test("--aws-sigv4 PROVIDER with -a KEY:SECRET, or the AWS_* variables", function()
  local code, out = lunet("--check-status -b --aws-sigv4 aws:amz:us-east-1:service -a 'AKIDLUNET:lunet/test+secret' " .. q(BASE .. "/cli?b=1&a=2"))
  eq({ code, json.decode(out).ok }, { 0, true }, "the verifier took it")
  code = lunet("--check-status -A aws-sigv4 --aws-sigv4 aws:amz:us-east-1:service " .. q(BASE .. "/cli"),
    "AWS_ACCESS_KEY_ID=AKIDLUNET AWS_SECRET_ACCESS_KEY='lunet/test+secret'")
  eq(code, 0, "keys from the environment")
  local _, _, err
  code, _, err = lunet("-A aws-sigv4 " .. q(BASE .. "/cli"))
  eq(code, 2, "no provider")
  truthy(err:find("--aws-sigv4 PROVIDER", 1, true), err)
  _, out = lunet("--curl --aws-sigv4 aws:amz:us-east-1:s3 -a AKIDLUNET:topsecret " .. q(BASE .. "/b/k"))
  truthy(out:find("--aws-sigv4 'aws:amz:us-east-1:s3' -u 'AKIDLUNET:***'", 1, true) and not out:find("topsecret", 1, true), out)
end)

test("-A ntlm and -A negotiate", function()
  local code, out = lunet("--check-status -b -A ntlm -a 'LUNET\\ntuser:ntpass' " .. q(BASE .. "/ntlm"))
  eq({ code, json.decode(out).user }, { 0, "ntuser" }, "NTLM")
  eq(lunet("--check-status -A ntlm -a 'LUNET\\ntuser:nope' " .. q(BASE .. "/ntlm")), 4, "a wrong password is a 401")
  eq(lunet("--check-status -A negotiate " .. q(BASE .. "/negotiate")), 4, "Negotiate without a ticket: the 401")
  local _, out2 = lunet("--curl -A ntlm -a 'u:pw-secret' " .. q(BASE .. "/ntlm"))
  truthy(out2:find("--ntlm -u 'u:***'", 1, true) and not out2:find("pw-secret", 1, true), out2)
end)

test("-A oauth2 takes the client settings from a session file; the token is not written to it", function()
  local path = h.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(json.encode({ lunet_session = 1, auth = { oauth2 = { token_url = BASE .. "/oauth/token", client_id = "cli",
    client_secret = "cli-secret" } } }))
  f:close()
  local code, out = lunet("-b -A oauth2 --session " .. q(path) .. " " .. q(BASE .. "/oauth/resource"))
  eq({ code, json.decode(out) }, { 0, { client = "cli", token_ok = true } }, "a token from the endpoint")
  local saved = h.read_file(path)
  truthy(saved:find("cli-secret", 1, true) and not saved:find("at-cli", 1, true), "settings kept, no token:\n" .. saved)
  local err
  code, _, err = lunet("-A oauth2 " .. q(BASE .. "/oauth/resource"))
  eq(code, 2, "no session")
  truthy(err:find("needs --session", 1, true), err)
  f = assert(io.open(path, "w"))
  f:write('{"lunet_session": 1}')
  f:close()
  code, _, err = lunet("-A oauth2 --session-read-only " .. q(path) .. " " .. q(BASE .. "/oauth/resource"))
  eq(code, 2, "a session without oauth2 settings")
  truthy(err:find("has no auth = { oauth2", 1, true), err)
  os.remove(path)
  code, _, err = lunet("-A kerberos -a x " .. q(BASE .. "/echo"))
  eq(code, 2, "an unknown type")
  truthy(err:find("aws-sigv4, api-key or oauth2", 1, true), err)
end)

h.done()
