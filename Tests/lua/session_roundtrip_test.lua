-- Issue 47, item 1: named sessions round-trip. A session saved by the command line for
-- `:PORT` (localhost) opens from Lua as host = "127.0.0.1:PORT", and the reverse (one folder for
-- every loopback spelling); a named session with no file says so; no lock file is left beside
-- it; the prompt's .save says what loads it.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local LUNET = h.lunet()
local port = BIN:match(":(%d+)$")
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

test("a session saved for :PORT opens as 127.0.0.1:PORT and localhost:PORT, with nothing left beside it", function()
  local cfg = h.temp_dir()
  local env = "XDG_CONFIG_HOME=" .. q(cfg) .. " "
  local code, out = h.run(env .. q(LUNET) .. " --session work :" .. port .. "/cookies/set/sid/123 X-Team:blue -a u:p 2>&1")
  eq(code, 0, out)
  truthy(not out:find("has no file yet", 1, true), "the command line makes one quietly, as HTTPie: " .. out)
  for _, host in ipairs({ "127.0.0.1:" .. port, "localhost:" .. port, "http://127.0.0.1:" .. port, "[::1]:" .. port }) do
    code, out = h.run(env .. q(LUNET) .. " -e " .. q(string.format(
      'local s = http.session{ name = "work", host = %q } print(s.headers["X-Team"], #s:cookies(), s._options.auth ~= nil)', host)) .. " 2>&1")
    eq({ code, out }, { 0, "blue\t1\ttrue\n" }, "opened as " .. host)
  end
  local _, listing = h.run("ls -A " .. q(cfg .. "/lunet/sessions/localhost_" .. port))
  eq(listing, "work.json\n", "one file, no lock beside it")
end)

test("a named session with no file says so", function()
  local cfg = h.temp_dir()
  local code, out = h.run("XDG_CONFIG_HOME=" .. q(cfg) .. " " .. q(LUNET) .. " -e " ..
    q('local s = http.session{ name = "nosuch", host = "example.test" } print(s.headers["X"])') .. " 2>&1")
  eq(code, 0, out)
  truthy(out:find("session 'nosuch' has no file yet", 1, true) and out:find("it starts empty", 1, true), out)
end)

test("the prompt's .save session names the host that loads it back", function()
  local cfg = h.temp_dir()
  local lines = "s = http.session{ base_url = " .. string.format("%q", BIN) .. " }\n.save session work2 s\n"
  local code, out = h.run("printf %s " .. q(lines) .. " | XDG_CONFIG_HOME=" .. q(cfg) .. " " .. q(LUNET) .. " 2>&1")
  eq(code, 0, out)
  local how = out:match("; (http%.session%b{}) loads it")
  truthy(how and how:find('host = "' .. BIN .. '"', 1, true), "the hint: " .. out)
  code, out = h.run("XDG_CONFIG_HOME=" .. q(cfg) .. " " .. q(LUNET) .. " -e " .. q("local s = " .. how .. " print(s.base_url)") .. " 2>&1")
  eq({ code, out }, { 0, BIN .. "\n" }, "and it works")
end)
