-- The README's tour runs as written against scripts/test-servers' httpbin, which listens on
-- 127.0.0.1:8080 when that port is free (as the tour says) and says where it is otherwise.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local BIN = h.env("LUNET_HTTPBIN")
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../../"
if not ROOT:find("^/") then ROOT = os.getenv("PWD") .. "/" .. ROOT end
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local README = h.read_file(ROOT .. "README.md")
local TOUR_ADDRESS = "127.0.0.1:8080"
-- The tour's examples, with httpbin's address where this run's httpbin is (8080 may be taken
-- by another run on this machine: the examples are what is tested, not the port).
local function here(text) return (text:gsub(TOUR_ADDRESS:gsub("%p", "%%%0"), (BIN:gsub("^http://", "")))) end

-- A scratch directory to run in: downloads land there, caches and sessions stay there.
local function scratch()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  return dir, "cd " .. q(dir) .. " && env HOME=" .. q(dir) .. " XDG_CACHE_HOME=" .. q(dir .. "/cache")
    .. " XDG_CONFIG_HOME=" .. q(dir .. "/config") .. " "
end

test("docs/cli.md's first examples run as written (httpbin's address where this run's is)", function()
  local doc = h.read_file(ROOT .. "docs/cli.md")
  local block = doc:match("```sh\n(.-)```")
  local port = BIN:match(":(%d+)$")
  local ran = 0
  for line in block:gmatch("[^\n]+") do
    local command = line:gsub("%s+#.*$", "")
    -- Lines that name example.org send nothing only with --offline; the others go to httpbin.
    if command:find("^lunet ") and (not command:find("example.org", 1, true) or command:find("--offline", 1, true)) then
      command = here(command):gsub(" :8080/", " :" .. port .. "/")
      local dir, env = scratch()
      local code, out = h.run(env .. q(LUNET) .. command:sub(#"lunet" + 1) .. " </dev/null 2>&1")
      eq(code, 0, command .. "\n" .. out)
      if command:find(" -d ", 1, true) then
        local size = #h.read_file(dir .. "/data.bin")
        eq(size, 102400, "the download is there whole")
      end
      ran = ran + 1
    end
  end
  eq(ran, 4, "four of the five examples run here")
end)

test("the README says httpbin is at 127.0.0.1:8080, as scripts/test-servers starts it when it can", function()
  truthy(README:find("here it is `http://" .. TOUR_ADDRESS .. "`", 1, true), "the tour names its address")
end)

-- Starts scripts/test-servers in a directory of its own preferring `port`; its exit status,
-- the URL of its httpbin and what it said on standard error. Stopped at once.
local function servers_preferring(port)
  local dir = h.tmpname()
  os.remove(dir)
  local err = dir .. ".err"
  local code = h.run("(LUNET_HTTPBIN_PORT=" .. port .. " " .. q(ROOT .. "scripts/test-servers") .. " start " .. q(dir)
    .. " >/dev/null 2>" .. q(err) .. ")")
  local env = h.read_file(dir .. "/env") or ""
  local said = h.read_file(err) or ""
  local _, answer = h.run("curl -s -o /dev/null -w '%{http_code}' " .. (env:match("LUNET_HTTPBIN=(%S+)") or "none") .. "/get")
  h.run(q(ROOT .. "scripts/test-servers") .. " stop " .. q(dir))
  os.execute("rm -rf " .. q(dir) .. " " .. q(err))
  return code, env:match("LUNET_HTTPBIN=(%S+)"), said, answer
end

test("scripts/test-servers puts httpbin on the port it prefers when free, and says where when not", function()
  local _, free = h.run([[/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])']])
  local port = tonumber(free)
  local code, url, said, answer = servers_preferring(port)
  eq({ code, url, answer }, { 0, "http://127.0.0.1:" .. port, "200" }, "httpbin on the free port it prefers\n" .. said)
  -- Another program listens there now (a child that lets go of the pipe h.run reads).
  local pidfile = h.tmpname()
  h.run([[/usr/bin/python3 -c 'import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", ]] .. port .. [[)); s.listen()
if os.fork(): sys.exit(0)
null = os.open("/dev/null", os.O_RDWR)
for fd in (0, 1, 2): os.dup2(null, fd)
open("]] .. pidfile .. [[", "w").write(str(os.getpid())); time.sleep(120)' </dev/null]])
  local pid = tonumber(h.read_file(pidfile))
  os.remove(pidfile)
  code, url, said, answer = servers_preferring(port)
  os.execute("kill " .. pid)
  eq({ code, answer }, { 0, "200" }, "httpbin started elsewhere\n" .. said)
  truthy(url ~= "http://127.0.0.1:" .. port, "not on the taken port: " .. tostring(url))
  truthy(said:find("port " .. port .. " is taken: httpbin is at " .. url, 1, true), "it says where: " .. said)
end)

test("every Lua example of the tour and the Tasks section runs as written", function()
  local section = README:match("\n## A short tour\n(.-)\n## Embedding in Swift")
  truthy(section, "the README has the tour and the Tasks section")
  local blocks = 0
  for block in section:gmatch("```lua\n(.-)```") do
    blocks = blocks + 1
    local dir, run = scratch()
    local file = dir .. "/tour" .. blocks .. ".lua"
    local f = assert(io.open(file, "w"))
    f:write(here(block))
    f:close()
    local code, out = h.run(run .. LUNET .. " " .. q(file))
    eq(code, 0, "block " .. blocks .. " runs:\n" .. out .. "\n" .. block)
    os.execute("rm -rf " .. q(dir))
  end
  eq(blocks, 3, "the tour's Lua blocks")
end)

test("the README's command lines run as written: the one-line request and lunet -e", function()
  local request = README:match("```sh\n(lunet POST [^\n#]-)%s*#")
  truthy(request, "the README opens with a request")
  local dir, run = scratch()
  local code, out = h.run(run .. here(request):gsub("^lunet", q(LUNET)) .. " </dev/null")
  eq(code, 0, request .. "\n" .. out)
  local sent = json.decode(out)
  eq({ sent.json.name, sent.json.n, sent.headers["X-Api-Key"] }, { "lunet", 3, "abc" }, "what httpbin received")
  local chunk = README:match("`lunet %-e '([^']+)'`")
  truthy(chunk, "the README has a lunet -e example")
  code, out = h.run(run .. q(LUNET) .. " -e " .. q(here(chunk)))
  eq({ code, out }, { 0, "200\n" }, "lunet -e " .. chunk)
  os.execute("rm -rf " .. q(dir))
end)

h.done()
