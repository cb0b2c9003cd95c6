-- lua5.4 + LuaSocket, the way its users write it: socket.http.request per GET.
-- socket.http sends "Connection: close", so every request opens a new TCP connection.
-- usage: lua5.4 luasocket_sequential.lua URL N
local http = require "socket.http"
local socket = require "socket"
local url, n = arg[1], math.tointeger(tonumber(arg[2] or "10000"))
assert(url and n and n > 0, "usage: luasocket_sequential.lua URL N")

local body, code = http.request(url)
assert(code == 200, "status " .. tostring(code))
local size = #body

local good = 0
local w0, c0 = socket.gettime(), os.clock()
for _ = 1, n do
  local b, c = http.request(url)
  if c == 200 and #b == size then good = good + 1 end
end
local c1, w1 = os.clock(), socket.gettime()
print(string.format("ok=%d loop_wall=%.6f loop_cpu=%.6f", good, w1 - w0, c1 - c0))
