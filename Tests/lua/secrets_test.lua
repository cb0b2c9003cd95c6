-- One rule for what is secret (lunet.secrets), used by the prompt's history, HAR recordings and
-- r:curl(): credential-like names by what they contain, URL passwords, JSON fields.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local secrets = require "lunet.secrets"

test("names: credentials by what they contain, not a short list", function()
  for _, name in ipairs({ "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "api_key", "apikey",
                          "access_token", "refresh-token", "client_secret", "db_password", "passphrase", "X-Auth-Token",
                          "session_id", "aws_secret_access_key", "X-Amz-Security-Token", "pwd", "key" }) do
    truthy(secrets.is_secret_name(name), name .. " is a secret's name")
  end
  for _, name in ipairs({ "Accept", "Content-Type", "page", "user", "keyboard", "monkey", "title", "X-Request-Id" }) do
    truthy(not secrets.is_secret_name(name), name .. " is not")
  end
end)

test("prompt lines: what holds a secret", function()
  for _, line in ipairs({ 'http.session{ auth = { basic = { "alice", "pw" } } }', 'u = "https://a:b@host/"',
                          'h = { ["X-Api-Key"] = "k" }', 'http.get(u .. "?access_key=1")', 'x.password = "p"',
                          's.headers.Authorization = "Bearer abc"', 'c = { Cookie = "a=b" }' }) do
    truthy(secrets.line_has_secret(line), line)
  end
  for _, line in ipairs({ 'r = http.get("http://127.0.0.1:8080/get")', 'print(r.status)', 'x = { page = 2 }' }) do
    truthy(not secrets.line_has_secret(line), line)
  end
end)

test("prompt lines: tokens of well-known shapes, whatever they are called (issue 33, item 16)", function()
  local jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLWJ5dGVz"
  for _, line in ipairs({ 't = "ghp_' .. string.rep("a1B2", 9) .. '"', 'x = "github_pat_' .. string.rep("Ab_1", 10) .. '"',
                          'slack = "xoxb-1234567890-abcdefghij"', 'k = "sk-proj-' .. string.rep("x9", 12) .. '"',
                          'k2 = "sk-ant-api03-' .. string.rep("Q", 30) .. '"', 'st = "sk_live_' .. string.rep("4e", 12) .. '"',
                          'id = "AKIAIOSFODNN7EXAMPLE"', 'g = "AIza' .. string.rep("S", 35) .. '"',
                          'j = "' .. jwt .. '"', 'glab = "glpat-' .. string.rep("z", 20) .. '"',
                          'http.get(u, { headers = { X = "' .. jwt .. '" } })' }) do
    truthy(secrets.line_has_secret(line), line)
  end
  for _, line in ipairs({ 'print("sk-1 is a size")', 'ask = "task-runner"', 'x = "AKIA"', 'msg = "eyJ alone"',
                          'skip = "sk-short"', 'r = http.get(os.getenv("LUNET_HTTPBIN") .. "/get")' }) do
    truthy(not secrets.line_has_secret(line), line)
  end
end)

local function entry(doc, i) return doc.log.entries[i] end
local function header(list, name)
  for _, hd in ipairs(list) do if hd.name:lower() == name:lower() then return hd.value end end
end

test("HAR: the Cookie header the jar sent is recorded (masked), and new credential names are masked", function()
  local path = h.tmpname()
  local s = http.session{ cookies = true }
  s:get(BIN .. "/cookies/set?sid=jar-cookie-value")          -- the jar now holds sid
  local rec = http.record(path)
  s:get(BIN .. "/get?access_token=tok-q&apikey=key-q&page=2", { headers = { ["X-Api-Key"] = "key-h" } })
  s:post(BIN .. "/post", { json = { user = "me", password = "pw-json", nested = { client_secret = "cs" } } })
  rec.stop()
  local hf = io.open(path)
  local doc = json.decode(hf:read("a"))
  hf:close()
  local e1, e2 = entry(doc, 1), entry(doc, 2)
  eq(header(e1.request.headers, "Cookie"), "***", "the jar's Cookie header, masked")
  eq(header(e1.request.headers, "X-Api-Key"), "***", "X-Api-Key masked")
  eq(e1.request.url, BIN .. "/get?access_token=***&apikey=***&page=2", "query secrets masked")
  local body = json.decode(e2.request.postData.text)
  eq({ body.user, body.password, body.nested.client_secret }, { "me", "***", "***" }, "JSON body secrets masked")
  -- (httpbin echoes what it got in its response bodies, which a HAR keeps as received.)
  local requests_only = json.encode({ e1.request, e2.request })
  for _, secret in ipairs({ "jar-cookie-value", "tok-q", "key-q", "key-h", "pw-json" }) do
    truthy(not requests_only:find(secret, 1, true), secret .. " is not in the recorded requests")
  end
  -- Unmasked on request, the real Cookie header is there.
  local raw = http.record(path .. ".raw", { mask_secrets = false })
  s:get(BIN .. "/get")
  raw.stop()
  local g = io.open(path .. ".raw")
  local doc2 = json.decode(g:read("a"))
  g:close()
  eq(header(doc2.log.entries[1].request.headers, "Cookie"), "sid=jar-cookie-value", "mask_secrets = false keeps it")
  os.remove(path)
  os.remove(path .. ".raw")
end)

test("r:curl() masks credentials by default; { reveal = true } shows them", function()
  local r = http.session{ auth = { bearer = "bearer-tok" } }:post("http://u:url-pw@" .. BIN:gsub("^http://", "") .. "/post",
    { form = { user = "me", password = "form-pw" } })
  local line = r:curl()
  for _, secret in ipairs({ "bearer-tok", "url-pw", "form-pw" }) do
    truthy(not line:find(secret, 1, true), secret .. " masked in: " .. line)
  end
  truthy(line:find("user=me", 1, true), "the rest stays: " .. line)
  local shown = r:curl{ reveal = true }
  for _, secret in ipairs({ "bearer-tok", "url-pw", "form-pw" }) do
    truthy(shown:find(secret, 1, true), secret .. " shown with reveal: " .. shown)
  end
  local b = http.session{ auth = { basic = { "alice", "basic-pw" } } }:get(BIN .. "/get")
  truthy(not b:curl():find("YWxpY2U6YmFzaWMtcHc=", 1, true), "basic credentials masked: " .. b:curl())
end)

test("an error's text masks credentials in its URL; err.url keeps them for code", function()
  local u = "http://user:url-pw@127.0.0.1:1/x?api_key=key-s3cr3t&q=1"
  local ok, err = pcall(http.get, u)
  truthy(not ok and err.kind == "connect", "a refused connection: " .. tostring(err))
  local text = tostring(err)
  for _, secret in ipairs({ "url-pw", "key-s3cr3t" }) do
    truthy(not text:find(secret, 1, true), secret .. " masked in: " .. text)
  end
  truthy(text:find("q=1", 1, true), "the rest of the URL stays: " .. text)
  eq(err.url, u, "the field is the URL as requested")
  local _, bad = pcall(http.get, "http://h/ x?token=tok-s3cr3t")
  truthy(not tostring(bad):find("tok-s3cr3t", 1, true), "in the message too: " .. tostring(bad))
end)

if h.done then h.done() end

-- Issue 46, item 15: a secret query parameter (an API key in the query, a declared name) is
-- masked where a response is shown: tostring(r), the prompt's view of it and of r.url.
test("tostring(r) and the prompt's view mask secret query parameters; r.url keeps them", function()
  secrets.declare_name("zz_gateway")
  local r = http.get(BIN .. "/get?api_key=k-1&zz_gateway=g-2&page=3")
  eq(r.json.args.api_key, "k-1", "sent whole")
  truthy(r.url:find("api_key=k-1", 1, true), "r.url is the URL as sent")
  local pretty = require "lunet.pretty"
  -- (the response's first line: its body is what the server sent, shown as it is)
  for what, text in pairs({ tostring = tostring(r), response = pretty.value(r, {}):match("^[^\n]*"), url = pretty.value(r.url, {}) }) do
    truthy(not text:find("k-1", 1, true) and not text:find("g-2", 1, true), what .. " masks them: " .. text)
    truthy(text:find("page=3", 1, true), what .. " keeps the rest: " .. text)
  end
end)
