-- The lunet side of the WebSocket bench (Benchmarks/streams.sh): N round trips of a 1 KB
-- text message to ws://127.0.0.1:PORT/echo, one at a time. Prints the round trips done.
local port, n = arg[1], tonumber(arg[2])
local ws = http.websocket("ws://127.0.0.1:" .. port .. "/echo")
local payload = string.rep("x", 1024)
local done = 0
for _ = 1, n do
  ws:send(payload)
  if ws:receive():await() ~= payload then error("echo differs") end
  done = done + 1
end
ws:close()
print(done)
