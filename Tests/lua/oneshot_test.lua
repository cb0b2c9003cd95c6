-- The one-shot command line (`lunet [METHOD] URL [ITEM ...]`): request items, options and the
-- request they build (pure, lua/lunet/cli/*), then the binary end to end against httpbin.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end   -- some tests cd first
local BIN = h.env("LUNET_HTTPBIN")
local items = require "lunet.cli.items"
local args = require "lunet.cli.args"
local build = require "lunet.cli.build"
local render = require "lunet.cli.render"

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- Runs lunet with these arguments, standard input from /dev/null; exit status, stdout, stderr.
local function lunet(line, env)
  local err = os.tmpname()
  local p = io.popen((env or "") .. " " .. LUNET .. " " .. line .. " </dev/null 2>" .. err .. "; echo \"__exit=$?\"")
  local out = p:read("a")
  p:close()
  local code = tonumber(out:match("__exit=(%d+)%s*$"))
  local stderr = h.read_file(err)
  os.remove(err)
  return code, (out:gsub("__exit=%d+%s*$", "")), stderr
end

test("items: each separator, the longest at a position, escapes", function()
  local function kind(s) local it = assert(items.parse(s)) return { it.kind, it.name, it.value } end
  eq(kind("X-A:b c"), { "header", "X-A", "b c" }, "header")
  eq(kind("X-A:"), { "header", "X-A", "" }, "header to remove")
  eq(kind("X-A;"), { "empty_header", "X-A", "" }, "empty header")
  eq(kind("q==1"), { "query", "q", "1" }, "query")
  eq(kind("a=b"), { "data", "a", "b" }, "data")
  eq(kind("a:=[1]"), { "json", "a", "[1]" }, "raw JSON")
  eq(kind("a=@f.txt"), { "data_file", "a", "f.txt" }, "data from a file")
  eq(kind("a:=@f.json"), { "json_file", "a", "f.json" }, "JSON from a file")
  eq(kind("up@f.png"), { "file", "up", "f.png" }, "file upload")
  eq(kind("@body.xml"), { "body_file", "", "body.xml" }, "body file")
  eq(kind("a\\=b=c"), { "data", "a=b", "c" }, "escaped '=' in a name")
  eq(kind("Referer:http://x/?a=b"), { "header", "Referer", "http://x/?a=b" }, "first separator wins")
  eq(kind("email=a@b.c"), { "data", "email", "a@b.c" }, "'@' in a value")
  eq(assert(items.parse("f@a.bin;type=image/png")).content_type, "image/png", "file type")
end)

test("items: mistakes are named", function()
  local function err(s) return select(2, items.parse(s)) end
  truthy(err("justaword"):find("'justaword' is not a request item", 1, true), err("justaword"))
  truthy(err("=x"):find("no name", 1, true), err("=x"))
  truthy(err("Bad Name:x"):find("not a valid header name", 1, true), err("Bad Name:x"))
  truthy(err("f@"):find("names no file", 1, true), err("f@"))
end)

test("args: method guessed, URL shorthands, options anywhere, values attached or not", function()
  local p = assert(args.parse({ "--form", "post", ":3000/x", "a=1", "-v", "--timeout=3", "-o", "out" }))
  eq({ p.method, p.url, p.options.form, p.options.verbose, p.options.timeout, p.options.output },
     { "POST", "http://localhost:3000/x", true, true, "3", "out" }, "parsed")
  eq(args.parse({ "example.org" }).url, "http://example.org", "no scheme means http://")
  eq(args.parse({ ":/p" }).url, "http://localhost/p", ":/path")
  eq(args.parse({ "https://x.org", "a==1" }).method, nil, "no method: guessed later")
  eq(args.parse({ "-pHb", "x.org" }).options.print, "Hb", "-pHb")
  eq(args.parse({ "-vb", "x.org" }).options.body, true, "-vb: two flags")
end)

test("args: usage errors name the problem", function()
  eq({ args.parse({}) }, { nil, "no URL given (lunet [METHOD] URL [ITEM ...])" }, "nothing")
  truthy(select(2, args.parse({ "--timeout" })):find("needs a value", 1, true), "a value missing")
  truthy(select(2, args.parse({ "--nope", "x.org" })):find("unknown option '--nope'", 1, true), "unknown")
  truthy(select(2, args.parse({ "--json=1", "x.org" })):find("takes no value", 1, true), "a flag with a value")
end)

local function files(map) return function(path, size_only)
  local v = map[path]
  if not v then return nil, "No such file or directory" end
  return size_only and #v or v
end end

test("build: JSON (HTTPie's bytes), form, multipart, query, method defaults", function()
  local function req(argv, fs) return assert(build.request(assert(args.parse(argv)), files(fs or {}))) end
  local j = req({ "x.org", "a=1", "n:=2", "l:=[1, 2]", "f=@v.txt" }, { ["v.txt"] = "file text" })
  eq({ j.method, j.body, j.content_type, j.accept },
     { "POST", '{"a": "1", "n": 2, "l": [1, 2], "f": "file text"}', "application/json", "application/json, */*;q=0.5" }, "JSON")
  local f = req({ "--form", "x.org", "a=1 2", "b=&" })
  eq({ f.body, f.content_type }, { "a=1%202&b=%26", "application/x-www-form-urlencoded; charset=utf-8" }, "form")
  local m = req({ "--form", "x.org", "a=1", "up@p.png" }, { ["p.png"] = "PNG" })
  eq(m.multipart, { { name = "a", data = "1" }, { name = "up", file = "p.png", content_type = "image/png" } }, "multipart")
  local g = req({ "x.org/p?z=0", "a==1", "b==x y", "H:v" })
  eq({ g.method, g.url, g.body, g.headers }, { "GET", "http://x.org/p?z=0&a=1&b=x%20y", nil, { { "H", "v" } } }, "query and header")
  eq(req({ "PUT", "x.org", "@b.xml" }, { ["b.xml"] = "<a/>" }).content_type, "application/xml", "@file's type")
  eq(req({ "x.org" }, {}, nil).method, "GET", "no data: GET")
end)

test("build: what cannot be sent is refused with the item named", function()
  local function err(argv, fs, stdin) return select(2, build.request(assert(args.parse(argv)), files(fs or {}), stdin)) end
  truthy(err({ "x.org", "a:=nope" }):find("'a:=nope': not JSON", 1, true), "bad JSON")
  truthy(err({ "x.org", "up@p.png" }, { ["p.png"] = "" }):find("need --form", 1, true), "a file without --form")
  truthy(err({ "--form", "x.org", "a:=1" }):find("need --json", 1, true), "raw JSON in a form")
  truthy(err({ "x.org", "a=@missing" }):find("'a=@missing': No such file", 1, true), "a missing file")
  truthy(err({ "x.org", "a=1" }, {}, "stdin body"):find("one way", 1, true), "two bodies")
end)

test("render: JSON indented in order with numbers as written; binary not dumped", function()
  eq(render.indent_json('{"b":1.50,"a":[1,{"c":"x\\"}"}],"e":{},"f":[]}'),
     '{\n    "b": 1.50,\n    "a": [\n        1,\n        {\n            "c": "x\\"}"\n        }\n    ],\n    "e": {},\n    "f": []\n}', "indented")
  truthy(render.body("\0\1\2", "image/png", {}):find("binary data not shown", 1, true), "binary")
  eq(render.body("plain", "text/plain", { format = true }), "plain", "text as it is")
end)

test("GET with query and headers: httpbin receives them; redirected output is the body byte for byte", function()
  local code, out = lunet(q(BIN .. "/get") .. " a==1 b=='x y' X-Test:one User-Agent:tool/1")
  eq(code, 0, "exit status")
  local j = json.decode(out)
  eq({ j.args.a, j.args.b, j.headers["X-Test"], j.headers["User-Agent"] }, { "1", "x y", "one", "tool/1" }, "received")
  local r = http.get(BIN .. "/get?a=1&b=x%20y", { headers = { ["X-Test"] = "one", ["User-Agent"] = "tool/1" } })
  eq(out, r.body, "the same bytes as the body")
end)

test("POST data: JSON by default, --form, uploads; the method follows the data", function()
  local code, out = lunet(q(BIN .. "/anything") .. " name=lunet n:=3 ok:=true")
  eq(code, 0, "exit")
  local j = json.decode(out)
  eq({ j.method, j.json.name, j.json.n, j.json.ok, j.headers["Content-Type"] }, { "POST", "lunet", 3, true, "application/json" }, "JSON")
  code, out = lunet("--form " .. q(BIN .. "/anything") .. " a=1 b=2")
  j = json.decode(out)
  eq({ j.method, j.form.a, j.form.b }, { "POST", "1", "2" }, "form")
  local path = os.tmpname()
  write_file(path, "uploaded bytes\n")
  code, out = lunet("-f PUT " .. q(BIN .. "/anything") .. " title=x doc@" .. path)
  j = json.decode(out)
  eq({ j.method, j.form.title, j.files.doc }, { "PUT", "x", "uploaded bytes\n" }, "multipart")
  os.remove(path)
end)

test("standard input as the body when it is a pipe; --raw", function()
  local code, out = h.run("printf 'piped body' | " .. LUNET .. " " .. q(BIN .. "/anything") .. " Content-Type:text/plain")
  local j = json.decode(out)
  eq({ code, j.method, j.data }, { 0, "POST", "piped body" }, "piped")
  code, out = lunet("--raw 'raw body' PATCH " .. q(BIN .. "/anything"))
  j = json.decode(out)
  eq({ code, j.method, j.data }, { 0, "PATCH", "raw body" }, "raw")
end)

test("--print, -v, -h, -b and --offline", function()
  local code, out = lunet("-v " .. q(BIN .. "/anything") .. " a=1")
  eq(code, 0, "exit")
  truthy(out:find("^POST /anything HTTP/1.1\n"), "the request line first:\n" .. out)
  truthy(out:find('\n\n{"a": "1"}\n\nHTTP/1.1 200 OK\n', 1, true), "request body then response head:\n" .. out)
  code, out = lunet("-h " .. q(BIN .. "/status/204"))
  truthy(out:find("^HTTP/1.1 204 NO CONTENT\n") and not out:find("{"), "-h: the head only:\n" .. out)
  code, out = lunet("--offline PUT example.invalid/x a=1 X-A:b")
  eq(code, 0, "offline sends nothing (the host does not exist)")
  truthy(out:find("^PUT /x HTTP/1.1\nHost: example.invalid\n"), out)
  truthy(out:find('\n\n{"a": "1"}\n$'), out)
  code, out = lunet("--print=m " .. q(BIN .. "/get"))
  truthy(out:find("^Elapsed time: %d"), out)
end)

test("--check-status: 3, 4, 5 by status class, 0 without it; 2 for a timeout; 6 for too many redirects", function()
  eq(lunet("--check-status " .. q(BIN .. "/status/404")), 4, "404")
  eq(lunet("--check-status " .. q(BIN .. "/status/503")), 5, "503")
  eq(lunet("--check-status " .. q(BIN .. "/redirect/1")), 3, "302 not followed")
  eq(lunet("--check-status --follow " .. q(BIN .. "/redirect/1")), 0, "302 followed")
  eq(lunet(q(BIN .. "/status/500")), 0, "500 without --check-status")
  local code, _, err = lunet("--timeout 0.5 " .. q(BIN .. "/delay/3"))
  eq(code, 2, "timeout")
  truthy(err:find("timeout", 1, true), err)
  eq(lunet("--follow --max-redirects 2 " .. q(BIN .. "/redirect/5")), 6, "too many redirects")
end)

test("-o FILE writes the body; -d downloads with the engine and -c resumes", function()
  local path = os.tmpname()
  local code = lunet("-o " .. path .. " " .. q(BIN .. "/bytes/3000?seed=1"))
  eq(code, 0, "exit")
  eq(#h.read_file(path), 3000, "the body in the file")
  os.remove(path)
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local NGINX = h.env("LUNET_NGINX")
  code = lunet("-d " .. q(NGINX .. "/big-1m.bin"), "cd " .. dir .. " &&")
  eq(code, 0, "download exit")
  eq(h.sha256sum(dir .. "/big-1m.bin"), h.sha256sum(h.env("LUNET_NGINX_WWW") .. "/big-1m.bin"), "byte-exact")
  code = lunet("-d " .. q(NGINX .. "/big-1m.bin"), "cd " .. dir .. " &&")
  truthy(io.open(dir .. "/big-1m.bin-1"), "a second download does not overwrite the first")
  os.execute("rm -rf " .. dir)
end)

test("usage errors exit 2 and name the mistake", function()
  local code, _, err = lunet("GET")
  eq(code, 2, "no URL")
  truthy(err:find("no URL given", 1, true), err)
  code, _, err = lunet("--jsno x.org")
  eq(code, 2, "unknown option")
  truthy(err:find("unknown option '--jsno'", 1, true), err)
  code, _, err = lunet(q(BIN .. "/get") .. " a:=nope")
  eq(code, 2, "bad item")
  truthy(err:find("not JSON", 1, true), err)
end)

test("a file that exists is a script, even if it is named like a method", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  write_file(dir .. "/GET", 'print("script ran", ...)')
  local code, out = lunet("GET x", "cd " .. dir .. " &&")
  eq({ code, out }, { 0, "script ran\tx\n" }, "the script")
  os.execute("rm -rf " .. dir)
end)

test("--auth basic and bearer; --auth-type digest is refused by nothing", function()
  eq(lunet("--check-status -a user:passwd " .. q(BIN .. "/basic-auth/user/passwd")), 0, "basic")
  eq(lunet("--check-status -A bearer -a tok " .. q(BIN .. "/bearer")), 0, "bearer")
  eq(lunet("--check-status -a user:wrong " .. q(BIN .. "/basic-auth/user/passwd")), 4, "wrong password")
end)

test("named sessions keep headers, auth and cookies between runs, 0600; read-only does not update", function()
  local cfg = os.tmpname()
  os.remove(cfg)
  local env = "XDG_CONFIG_HOME=" .. cfg
  eq(lunet("--session s1 -a user:passwd " .. q(BIN .. "/cookies/set?c1=v1") .. " X-Keep:kept", env), 0, "first run")
  local file = cfg .. "/lunet/sessions/s1.json"
  local _, mode = h.run("stat -c %a " .. file)
  eq(mode, "600\n", "the session file's mode")
  local code, out = lunet("--session s1 " .. q(BIN .. "/anything"), env)
  local j = json.decode(out)
  eq({ code, j.headers["X-Keep"], j.headers.Cookie, j.headers.Authorization },
     { 0, "kept", "c1=v1", "Basic dXNlcjpwYXNzd2Q=" }, "headers, cookie and auth came back")
  lunet("--session-read-only s1 " .. q(BIN .. "/cookies/set?c2=v2"), env)
  code, out = lunet("--session s1 " .. q(BIN .. "/cookies"), env)
  eq(json.decode(out).cookies, { c1 = "v1" }, "the read-only run changed nothing")
  -- the same file from Lua
  code, out = lunet("-e " .. q('local s = http.session{ name = "s1" } print(s:get("' .. BIN .. '/anything").json.headers["X-Keep"])'), env)
  eq({ code, out }, { 0, "kept\n" }, "http.session{ name = ... }")
  os.execute("rm -rf " .. cfg)
end)

test("--har records the exchange with secrets masked; --cache answers the second time from the cache", function()
  local har = os.tmpname()
  local code = lunet("--har " .. har .. " " .. q(BIN .. "/get") .. " 'Authorization:Bearer s3cr3t'")
  eq(code, 0, "exit")
  local j = json.decode(h.read_file(har))
  eq(#j.log.entries, 1, "one entry")
  for _, field in ipairs(j.log.entries[1].request.headers) do
    if field.name:lower() == "authorization" then truthy(not field.value:find("s3cr3t", 1, true), "the token is masked: " .. field.value) end
  end
  os.remove(har)
  local cache = os.tmpname()
  os.remove(cache)
  local url = q(BIN .. "/cache/60")
  lunet("--cache " .. url, "XDG_CACHE_HOME=" .. cache)
  local _, out = lunet("--cache --print=h " .. url, "XDG_CACHE_HOME=" .. cache)
  truthy(out:lower():find("\nage: %d"), "the second answer has an Age (from the cache):\n" .. out)
  os.execute("rm -rf " .. cache)
end)

if h.done then h.done() end
