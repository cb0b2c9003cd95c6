-- Issue 33, item 15: SigV4 for every service as AWS computes it, checked by botocore (AWS's own
-- Python client) on each request received: paths with @ : + * ! ' ( ) $ & = , ; and //, dot
-- segments, queries with reserved bytes, bodies, temporary credentials, S3 and other services.
-- Server: Tests/servers/sigv4_reference_server.py, run by the tests' virtual environment (scripts/venv).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy

local KEY, SECRET = "AKIDLUNET", "lunet/test+secret"
local server, pid, port = h.start_venv_server("sigv4_reference_server.py", KEY, SECRET)
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local BASE = "http://127.0.0.1:" .. port

local function signed(service, token)
  return http.session{ base_url = BASE, auth = { aws_sigv4 = { provider = "aws:amz:us-east-1:" .. service, key = KEY, secret = SECRET, token = token } } }
end

local function agrees(r, what)
  eq(r.status, 200, what)
  local j = r.json
  truthy(j.ok, what .. ": botocore computes " .. tostring(j.expected) .. ", lunet sent " .. tostring(j.got) ..
    (j.error and (" (" .. j.error .. ")") or "") .. "\ncanonical request (botocore):\n" .. tostring(j.canonical_request))
end

local PATHS = {
  "/plain/path", "/a@b", "/a:b", "/a+b", "/a*b", "/a!b", "/a'b", "/a(b)", "/a$b", "/a&b", "/a=b", "/a,b", "/a;b",
  "/all@:+*!'()$&=,;", "/double//slash", "//lead", "/trail/", "/dots/./and/../x", "/space%20and%2Fslash", "/utf8-%C3%A9",
  "/tilde~and-_.", "/",
}

test("every service but S3: each path, as botocore canonicalises it", function()
  for _, service in ipairs({ "execute-api", "service", "dynamodb" }) do
    local s = signed(service)
    for _, path in ipairs(PATHS) do agrees(s:get(BASE .. path), service .. " GET " .. path) end
  end
end)

-- Queries as botocore sends them (encoded: botocore signs a query as written, and never writes
-- a raw reserved byte). A raw one is signed in its decoded-and-encoded form, as AWS's documents
-- say (RequestIntegrityValuesTests checks that form).
test("queries with encoded reserved bytes, repeated and empty parameters, in any order", function()
  local s = signed("execute-api")
  for _, q in ipairs({ "?b=2&a=1", "?a=x%20y&a=x%2By", "?e=&d", "?k=%2F%3D%26", "?sp=a%20b%40c", "?Z=1&a=2&_=3" }) do
    agrees(s:get("/q" .. q), "query " .. q)
  end
end)

test("bodies: JSON, a file, an empty POST; temporary credentials", function()
  local s = signed("execute-api", "session-token-1")
  agrees(s:post("/items/a@b", { json = { name = "x", n = 1 } }), "JSON POST")
  agrees(s:post("/empty"), "empty POST")
  agrees(s:put("/raw", { body = string.rep("z", 70000), content_type = "application/octet-stream" }), "a 70 KB body")
  local file = h.temp_file("file contents\n")
  agrees(http.upload(BASE .. "/up:load", file, { session = s }), "an upload from a file")
  os.remove(file)
end)

test("S3: the path is sent as S3 signs it (encoded once, // kept), with X-Amz-Content-Sha256", function()
  local s = signed("s3")
  for _, path in ipairs({ "/bucket/key%20with%20space", "/bucket/a@b:c+d", "/bucket//double", "/bucket/%C3%A9" }) do
    agrees(s:get(BASE .. path), "s3 GET " .. path)
  end
  agrees(s:put("/bucket/object", { body = "hello" }), "s3 PUT")
end)

-- Issue 35: the curl line lunet prints replays. curl 7.88 signs the query as written, so the
-- line carries it in SigV4's canonical order; r:curl() and --curl are one exporter.
local function replay(line)
  local with_secret = line:gsub("%-u '" .. KEY .. ":%*%*%*'", "-u '" .. KEY .. ":" .. SECRET .. "'")
  truthy(with_secret ~= line, "the line has -u KEY:***: " .. line)
  local code, out = h.run(with_secret:gsub("^curl ", "curl -s ") .. " 2>&1")
  eq(code, 0, out)
  local ok, j = pcall(json.decode, out)
  truthy(ok and j.ok, "botocore agrees with curl's signature of the printed line: " .. out .. "\n" .. line)
end

test("--curl and r:curl() print a SigV4 request that curl replays, the query in canonical order", function()
  local status, line = h.run(h.lunet() .. " --curl -A aws-sigv4 --aws-sigv4 aws:amz:us-east-1:execute-api -a " ..
    KEY .. ":" .. "'" .. SECRET .. "' '" .. BASE .. "/q?b=2&a=1&c=x%20y'")
  eq(status, 0, line)
  line = line:gsub("\n$", "")
  truthy(line:find("/q?a=1&b=2&c=x%20y'", 1, true), "the query sorted: " .. line)
  truthy(line:find("--aws-sigv4 'aws:amz:us-east-1:execute-api'", 1, true) and not line:find(SECRET, 1, true), line)
  replay(line)
  local r = signed("execute-api"):get("/q?b=2&a=1")
  local from_response = r:curl()
  truthy(from_response:find("--aws-sigv4 'aws:amz:us-east-1:execute-api'", 1, true), "r:curl() has the signer: " .. from_response)
  truthy(not from_response:find("Authorization", 1, true), "and not lunet's signature: " .. from_response)
  replay(from_response)
end)

h.done()
