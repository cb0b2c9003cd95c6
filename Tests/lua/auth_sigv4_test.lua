-- auth = { aws_sigv4 = { provider =, key =, secret =, token = } }: lunet signs each request
-- (AWSSigV4.swift) and Tests/servers/auth_server.py checks the signature as AWS does, from the
-- request it received (auth_sigv4_reference_test.lua checks it with botocore too). The verifier itself is first checked against AWS's published test suite.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy, fails = h.eq, h.truthy, h.fails

local server, pid, port = h.start_server("auth_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local SERVERS = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../servers/"

local KEY, SECRET = "AKIDLUNET", "lunet/test+secret"
local function signed(service, extra)
  local a = { provider = "aws:amz:us-east-1:" .. service, key = KEY, secret = SECRET }
  for k, v in pairs(extra or {}) do a[k] = v end
  return http.session{ base_url = BASE, auth = { aws_sigv4 = a } }
end
local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function verdict(r) return { r.status, r.json.reason } end

test("the verifier reproduces AWS's SigV4 test-suite signatures (get-vanilla, post-vanilla, query order)", function()
  -- AWS Signature Version 4 test suite: AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY,
  -- 20150830T123600Z, us-east-1, service "service"; the signatures of its .authz files.
  local code, out = h.run("python3 " .. SERVERS .. "auth_server.py --vector")
  eq(code, 0, "the vector run")
  eq(json.decode(out), {
    ["get-vanilla"] = "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    ["post-vanilla"] = "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b",
    ["get-vanilla-query-order-key-case"] = "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
  }, "the published signatures")
end)

test("a signed GET passes the verifier, again on the same handle; a wrong secret does not", function()
  local s = signed("service")
  local r = s:get("/things/1")
  eq(verdict(r), { 200, nil }, "verified")
  eq(r.json.key, KEY, "the access key")
  truthy(r.json.signed_headers[1] == "host", "host is signed: " .. json.encode(r.json.signed_headers))
  eq(verdict(s:get("/things/1")), { 200, nil }, "a second request, signed anew")
  local wrong = http.session{ auth = { aws_sigv4 = { provider = "aws:amz:us-east-1:service", key = KEY, secret = "nope" } } }
  eq(verdict(wrong:get(BASE .. "/things/1")), { 403, "signature mismatch" }, "the verifier refuses it")
end)

test("the query goes as written (what --curl and r:curl() print), signed in its canonical form", function()
  local r = signed("service"):get("/q?b=2&a=x%20y&c=%7e&flag&a=1")
  eq(verdict(r), { 200, nil }, "verified")
  eq(r.json.received.query, "b=2&a=x%20y&c=%7e&flag&a=1", "as written")
end)

test("bodies: JSON and form in memory, a streamed upload, S3's payload hash field", function()
  local s = signed("service")
  eq(verdict(s:post("/items", { json = { name = "x" } })), { 200, nil }, "JSON POST")
  eq(verdict(s:put("/items/1", { form = { a = "1" } })), { 200, nil }, "form PUT")
  local path = h.temp_file("uploaded bytes\n")
  local r = http.upload(BASE .. "/bucket/file", path, { method = "PUT", session = s })
  eq(verdict(r), { 200, nil }, "a file upload (signed with the file's hash)")
  eq(r.json.received.body, "uploaded bytes\n", "the file arrived")
  local s3 = signed("s3")
  r = s3:get("/bucket/a%20b.txt")
  eq(verdict(r), { 200, nil }, "S3 GET")
  truthy(json.encode(r.json.signed_headers):find("x-amz-content-sha256", 1, true), "S3 gets the payload hash, signed")
  eq(verdict(s3:put("/bucket/k", { body = "data" })), { 200, nil }, "S3 PUT")
  r = http.upload(BASE .. "/bucket/file", path, { method = "PUT", session = s3 })
  eq(verdict(r), { 200, nil }, "S3 upload")
  os.remove(path)
end)

test("temporary credentials: the session token goes as X-Amz-Security-Token, signed", function()
  local creds = { provider = "aws:amz:us-east-1:service", key = "ASIALUNET", secret = "lunet-temporary-secret" }
  local s = http.session{ auth = { aws_sigv4 = creds } }
  eq(verdict(s:get(BASE .. "/t")), { 403, "temporary credentials need their signed session token" }, "without it")
  creds.token = "lunet-session-token"
  s = http.session{ auth = { aws_sigv4 = creds } }
  local r = s:get(BASE .. "/t")
  eq(verdict(r), { 200, nil }, "with it")
  local line = r:curl()
  truthy(not line:find("lunet-session-token", 1, true) and line:find("X-Amz-Security-Token: ***", 1, true), "r:curl() masks it: " .. line)
  truthy(not line:find("Signature=", 1, true), "and the signature: " .. line)
end)

test("credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN", function()
  local code, out = h.run("AWS_ACCESS_KEY_ID=ASIALUNET AWS_SECRET_ACCESS_KEY=lunet-temporary-secret AWS_SESSION_TOKEN=lunet-session-token "
    .. h.lunet() .. " -e " .. quote("print(http.session{ auth = { aws_sigv4 = { provider = 'aws:amz:us-east-1:service' } } }:get('"
    .. BASE .. "/env').status)"))
  eq({ code, out }, { 0, "200\n" }, "signed with the environment's keys and token")
  local e = fails("argument", function()
    http.session{ auth = { aws_sigv4 = { provider = "aws:amz:us-east-1:service", key = KEY } } }
  end, "a key without its secret")
  truthy(tostring(e):find("AWS_SECRET_ACCESS_KEY", 1, true), tostring(e))
  e = fails("argument", function() http.session{ auth = { aws_sigv4 = { provider = "us-east-1", key = KEY, secret = SECRET } } } end, "provider")
  truthy(tostring(e):find("aws:amz:us-east-1:s3", 1, true), tostring(e))
end)

test("a request's own X-Amz-Date is the date it is signed with", function()
  local r = signed("service"):get("/dated", { headers = { ["X-Amz-Date"] = "20150830T123600Z" } })
  truthy(r.json.amz_date[1] == "20150830T123600Z", "the field as given: " .. json.encode(r.json.amz_date))
  eq(r.json.credential_date, "20150830", "the credential scope's date is the field's")
end)

h.done()
