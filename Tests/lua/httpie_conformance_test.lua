-- HTTPie conformance: the same command lines through HTTPie (`http`, Debian's package) and
-- `lunet`, against the local httpbin's /anything, which echoes what it received. Each must reach
-- httpbin with the same method, URL, query, headers that matter and body. What differs on
-- purpose is left out here and listed in docs/cli.md:
--   User-Agent, Accept-Encoding and Connection (each client's own); Content-Length and the
--   boundary of multipart bodies (random per request); the spacing inside raw JSON (`:=`)
--   values, so JSON bodies are compared as JSON.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq = h.eq
local LUNET = h.lunet()
local BIN = h.env("LUNET_HTTPBIN")
local PORT = BIN:match(":(%d+)$")

local dir = h.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
h.cleanup(after_all, function() os.execute("rm -rf " .. dir) end)
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(text)
  f:close()
end
write("note.txt", "a note\nover two lines\n")
write("data.json", '{"from": "file", "n": [1, 2]}')
write("body.json", '{"whole": "body"}')
write("pic.png", "\137PNG\r\n\26\nnot really a png")

local IGNORED = { ["user-agent"] = true, ["accept-encoding"] = true, connection = true, ["content-length"] = true }

-- What httpbin received, reduced to what must agree.
local function received(out, label)
  local ok, j = pcall(json.decode, out)
  if not ok or type(j) ~= "table" then error(label .. " did not get httpbin's echo:\n" .. out, 0) end
  local headers = {}
  for k, v in pairs(j.headers or {}) do
    if not IGNORED[k:lower()] then
      if k:lower() == "content-type" then v = v:gsub("; boundary=.*$", "") end
      headers[k:lower()] = v
    end
  end
  local body = j.json ~= json.null and j.json or nil
  return {
    method = j.method, url = j.url, args = j.args, headers = headers, form = j.form, files = j.files,
    json = body, data = (body == nil and (j.data or "") or nil),
  }
end

local function run(cmd)
  local p = io.popen("cd " .. dir .. " && " .. cmd .. " 2>&1")
  local out = p:read("a")
  p:close()
  return out
end

-- { description, arguments (as typed after the program name), stdin (optional) }
local CASES = {
  { "GET", "GET {B}/anything" },
  { "URL only", "{B}/anything" },
  { "query items", "{B}/anything a==1 b==two" },
  { "repeated query", "{B}/anything a==1 a==2 b==3" },
  { "query in the URL and items", "'{B}/anything?z=0' a==1" },
  { "query with reserved characters", "{B}/anything 'q==a&b=c' 'r==1/2'" },
  { "header", "{B}/anything X-Test:one" },
  { "two headers", "{B}/anything X-A:1 X-B:2" },
  { "header with a colon in its value", "{B}/anything Referer:http://example.org/x" },
  { "header with an empty value", "{B}/anything 'X-Empty;'" },
  { "Accept replaced", "{B}/anything Accept:text/plain" },
  { "Cookie header", "{B}/anything 'Cookie:a=1; b=2'" },
  { "JSON string field", "{B}/anything name=lunet" },
  { "JSON fields", "{B}/anything a=1 b=two" },
  { "JSON number", "{B}/anything n:=42" },
  { "JSON list", "{B}/anything 'l:=[1, 2, 3]'" },
  { "JSON object", "{B}/anything 'o:={\"x\": {\"y\": true}}'" },
  { "JSON booleans and null", "{B}/anything t:=true f:=false z:=null" },
  { "nested JSON objects and arrays", "{B}/anything 'p[name]=lunet' 'p[about][stars]:=5' 'p[apps][]=cli' 'p[apps][]=repl' 'x[2]=c'" },
  { "nested JSON: a top-level array", "{B}/anything '[]:=1' '[]=a' '[3]=z'" },
  { "nested JSON: escaped brackets and a repeated key", "{B}/anything 'e\\[s\\]=1' a=1 a=2" },
  { "JSON unicode", "{B}/anything 'name=ünïcødé ✓'" },
  { "JSON field from a file", "{B}/anything note=@note.txt" },
  { "raw JSON from a file", "{B}/anything data:=@data.json" },
  { "--json without data", "--json {B}/anything" },
  { "--json with data", "--json POST {B}/anything a=1" },
  { "PUT with JSON", "PUT {B}/anything a=1" },
  { "PATCH with JSON", "PATCH {B}/anything a=1" },
  { "DELETE", "DELETE {B}/anything" },
  { "lower-case method", "post {B}/anything a=1" },
  { "--form", "--form {B}/anything a=1 b=two" },
  { "-f repeated field", "-f {B}/anything a=1 a=2" },
  { "--form without data", "--form POST {B}/anything" },
  { "--form empty value", "--form {B}/anything a= b=x" },
  { "--form field from a file", "--form {B}/anything note=@note.txt" },
  { "--form reserved characters", "--form {B}/anything 'q=a&b=c d'" },
  { "file upload", "--form {B}/anything doc@note.txt" },
  { "field and file", "-f {B}/anything title=x doc@note.txt" },
  { "file upload with a type", "-f {B}/anything 'pic@pic.png;type=image/png'" },
  { "--multipart", "--multipart {B}/anything a=1 b=2" },
  { "@file as the body", "POST {B}/anything @body.json" },
  { "--raw body", "--raw 'raw text' POST {B}/anything" },
  { "stdin body", "POST {B}/anything Content-Type:text/plain", "piped text" },
  { "escaped separator in a name", "{B}/anything 'a\\=b=c'" },
  { ":PORT shorthand", ":{P}/anything a==1" },
  { "no scheme", "127.0.0.1:{P}/anything" },
  { "basic auth", "-a user:secret {B}/anything" },
  { "bearer auth", "-A bearer -a tok3n {B}/anything" },
  { "--follow", "--follow '{B}/redirect-to?url=/anything%3Fr%3D1'" },
  { "header items with JSON data", "{B}/anything X-A:1 a=1 b==2" },
}

for _, case in ipairs(CASES) do
  local name, line, stdin = case[1], case[2], case[3]
  line = line:gsub("{B}", BIN):gsub("{P}", PORT)
  test("conformance: " .. name .. ": http " .. line, function()
    local input = stdin and ("printf %s " .. string.format("%q", stdin) .. " | ") or ""
    local ignore = stdin and "" or "--ignore-stdin "
    local theirs = received(run(input .. "http " .. ignore .. line .. (stdin and "" or " </dev/null")), "http")
    local ours = received(run(input .. LUNET .. " " .. line .. (stdin and "" or " </dev/null")), "lunet")
    eq(ours, theirs, "what httpbin received (lunet, then http)")
  end)
end

-- Sessions: a header, auth and a cookie set in one run come back in the next.
test("conformance: --session keeps headers, auth and cookies between runs", function()
  local env_http = "HTTPIE_CONFIG_DIR=" .. dir .. "/httpie "
  local env_lunet = "XDG_CONFIG_HOME=" .. dir .. "/xdg "
  local first = " --session=conf -a user:pw '" .. BIN .. "/cookies/set?sc=1' X-Session:kept </dev/null"
  local second = " --session=conf " .. BIN .. "/anything </dev/null"
  run(env_http .. "http --ignore-stdin" .. first)
  run(env_lunet .. LUNET .. first)
  local theirs = received(run(env_http .. "http --ignore-stdin" .. second), "http")
  local ours = received(run(env_lunet .. LUNET .. second), "lunet")
  eq(ours, theirs, "the second run's request (lunet, then http)")
  eq(ours.headers["x-session"], "kept", "the header came back")
  eq(ours.headers.cookie, "sc=1", "the cookie came back")
end)

if h.done then h.done() end
