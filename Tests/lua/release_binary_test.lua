-- The program users run: the release build of `lunet` (scripts/build-release, as scripts/lunet
-- and scripts/install build it; scripts/test builds it and names it in LUNET_RELEASE). Its link
-- differs from the debug build's in ways the other test files cannot see: the Swift runtime,
-- libstdc++, GCC's unwinder and Lua inside it, only Lua's API exported, no run path, the
-- runtime's argument finder replaced (docs/architecture.md, "Start-up").
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local eq, truthy = h.eq, h.truthy
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
-- scripts/sanitize runs the test files with a sanitized debug build and builds no release
-- binary: the link checks skip there, and the others run on the sanitized build.
local link = h.sanitizer and { skip = "the release link is not what scripts/sanitize checks" } or {}
local RELEASE = h.sanitizer and h.lunet() or h.env("LUNET_RELEASE")
local HTTPBIN = h.env("LUNET_HTTPBIN")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

test("it needs only libc and libm, and has no run path", link, function()
  local code, out = h.run("readelf -d " .. q(RELEASE))
  eq(code, 0, "readelf")
  local needed = {}
  for lib in out:gmatch("Shared library: %[([^%]]+)%]") do needed[#needed + 1] = lib end
  table.sort(needed)
  eq(needed, { "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6" }, "NEEDED: Lua is linked in")
  eq(out:find("RUNPATH", 1, true) or out:find("RPATH", 1, true), nil, "no run path: no lookups beside the binary")
end)

test("it exports Lua's API and nothing else", link, function()
  local code, out = h.run("nm -D --defined-only " .. q(RELEASE))
  eq(code, 0, "nm -D")
  local lua, others = {}, {}
  for name in out:gmatch("%S+ %a (%S+)\n") do
    if name:find("^lua_") or name:find("^luaL_") or name:find("^luaopen_") then lua[name] = true
    elseif not name:find("^std[a-z]+@") then others[#others + 1] = name end   -- stdin, stdout, stderr: libc's copies
  end
  for _, name in ipairs({ "lua_pcallk", "lua_checkstack", "luaL_checklstring", "luaL_setfuncs", "luaopen_base" }) do
    truthy(lua[name], name .. " exported")
  end
  eq(others, {}, "no other symbol")
end)

-- Lua is linked in (scripts/build-release); C modules such as cjson and LuaSocket, which Debian
-- builds without a dependency on liblua, must find it there, and no second Lua may be loaded.
test("Lua C modules load and run against the Lua inside the binary", link, function()
  local code, out = h.run(q(RELEASE) .. [[ -e 'local cjson, socket = require("cjson"), require("socket")
local maps = io.open("/proc/self/maps"):read("a")
print(cjson.encode({ 1, "two", { three = 3 } }), cjson.decode("[4,5]")[2] == 5, type(socket.gettime()),
  maps:find("liblua5.4.so", 1, true) == nil, maps:find("cjson", 1, true) ~= nil)']])
  eq({ code, out }, { 0, '[1,"two",{"three":3}]\ttrue\tnumber\ttrue\ttrue\n' }, "cjson and socket")
end)

test("the Swift runtime's /proc/self/maps reader is not linked in; lunet's argument getter is", link, function()
  local code, out = h.run("nm " .. q(RELEASE))
  eq(code, 0, "nm")
  eq(out:find("CommandLine.cpp", 1, true), nil, "the runtime's CommandLine.cpp initializer")
  truthy(out:find(" [Tt] _swift_stdlib_getUnsafeArgvArgc\n"), "launch.c's definition")
end)

test("the arguments reach Lua and the command line as given, spaces, quotes and UTF-8 kept", function()
  local script = h.script("print(#arg, arg[0] == " .. string.format("%q", "") .. " or 'named', arg[1], arg[2], arg[3])\n")
  local code, out = h.run(q(RELEASE) .. " " .. q(script) .. " 'a b' \"it's\" 한국어")
  eq({ code, out }, { 0, "3\tnamed\ta b\tit's\t한국어\n" }, "a script's arg")
  code, out = h.run(q(RELEASE) .. " --offline GET http://example.invalid/p x==1 'H:v w'")
  eq(code, 0, "one-shot --offline")
  truthy(out:find("GET /p?x=1 HTTP/1.1", 1, true) and out:find("\nH: v w\n", 1, true), "the request it would send: " .. out)
end)

test("print(1) maps no libcurl; a GET maps it, sends, and exits with its status", function()
  local code, out = h.run(q(RELEASE) .. [[ -e 'for l in io.lines("/proc/self/maps") do if l:find("libcurl", 1, true) then print("mapped") end end print(1)']])
  eq({ code, out }, { 0, "1\n" }, "print(1)")
  code, out = h.run(q(RELEASE) .. " GET " .. HTTPBIN .. "/status/404 --check-status")
  eq(code, 4, "a 404 with --check-status: " .. out)
  code, out = h.run(q(RELEASE) .. " GET " .. HTTPBIN .. "/get a==1")
  eq(code, 0, "a GET")
  truthy(out:find('"args": ?{"a": ?"1"}'), "the body: " .. out)
end)

-- launch.c's malloc tuning: with glibc's defaults a loop of requests shrank the heap and grew it
-- again all the time, and faulted its pages in again each time (0.2-0.5 page faults a request).
-- Counted from /proc/self/stat, not timed. The sanitizers bring their own allocator.
local own_malloc = h.sanitizer and { skip = "the sanitizers' allocator is not glibc's" } or {}
test("a loop of 64 requests in flight does not keep faulting pages in", own_malloc, function()
  local script = h.script(string.format([[
local function faults()
  local f = assert(io.open("/proc/self/stat"))
  local line = f:read("a")
  f:close()
  return tonumber(line:match("%%) " .. ("%%S+ "):rep(7) .. "(%%d+)"))
end
local s = http.session{}
local url, n, started = %q, 0, 0
local function run(count)
  local target = started + count
  local workers = {}
  for i = 1, 64 do
    workers[i] = task.spawn(function()
      while started < target do started = started + 1; assert(s:get(url).status == 200) end
    end)
  end
  task.all(workers):await()
end
run(2000)             -- the heap grows to its size
local before = faults()
run(6000)
print(string.format("%%.4f", (faults() - before) / 6000))
]], h.env("LUNET_NGINX") .. "/index.json"))
  local code, out = h.run(q(RELEASE) .. " " .. q(script))
  eq(code, 0, "the loop: " .. out)
  local per_request = tonumber(out:match("^([%d.]+)"))
  -- Before: 0.2-1.1 a request (more with nginx closing each connection after 1000 requests, as
  -- the test servers' does); after: 0.00-0.03 (the heap still grows a little past the warm-up).
  truthy(per_request and per_request < 0.1, "page faults a request: " .. out)
end)

test("a Lua error in the release build prints its message and traceback and exits 1", function()
  local code, out = h.run(q(RELEASE) .. " -e 'local function f() error(\"boom\") end f()'")
  eq(code, 1, "status")
  truthy(out:find("boom", 1, true) and out:find("traceback", 1, true), out)
end)
