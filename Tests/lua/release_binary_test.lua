-- The program users run: the release build of `lunet` (scripts/build-release, as scripts/lunet
-- and scripts/install build it; scripts/test builds it and names it in LUNET_RELEASE). Its link
-- differs from the debug build's in ways the other test files cannot see: the Swift runtime,
-- libstdc++ and GCC's unwinder inside it, no exported symbols, no run path, the runtime's
-- argument finder replaced (docs/architecture.md, "Start-up").
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local eq, truthy = h.eq, h.truthy
local test = test or h.test
-- scripts/sanitize runs the test files with a sanitized debug build and builds no release
-- binary: the link checks skip there, and the others run on the sanitized build.
local link = h.sanitizer and { skip = "the release link is not what scripts/sanitize checks" } or {}
local RELEASE = h.sanitizer and h.lunet() or h.env("LUNET_RELEASE")
local HTTPBIN = h.env("LUNET_HTTPBIN")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

test("it needs only libc, libm and liblua5.4, and has no run path", link, function()
  local code, out = h.run("readelf -d " .. q(RELEASE))
  eq(code, 0, "readelf")
  local needed = {}
  for lib in out:gmatch("Shared library: %[([^%]]+)%]") do needed[#needed + 1] = lib end
  table.sort(needed)
  eq(needed, { "ld-linux-x86-64.so.2", "libc.so.6", "liblua5.4.so.0", "libm.so.6" }, "NEEDED")
  eq(out:find("RUNPATH", 1, true) or out:find("RPATH", 1, true), nil, "no run path: no lookups beside the binary")
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

test("a Lua error in the release build prints its message and traceback and exits 1", function()
  local code, out = h.run(q(RELEASE) .. " -e 'local function f() error(\"boom\") end f()'")
  eq(code, 1, "status")
  truthy(out:find("boom", 1, true) and out:find("traceback", 1, true), out)
end)
