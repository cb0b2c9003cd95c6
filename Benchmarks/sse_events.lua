-- The lunet side of the SSE bench (Benchmarks/streams.sh): the N events of /many?n=N through
-- http.sse's iterator; closed after the last one (as the peer stops at the end of the body: a
-- stream would otherwise wait the reconnection time before the server's 204). Prints the count.
local port, n, key = arg[1], tonumber(arg[2]), arg[3]
local stream = http.sse("http://127.0.0.1:" .. port .. "/many?n=" .. n .. "&key=" .. key)
local events = 0
for _ in stream:events() do
  events = events + 1
  if events == n then stream:close() end
end
print(events)
