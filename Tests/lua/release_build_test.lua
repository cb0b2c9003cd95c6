-- scripts/lunet runs the last release build at once when nothing it is built from changed, and
-- builds first when something did (scripts/build-release). Run on a copy of the scripts in a
-- made-up project, with a fake `swift` and a fake `dpkg-query` first on PATH that record their
-- calls: no real build, no real package check.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or "./")

local work = h.tmpname()
os.remove(work)
local proj, bin, log = work .. "/proj", work .. "/bin", work .. "/calls"

local function write(path, text, mode)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  if mode then os.execute("chmod " .. mode .. " " .. path) end
end

local function sh(cmd)
  local code, out = h.run(cmd)
  assert(code == 0, cmd .. ": " .. out)
  return out
end

sh("mkdir -p " .. proj .. "/scripts " .. proj .. "/Sources/Tool " .. proj .. "/lua " .. proj .. "/Plugins " .. bin)
sh("cp " .. ROOT .. "scripts/lunet " .. ROOT .. "scripts/build-release " .. ROOT .. "scripts/deps " .. proj .. "/scripts/")
write(proj .. "/Package.swift", "// a package\n")
write(proj .. "/Sources/Tool/main.swift", "print(1)\n")
write(proj .. "/lua/tool.lua", "return 1\n")
write(proj .. "/Plugins/Plugin.swift", "// a plugin\n")
-- The fake swift "builds" the binary, unless FAKE_SWIFT says it fails or changes nothing (as a
-- real no-op build does: the binary keeps its old time).
write(bin .. "/swift", [[#!/bin/sh
echo "swift $*" >> "]] .. log .. [["
case "$FAKE_SWIFT" in
fail) echo "error: the build broke"; exit 1 ;;
noop) [ -e .build/release/lunet ] && exit 0 ;;
slow) echo "[1/3] Write sources"; sleep 2.5 ;;
esac
echo "[1/3] Compiling Tool main.swift"
echo "[3/3] Linking lunet"
mkdir -p .build/release
printf '#!/bin/sh\necho "lunet ran: $*"\n' > .build/release/lunet
chmod +x .build/release/lunet
]], "+x")
-- Every package scripts/deps asks about is installed.
write(bin .. "/dpkg-query", [[#!/bin/sh
echo "dpkg-query" >> "]] .. log .. [["
for a in "$@"; do case "$a" in -*) ;; *) echo "$a install ok installed" ;; esac; done
]], "+x")

-- Runs scripts/lunet with `args`; returns its status, its output and the fake tools it called.
local function lunet(args, env)
  os.remove(log)
  local code, out = h.run("cd " .. work .. " && " .. (env or "") .. " PATH=" .. bin .. ":$PATH " .. proj .. "/scripts/lunet " .. args)
  local calls = {}
  local f = io.open(log)
  if f then
    for line in f:lines() do calls[#calls + 1] = line end
    f:close()
  end
  return code, out, calls
end

-- The Swift runtime, libstdc++, GCC's unwinder and Lua linked in (Lua's objects through
-- .build/link-lua), no run path, only Lua's API exported, lld placing functions in the order of
-- scripts/link/lunet.order, relative relocations packed (scripts/link/ holds the files).
local BUILD = "swift build -c release --static-swift-stdlib --disable-local-rpath -Xswiftc -L -Xswiftc " .. proj .. "/.build/link-lua -Xswiftc -L -Xswiftc " .. proj .. "/scripts/link -Xswiftc -Xclang-linker -Xswiftc -static-libgcc -Xlinker --version-script="
  .. proj .. "/scripts/link/lunet.map -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs"
  .. " -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xlinker --symbol-ordering-file="
  .. proj .. "/scripts/link/lunet.order -Xlinker --no-warn-symbol-ordering --product lunet"
-- A change made in the same tick of the file clock (a few ms; a second on some file systems)
-- as the last build's start would not be newer than it: wait until a new file would be.
local STAMP = proj .. "/.build/release/.lunet.built"
local function later(cmd)
  sh("until touch " .. work .. "/probe && [ " .. work .. "/probe -nt " .. STAMP .. " ]; do sleep 0.01; done && " .. cmd)
end

test("the first call checks packages, builds and runs; the next one only runs", function()
  local code, out, calls = lunet("-e 'print(1)'")
  eq({ code, out, calls }, { 0, "lunet ran: -e print(1)\n", { "dpkg-query", BUILD } }, "first call")
  code, out, calls = lunet("a b")
  eq({ code, out, calls }, { 0, "lunet ran: a b\n", {} }, "second call: no package check, no swift")
end)

test("a changed Package.swift, source, Lua file or plugin builds again, once", function()
  for _, path in ipairs({ "Package.swift", "Sources/Tool/main.swift", "lua/tool.lua", "Plugins/Plugin.swift" }) do
    later("touch " .. proj .. "/" .. path)
    local code, out, calls = lunet("x")
    eq({ code, out, calls }, { 0, "lunet ran: x\n", { "dpkg-query", BUILD } }, "after touching " .. path)
    code, out, calls = lunet("x")
    eq({ code, calls }, { 0, {} }, "the call after that, " .. path)
  end
end)

test("a file added or deleted builds again", function()
  later("echo '-- new' > " .. proj .. "/lua/new.lua")
  local _, _, calls = lunet("x")
  eq(calls, { "dpkg-query", BUILD }, "after adding lua/new.lua")
  later("rm " .. proj .. "/lua/new.lua")
  _, _, calls = lunet("x")
  eq(calls, { "dpkg-query", BUILD }, "after deleting it")
  _, _, calls = lunet("x")
  eq(calls, {}, "then nothing")
end)

test("a missing binary builds again", function()
  sh("rm " .. proj .. "/.build/release/lunet")
  local code, out, calls = lunet("x")
  eq({ code, out, calls }, { 0, "lunet ran: x\n", { "dpkg-query", BUILD } }, "status, output, calls")
end)

test("a build that changes nothing still counts as done", function()
  later("touch " .. proj .. "/lua/tool.lua")
  local _, _, calls = lunet("x", "FAKE_SWIFT=noop")
  eq(calls, { "dpkg-query", BUILD }, "the touch builds (and the build leaves the binary older than the file)")
  _, _, calls = lunet("x", "FAKE_SWIFT=noop")
  eq(calls, {}, "the call after that does not build")
end)

test("a failed build prints its log, exits 1, runs nothing, and the next call builds again", function()
  later("touch " .. proj .. "/Sources/Tool/main.swift")
  local code, out, calls = lunet("x", "FAKE_SWIFT=fail")
  eq({ code, out, calls }, { 1, "error: the build broke\n", { "dpkg-query", BUILD } }, "failed build")
  code, out, calls = lunet("x")
  eq({ code, out, calls }, { 0, "lunet ran: x\n", { "dpkg-query", BUILD } }, "the next call")
end)

test("the Lua module is built and stamped on its own", function()
  os.remove(log)
  local code, out = h.run("cd " .. proj .. " && PATH=" .. bin .. ":$PATH scripts/build-release LunetLuaModule; cat " .. log)
  truthy(code == 0 and out:find("swift build -c release --product LunetLuaModule", 1, true), out)
  eq(h.run("PATH=" .. bin .. ":$PATH " .. proj .. "/scripts/build-release nonsense"), 2, "an unknown product")
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. work) end)
if h.done then h.done() end

-- Issue 35: on a terminal the first build says what it does; elsewhere it stays quiet.
test("on a terminal, a build says each step and swift's progress; not on a pipe", function()
  later("touch " .. proj .. "/lua/tool.lua")
  -- `script` gives the command a terminal of its own (its output is what the terminal showed).
  local code, out = h.run("cd " .. work .. " && PATH=" .. bin .. ":$PATH script -qec " ..
    "'" .. proj .. "/scripts/lunet -e x' /dev/null")
  eq(code, 0, out)
  truthy(out:find("lunet: checking the Debian packages", 1, true), "the package check is said:\n" .. out)
  truthy(out:find("lunet: building lunet (release", 1, true), "the build is said:\n" .. out)
  truthy(out:find("[3/3] Linking lunet", 1, true), "swift's progress shows:\n" .. out)
  truthy(out:find("lunet: built lunet in %d+ s"), "and when it is done:\n" .. out)
  truthy(out:find("lunet ran: -e x", 1, true), "then lunet runs:\n" .. out)
  later("touch " .. proj .. "/lua/tool.lua")
  local code2, out2 = lunet("-e y")
  eq({ code2, out2 }, { 0, "lunet ran: -e y\n" }, "not on a terminal: only lunet's own output")
  later("touch " .. proj .. "/lua/tool.lua")
  code, out = h.run("cd " .. work .. " && FAKE_SWIFT=fail PATH=" .. bin .. ":$PATH script -qec " ..
    "'" .. proj .. "/scripts/lunet -e x' /dev/null")
  truthy(code ~= 0 and out:find("error: the build broke", 1, true), "a failed build shows its log on a terminal too:\n" .. out)
end)

test("on a terminal, a long step's progress line counts the seconds (issue 47, item 8)", function()
  later("touch " .. proj .. "/lua/tool.lua")
  local code, out = h.run("cd " .. work .. " && FAKE_SWIFT=slow PATH=" .. bin .. ":$PATH script -qec " ..
    "'" .. proj .. "/scripts/lunet -e x' /dev/null")
  eq(code, 0, out)
  -- swift prints a step's line when it starts; a compile that takes minutes left the line as
  -- it was, as if the build hung. It is redrawn each second with the time so far.
  truthy(out:find("[1/3] Write sources · 2 s", 1, true), "the seconds count on:\n" .. out)
end)
