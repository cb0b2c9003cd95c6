-- The command line, end to end: the built binary run as a user runs it.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy = h.test, h.eq, h.truthy
local LUNET = h.lunet()

local function script(text)
  local path = h.tmpname() .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

test("lunet script.lua a b: arg and ... as lua5.4 sets them", function()
  local s = script('print(arg[0]:match("[^/]*$"), arg[1], arg[2], #arg, select("#", ...), ...)')
  local code, out = h.run(LUNET .. " " .. s .. " a b")
  eq(code, 0, "exit status")
  eq(out, s:match("[^/]*$") .. "\ta\tb\t2\t2\ta\tb\n", "output")
  os.remove(s)
end)

test("lunet -e CODE runs the code", function()
  local code, out = h.run(LUNET .. [[ -e 'print(1 + 2)']])
  eq({ code, out }, { 0, "3\n" }, "status and output")
end)

test("lunet - reads the script from standard input", function()
  local code, out = h.run("printf 'print(\"from stdin\", ...)' | " .. LUNET .. " - x")
  eq({ code, out }, { 0, "from stdin\tx\n" }, "status and output")
end)

test("lunet's own modules load when first required, not at start-up", function()
  local code, out = h.run(LUNET .. [[ -e 'print(package.loaded["lunet.har"] == nil, rawget(package.preload, "lunet.har") == nil, type(require("lunet.har")), package.loaded["lunet.har"] ~= nil)']])
  eq({ code, out }, { 0, "true\ttrue\ttable\ttrue\n" }, "not loaded, not preloaded, then required on demand")
  code, out = h.run(LUNET .. [[ -e 'print(pcall(require, "lunet.no_such_module"))']])
  truthy(code == 0 and out:find("^false\t.*module 'lunet.no_such_module' not found"), "an unknown module is still an error: " .. out)
end)

test("a plain one-shot GET with its body redirected loads no auth, printer or secrets module", function()
  -- What `lunet GET URL > file` runs through: the line, the request, the response. The rest
  -- (auth options, --auth-type oauth2's check, the printer and its colours, masking) loads when
  -- a line asks for it.
  local url = h.env("LUNET_HTTPBIN") .. "/get"
  local code, out = h.run("(" .. LUNET .. [[ -e 'local status = require("lunet.cli.main").main({ "GET", "]] .. url .. [[" })
    local loaded = {}
    for _, m in ipairs({ "lunet.auth.cli", "lunet.secrets", "lunet.cli.render", "lunet.pretty" }) do
      if package.loaded[m] then loaded[#loaded + 1] = m end
    end
    io.stderr:write(status, " [", table.concat(loaded, " "), "]")' 2>&1 >/dev/null)]])
  eq({ code, out }, { 0, "0 []" }, "status and the modules loaded")
  -- Asking for headers loads the printer; naming auth loads the auth options.
  code, out = h.run("(" .. LUNET .. [[ -e 'require("lunet.cli.main").main({ "GET", "]] .. url .. [[", "-h", "--auth", "u:p" })
    io.stderr:write(tostring(package.loaded["lunet.cli.render"] ~= nil), " ", tostring(package.loaded["lunet.auth.cli"] ~= nil))' 2>&1 >/dev/null)]])
  eq({ code, out }, { 0, "true true" }, "loaded when asked for")
end)

test("scripts never load GNU readline: only the prompt on a terminal opens it", function()
  local code, out = h.run(LUNET .. [[ -e 'local n = 0 for l in io.lines("/proc/self/maps") do if l:find("libreadline", 1, true) or l:find("libtinfo", 1, true) then n = n + 1 end end print(n)']])
  eq({ code, out }, { 0, "0\n" }, "no libreadline or libtinfo mapping in a script's process")
end)

-- lua5.4 parity: the same command line through lua5.4 and lunet prints the same.
local function both(line, env)
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  local f = assert(io.open(dir .. "/mymod.lua", "w"))
  f:write('return { name = "mymod" }')
  f:close()
  f = assert(io.open(dir .. "/init.lua", "w"))
  f:write('from_init_file = 42')
  f:close()
  local prefix = "cd " .. dir .. " && env " .. (env or "") .. " "
  local c1, theirs = h.run(prefix .. "lua5.4 " .. line)
  local lunet = LUNET:find("^/") and LUNET or (os.getenv("PWD") .. "/" .. LUNET)
  local c2, ours = h.run(prefix .. lunet .. " " .. line)
  os.execute("rm -rf " .. dir)
  return { c1, theirs }, { c2, ours }
end

test("lua5.4 parity: -l mod, -l g=mod, -lmod, in order with -e", function()
  local theirs, ours = both([[-l mymod -l m2=mymod -e 'print(mymod.name, m2.name)' -lstring -e 'print(type(string))']])
  eq(ours, theirs, "lunet, then lua5.4")
  eq(ours, { 0, "mymod\tmymod\ntable\n" }, "what both print")
end)

test("lua5.4 parity: arg without a script holds the interpreter at 0 and its options after it", function()
  local line = [[-e 'local t = {} for i = -3, #arg do t[#t + 1] = tostring(arg[i]):gsub("^.*/", "") end print(table.concat(t, " "), select("#", ...))']]
  local theirs, ours = both(line)
  theirs[2] = theirs[2]:gsub("lua5%.4", "PROG", 1)
  ours[2] = ours[2]:gsub("lunet", "PROG", 1)
  eq(ours, theirs, "lunet, then lua5.4")
  theirs, ours = both([[-e 'print(arg[0]:gsub("^.*/", ""), #arg)' -]] .. " x y </dev/null")
  eq(ours, theirs, "with - as the script: arg[0] is -")
end)

test("lua5.4 parity: LUA_INIT and LUA_INIT_5_4 (a chunk or @file) run first; -E ignores them and LUA_PATH", function()
  local theirs, ours = both([[-e 'print(x)']], "LUA_INIT='x = 1'")
  eq(ours, theirs, "LUA_INIT")
  theirs, ours = both([[-e 'print(x)']], "LUA_INIT='x = 1' LUA_INIT_5_4='x = 2'")
  eq(ours, theirs, "LUA_INIT_5_4 wins")
  theirs, ours = both([[-e 'print(from_init_file)']], "LUA_INIT=@init.lua")
  eq(ours, theirs, "@file")
  theirs, ours = both([[-E -e 'print(x, package.path:find("nowhere", 1, true))']], "LUA_INIT='x = 1' LUA_PATH='/nowhere/?.lua'")
  eq(ours, theirs, "-E")
  eq(ours[2], "nil\tnil\n", "-E: neither LUA_INIT nor LUA_PATH")
end)

-- A deliberate difference (docs/cli.md): lunet's warnings are on from the start (an error in a
-- __gc must not pass silently, docs/reliability.md) and say "lunet: warning:"; -W is accepted.
test("lua5.4 parity: -W turns warnings on (lunet's are on already)", function()
  local theirs, ours = both([[-W -e 'warn("careful")' -e 'warn("@off")' -e 'warn("hidden")']])
  eq({ ours[1], (ours[2]:gsub("^lunet: warning: ", "Lua warning: ")) }, theirs, "-W, then @off")
  theirs, ours = both([[-e 'warn("shown")']])
  eq({ theirs, ours }, { { 0, "" }, { 0, "lunet: warning: shown\n" } }, "without -W")
end)

test("--version and --help", function()
  local code, out = h.run(LUNET .. " --version")
  eq(code, 0, "status")
  truthy(out:match("^lunet %d+%.%d+%.%d+ %(Lua 5%.4"), "version line: " .. out)
  truthy(out:find("libcurl/", 1, true), "names libcurl")
  code, out = h.run(LUNET .. " --help")
  eq(code, 0, "status")
  truthy(out:find("usage: lunet", 1, true), "usage")
  code, out = h.run(LUNET .. " --bogus")
  eq(code, 2, "an unknown option exits 2")
  truthy(out:find("unknown option '--bogus'", 1, true), out)
  -- issue 35: the nearest option, and where the request options are listed.
  code, out = h.run(LUNET .. " --timout 2>&1")
  eq(code, 2, out)
  truthy(out:find("unknown option '--timout'; did you mean '--timeout'?", 1, true) and out:find("lunet GET --help", 1, true), out)
  code, out = h.run(LUNET .. " --timout 5 GET http://127.0.0.1:1/x 2>&1")
  eq(code, 2, out)
  truthy(out:find("unknown option '--timout'; did you mean '--timeout'?", 1, true) and out:find("lunet GET --help", 1, true),
    "a typo before the URL goes to the request parser: " .. out)
  code, out = h.run(LUNET .. " GET http://127.0.0.1:1/x --verfy=no 2>&1")
  truthy(out:find("did you mean '--verify'?", 1, true), out)
end)

test("a script error prints its message and traceback and exits 1", function()
  local s = script("local function deep()\n  error('it broke')\nend\nlocal function outer() deep() end\nouter()\n")
  local code, out = h.run(LUNET .. " " .. s)
  eq(code, 1, "exit status")
  truthy(out:find("it broke", 1, true), "message: " .. out)
  truthy(out:find("stack traceback", 1, true), "traceback: " .. out)
  truthy(out:find("in local 'deep'", 1, true) or out:find("deep", 1, true), "names the function: " .. out)
  os.remove(s)
end)

test("a request error in a script names its kind and the URL, exit 1", function()
  local code, out = h.run(LUNET .. [[ -e 'http.get("http://127.0.0.1:1/x")']])
  eq(code, 1, "exit status")
  truthy(out:find("connect: ", 1, true), out)
  truthy(out:find("http://127.0.0.1:1/x", 1, true), out)
end)

test("a syntax error is reported with its line, exit 1", function()
  local s = script("local x = = 1\n")
  local code, out = h.run(LUNET .. " " .. s)
  eq(code, 1, "exit status")
  truthy(out:find(":1:", 1, true), out)
  os.remove(s)
end)

test("a missing script file is named, exit 1", function()
  local code, out = h.run(LUNET .. " /nonexistent/script.lua")
  eq(code, 1, "exit status")
  truthy(out:find("/nonexistent/script.lua", 1, true), out)
end)

test("piped lines run in the REPL without a prompt", function()
  local code, out = h.run("printf 'x = 20\\nx + 1\\nfor i = 1, 2 do\\nprint(i)\\nend\\n' | " .. LUNET)
  eq(code, 0, "exit status")
  eq(out, "21\n1\n2\n", "values and multi-line input")
end)

test("a failure nobody awaited is reported at the end, and the exit status is 1", function()
  local code, out = h.run(LUNET .. [[ -e 'local t = task.spawn(function() error("lost") end)']])
  eq(code, 1, "an unhandled failure fails the script (docs/tasks.md)")
  truthy(out:find("nothing awaited or caught it", 1, true) and out:find("lost", 1, true), out)
end)

test("lunet --har FILE script.lua records the run as HAR 1.2, secrets masked", function()
  local har_path = h.tmpname()
  local s = script(string.format([[
    http.get(%q, { headers = { Authorization = "Bearer secret-token" } })
    pcall(http.get, "http://127.0.0.1:1/")
  ]], h.env("LUNET_HTTPBIN") .. "/get?token=abc"))
  local code, out = h.run(LUNET .. " --har " .. har_path .. " " .. s)
  eq(code, 0, "exit status: " .. out)
  local doc = json.decode(io.open(har_path):read("a"))
  eq(doc.log.version, "1.2", "HAR version")
  eq(doc.log.creator.name, "lunet", "creator")
  eq(#doc.log.entries, 2, "both requests, the failed one too")
  local first = doc.log.entries[1]
  eq(first.response.status, 200, "status")
  local auth
  for _, hd in ipairs(first.request.headers) do if hd.name:lower() == "authorization" then auth = hd.value end end
  eq(auth, "***", "the Authorization header is masked")
  local token
  for _, q in ipairs(first.request.queryString) do if q.name == "token" then token = q.value end end
  eq(token, "***", "a token query parameter is masked")
  truthy(not first.request.url:find("abc", 1, true), "and so is the URL: " .. first.request.url)
  -- (the response body is the server's own content: httpbin echoes the header back, unmasked)
  os.remove(har_path); os.remove(s)
end)

test("a proxy carries the request (httpbin answers absolute-form requests)", function()
  local r = http.get("http://proxied.test/anything/x", { proxy = h.env("LUNET_HTTPBIN") })
  eq(r.json.url, "http://proxied.test/anything/x", "the proxy saw the absolute URL")
end)

h.done()
