-- lunet: N GETs of one URL, one after another, over one session (one reused connection).
-- usage: lunet sequential.lua URL N
-- Prints one line: "ok=<responses> loop_wall=<s> loop_cpu=<s>" (the loop only, not start-up).
local url, n = arg[1], math.tointeger(tonumber(arg[2] or "10000"))
assert(url and n and n > 0, "usage: sequential.lua URL N")

-- A monotonic wall clock if the host has one; os.clock() is the process's CPU time.
local ok, core = pcall(require, "lunet.core")
local now = ok and type(core) == "table" and core.now or nil

local s = http.session{}
local first = s:get(url)
assert(first.status == 200, "status " .. tostring(first.status))
local size = #first.body

local good = 0
local w0, c0 = now and now(), os.clock()
for _ = 1, n do
  local r = s:get(url)
  if r.status == 200 and #r.body == size then good = good + 1 end
end
local c1, w1 = os.clock(), now and now()
print(string.format("ok=%d loop_wall=%s loop_cpu=%.6f", good, w0 and string.format("%.6f", w1 - w0) or "nil", c1 - c0))
