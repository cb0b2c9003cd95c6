-- lua5.4 + LuaSocket over ONE kept-alive TCP connection: write a GET, read the status line and
-- headers line by line, then exactly Content-Length bytes. The least a Lua script can do per
-- request with LuaSocket (no chunked encoding, no redirects, no error handling beyond asserts).
-- usage: lua5.4 luasocket_keepalive.lua URL N
local socket = require "socket"
local url, n = arg[1], math.tointeger(tonumber(arg[2] or "10000"))
assert(url and n and n > 0, "usage: luasocket_keepalive.lua URL N")
local host, port, path = url:match("^http://([^:/]+):?(%d*)(/.*)$")
assert(host, "only http://host[:port]/path URLs")
port = tonumber(port) or 80

local conn = assert(socket.tcp())
conn:setoption("tcp-nodelay", true)
assert(conn:connect(host, port))
local request = "GET " .. path .. " HTTP/1.1\r\nHost: " .. host .. ":" .. port .. "\r\n\r\n"

local function get()
  assert(conn:send(request))
  local status = assert(conn:receive("*l"))
  local code = tonumber(status:match("^HTTP/1%.%d (%d%d%d)"))
  local length
  while true do
    local line = assert(conn:receive("*l"))
    if line == "" then break end
    local name, value = line:match("^([^:]+):%s*(.-)%s*$")
    if name and name:lower() == "content-length" then length = tonumber(value) end
  end
  local body = length and length > 0 and assert(conn:receive(length)) or ""
  return code, body
end

local code, body = get()
assert(code == 200, "status " .. tostring(code))
local size = #body

local good = 0
local w0, c0 = socket.gettime(), os.clock()
for _ = 1, n do
  local c, b = get()
  if c == 200 and #b == size then good = good + 1 end
end
local c1, w1 = os.clock(), socket.gettime()
conn:close()
print(string.format("ok=%d loop_wall=%.6f loop_cpu=%.6f", good, w1 - w0, c1 - c0))
