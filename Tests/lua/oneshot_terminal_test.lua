-- The one-shot command line on a real terminal (tmux, Tests/lua/terminal.lua): colour on a
-- terminal unless NO_COLOR, and a password asked for without echo.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end
local BIN = h.env("LUNET_HTTPBIN")
local pretty = require "lunet.pretty"

local dir = h.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local terminal = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "terminal.lua")
local terminals = terminal.new(h, dir)
local q = terminal.quote

-- `lunet ARGS` on a terminal of its own; the pane stays after it ends (the shell then sleeps).
local function on_terminal(args, env)
  return terminals:open("env " .. (env or "") .. " " .. q(LUNET) .. " " .. args .. "; echo __exit=$?; sleep 60")
end

local ESC = "\27["

test("on a terminal: status line, header names and JSON in colour", function()
  local t = on_terminal(q(BIN .. "/get") .. " a==1")
  t:wait_for("__exit=0", 10)
  local screen = t:screen(true)
  t:close()
  truthy(screen:find(ESC .. "34mHTTP/1.1", 1, true), "the status line's version in colour\n" .. screen)
  truthy(screen:find(ESC .. "32m200 OK", 1, true), "its status in colour\n" .. screen)
  truthy(screen:find(ESC .. "36mContent-Type" .. ESC .. "39m: application/json", 1, true), "header names in colour\n" .. screen)
  truthy(screen:find(ESC .. "34m\"args\"", 1, true), "JSON keys in colour\n" .. screen)
  truthy(screen:find(ESC .. "32m\"1\"", 1, true), "JSON strings in colour\n" .. screen)
  -- A string is one colour: nothing inside it (the port in "127.0.0.1:PORT") is painted.
  local host = BIN:gsub("^http://", "")
  truthy(screen:find(ESC .. '32m"' .. host .. '"', 1, true), "no colour inside a JSON string\n" .. screen)
end)

test("NO_COLOR: the same output, formatted, without a colour code", function()
  local t = on_terminal(q(BIN .. "/get") .. " a==1", "NO_COLOR=1")
  t:wait_for("__exit=0", 10)
  local screen = t:screen(true)
  t:close()
  truthy(screen:find("HTTP/1.1 200 OK", 1, true) and screen:find('\n    "args": {\n        "a": "1"', 1, true), screen)
  truthy(not screen:find(ESC, 1, true), "no escape sequence\n" .. screen)
end)

test("--auth USER without a password: asked for without echo, and the request carries it", function()
  local secret = "typed-Secret-42"
  local t = on_terminal("--auth user GET " .. q(BIN .. "/basic-auth/user/" .. secret))
  t:wait_for("password for user@", 10)
  t:type(secret)
  t:keys("Enter")
  t:wait_for("__exit=0", 10)
  local screen = t:screen()
  t:close()
  truthy(screen:find('"authenticated": true', 1, true), "httpbin took the password\n" .. screen)
  truthy(not screen:find(secret, 1, true), "the typed password never appears\n" .. screen)
end)

test("JSON highlighting: keys, strings, numbers and literals, nothing painted inside a string", function()
  local paint = function(name, s) return "<" .. name .. ">" .. s .. "</>" end
  eq(pretty.highlight_json('{"a:1": "x, 2 true", "b": [1, -2.5e3, true, null], "c\\"": "\\"q"}', paint),
     '{<blue>"a:1"</>: <green>"x, 2 true"</>, <blue>"b"</>: [<cyan>1</>, <cyan>-2.5e3</>, <magenta>true</>, '
     .. '<magenta>null</>], <blue>"c\\""</>: <green>"\\"q"</>}', "painted")
end)

h.cleanup(after_all, function()
  terminals:stop()
  os.execute("rm -rf " .. q(dir))
end)
test("escape sequences a server sends (a header value, a text body, an error) are shown, not obeyed", function()
  local server, pid, port = h.start_server("integrity_server.py")
  local t = on_terminal(q("http://127.0.0.1:" .. port .. "/escapes"), "NO_COLOR=1")
  t:wait_for("__exit=0", 10)
  local screen = t:screen(true)
  t:close()
  h.stop_server(server, pid)
  truthy(screen:find("X-Evil: a\\x1b[31mred\\x1b[0m", 1, true), "the header value, escaped\n" .. screen)
  truthy(screen:find("before \\x1b[2J\\x1b]0;pwned\\x07 after", 1, true), "the body, escaped\n" .. screen)
  truthy(screen:find("line two", 1, true), "its line ends kept\n" .. screen)
  truthy(not screen:find("\27", 1, true), "no raw escape reached the terminal\n" .. screen)
end)

h.done()
