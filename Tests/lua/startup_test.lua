-- Start-up: libcurl is opened on first network use, and the modules behind the globals http,
-- json, url, net, xml and protobuf load when a script first names them.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")

-- Lua that prints whether libcurl is mapped into the running process.
local CURL_MAPPED = [[local function curl() for l in io.lines("/proc/self/maps") do if l:find("libcurl", 1, true) then return "mapped" end end return "not mapped" end]]

test("a script that sends nothing never maps libcurl", function()
  local code, out = h.run(LUNET .. " -e '" .. CURL_MAPPED .. " print(curl())'")
  eq({ code, out }, { 0, "not mapped\n" }, "status and libcurl")
end)

test("the first request opens libcurl and works, and so do the ones after it", function()
  -- No preload: this is the path where the request itself opens libcurl.
  local code, out = h.run("LUNET_NO_PRELOAD=1 " .. LUNET .. " -e '" .. CURL_MAPPED .. [[
    local before = curl()
    local a = http.get("]] .. HTTPBIN .. [[/get").status
    local b = http.get_async("]] .. HTTPBIN .. [[/get"):await().status
    print(before, a, b, curl())']])
  eq({ code, out }, { 0, "not mapped\t200\t200\tmapped\n" }, "status and output")
end)

test("a plain GET loads only the modules it runs through (not auth, cache, image, secrets)", function()
  local code, out = h.run(LUNET .. [[ -e 'http.get("]] .. HTTPBIN .. [[/get")
    local skipped = {}
    for _, m in ipairs({ "lunet.auth", "lunet.cache", "lunet.image", "lunet.secrets" }) do
      if package.loaded[m] == nil then skipped[#skipped + 1] = m end
    end
    print(table.concat(skipped, " "))
    http.session{ cache = http.cache{ dir = false }, auth = { bearer = "t" } }
    print(package.loaded["lunet.cache"] ~= nil, package.loaded["lunet.auth"] ~= nil)']])
  eq({ code, out }, { 0, "lunet.auth lunet.cache lunet.image lunet.secrets\ntrue\ttrue\n" }, "left unloaded until asked for")
end)

test("naming http starts opening libcurl before any request (the preload thread)", function()
  -- The chunk spells the name so that the command line does not name it (see the next test).
  local code, out = h.run(LUNET .. " -e '" .. CURL_MAPPED .. [[
    local before = curl()
    local _ = _G["ht" .. "tp"]
    for _ = 1, 500 do if curl() == "mapped" then break end task.sleep(0.01) end
    print(before, curl())']])
  eq({ code, out }, { 0, "not mapped\tmapped\n" }, "mapped with no request sent")
end)

test("a command line that will send starts opening libcurl before main (launch.c)", function()
  -- http appears only in a comment: nothing in the chunk loads it, so libcurl is mapped only
  -- because the arguments were read before main. Waiting for the preload makes it certain.
  local code, out = h.run(LUNET .. " -e '" .. CURL_MAPPED .. [[
    require("lunet.core").curl_preload_wait()
    print(curl(), package.loaded["lunet.http"] == nil) -- http']])
  eq({ code, out }, { 0, "mapped\ttrue\n" }, "mapped, with the http module not loaded")
  -- "https" inside a word, and a chunk without the name, start nothing.
  for _, chunk in ipairs({ [[local s = "https"]], [[local httpd = 1]], "" }) do
    code, out = h.run(LUNET .. " -e '" .. chunk .. "' -e '" .. CURL_MAPPED .. [[
      require("lunet.core").curl_preload_wait() print(curl())']])
    eq({ code, out }, { 0, "not mapped\n" }, "no preload for: " .. chunk)
  end
  -- The one-shot command line: a file named like a method is a script, and no preload starts.
  local dir = h.tmpname() os.remove(dir) os.execute("mkdir -p " .. dir)
  local f = assert(io.open(dir .. "/GET", "w"))
  f:write(CURL_MAPPED .. " require('lunet.core').curl_preload_wait() print(curl())\n") f:close()
  code, out = h.run("cd " .. dir .. " && " .. LUNET .. " GET")
  os.execute("rm -rf " .. dir)
  eq({ code, out }, { 0, "not mapped\n" }, "./GET runs as a script")
  -- A parse error after a preload started still leaves cleanly (the exit waits for the thread).
  for i = 1, 10 do
    code, out = h.run(LUNET .. " -e 'http.get(1)' --no-such-option 2>&1")
    truthy(code == 2 and out:find("unknown option '--no-such-option'", 1, true), "run " .. i .. ": " .. out)
  end
end)

test("a script that names http and leaves at once exits cleanly, by os.exit or by its end", function()
  -- The exit must wait for the preload thread: exit handlers running beside curl_global_init
  -- would crash now and then, so try it many times.
  for i = 1, 25 do
    local code, out = h.run(LUNET .. " -e 'local _ = http; os.exit(" .. (i % 3) .. ")' 2>&1")
    eq({ code, out }, { i % 3, "" }, "os.exit, run " .. i)
    code, out = h.run(LUNET .. " -e 'local _ = http.get' 2>&1")
    eq({ code, out }, { 0, "" }, "the script's end, run " .. i)
  end
end)

test("a process that sent a request leaves with its status and all it wrote (libcurl's exit handlers skipped)", function()
  -- After libcurl loads, the lunet program leaves through its own exit handler (curl_loader.c):
  -- stdio must be flushed and the status kept on every way out.
  local path, stdout = h.tmpname(), h.tmpname()
  local big = "io.write(string.rep(\"x\", 100000)) "
  local cases = {
    { "", 0 }, { "os.exit(3)", 3 }, { "os.exit(true)", 0 }, { "os.exit(false)", 1 },
    { "os.exit(4, true)", 4 }, { "error(\"boom\")", 1 },
  }
  for _, c in ipairs(cases) do
    local code = h.run("(" .. LUNET .. " -e 'local f = io.open(\"" .. path .. "\", \"w\") f:write(\"kept\") "
      .. "local r = http.get(\"" .. HTTPBIN .. "/get\") " .. big .. c[1] .. "' > " .. stdout .. " 2>/dev/null)")
    local f = io.open(path) local text = f:read("a") f:close()
    f = io.open(stdout) local written = #f:read("a") f:close()
    eq({ code, written, text }, { c[2], 100000, "kept" }, "ending with: " .. (c[1] == "" and "the chunk's end" or c[1]))
  end
  os.remove(path) os.remove(stdout)
  -- The libraries' exit-time work did not run: the loader reports each library's finaliser
  -- it calls (LD_DEBUG=files); a process that never loaded libcurl leaves the usual way.
  -- Under a sanitizer the process leaves normally (its leak check is an exit handler).
  local code, out = h.run("LD_DEBUG=files " .. LUNET .. " -e 'http.get(\"" .. HTTPBIN .. "/get\")' 2>&1 | grep -c \"calling fini\"")
  if h.sanitizer then
    truthy(tonumber(out) > 0, "finalisers under " .. h.sanitizer .. ": " .. out)
  else
    eq(out, "0\n", "no finaliser after a request")
  end
  code, out = h.run("LD_DEBUG=files " .. LUNET .. " -e 'print(1)' 2>&1 | grep -c \"calling fini: .*liblua\"")
  eq(out, "1\n", "liblua's finaliser without one")
end)

test("a missing libcurl is an error that names the library, not a crash", function()
  local env = "LUNET_LIBCURL=/nonexistent/libcurl-missing.so.4 "
  local code, out = h.run(env .. LUNET .. [[ -e 'local ok, e = pcall(http.get, "]] .. HTTPBIN .. [[/get") print(ok, e.kind, e.message)' 2>&1]])
  eq(code, 0, "the script goes on after the failed request: " .. out)
  truthy(out:find("^false\tio\t") and out:find("libcurl-missing.so.4", 1, true), "kind io, naming the library: " .. out)
  code, out = h.run(env .. LUNET .. [[ -e 'print(pcall(http.session, { cookies = true }))' 2>&1]])
  truthy(code == 0 and out:find("^false\t") and out:find("libcurl-missing.so.4", 1, true), "a cookie jar too: " .. out)
  code, out = h.run(env .. LUNET .. " -e 'print(1 + 1)'")
  eq({ code, out }, { 0, "2\n" }, "a script that sends nothing does not need libcurl at all")
  code, out = h.run(env .. LUNET .. " -e 'local _ = http; print(1 + 1)' 2>&1")
  eq({ code, out }, { 0, "2\n" }, "a preload that fails says nothing: only a request reports it")
end)

test("the module globals load on first use, and strict-mode code sees them as plain globals", function()
  local code, out = h.run(LUNET .. [[ -e 'print(package.loaded["lunet.http"] == nil, rawget(_G, "json") == nil, type(http.get), rawget(_G, "http") == http, http == require("lunet.http"))']])
  eq({ code, out }, { 0, "true\ttrue\tfunction\ttrue\ttrue\n" }, "not loaded at start; loaded and kept on first use")
  -- strict.lua's way: look at _G's metatable, make one, refuse undeclared names.
  code, out = h.run(LUNET .. [[ -e 'local mt = getmetatable(_G) or {} setmetatable(_G, mt) mt.__index = function(_, n) error("undeclared " .. n, 2) end print(type(json.encode), type(xml), type(protobuf), type(url), type(net), pcall(function() return nope end))' 2>&1]])
  truthy(code == 0 and out:find("^function\ttable\ttable\ttable\ttable\tfalse\t.*undeclared nope"), "strict mode after the globals: " .. out)
end)

if h.done then h.done() end

test("Lua C modules load inside lunet and find the Lua API (lua-cjson, LuaSocket)", function()
  -- A C module's lua_* calls resolve in liblua5.4, which this (debug) build loads globally; the
  -- release build has Lua inside and exports its API (release_binary_test.lua checks it there).
  local code, out = h.run(LUNET .. [[ -e 'print(require("cjson").encode({ 1, 2 }), type(require("socket").gettime()))']])
  eq({ code, out }, { 0, "[1,2]\tnumber\n" }, "status and output")
end)

test("after the first request gives the embedded Lua's pages back, later modules still load", function()
  local code, out = h.run(LUNET .. [[ -e 'local r = http.get("]] .. HTTPBIN .. [[/get")
    local har, pretty, queue = require("lunet.har"), require("lunet.pretty"), require("lunet.queue")
    print(r.status, type(har.now), type(pretty), type(queue))']])
  eq({ code, out }, { 0, "200\tfunction\ttable\ttable\n" }, "status and output")
end)
