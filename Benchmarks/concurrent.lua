-- lunet: N GETs of one URL over W concurrent tasks on one shared session.
-- usage: lunet concurrent.lua URL N [W] [MODE]
--   MODE "spawn" (default): W task.spawn workers, each looping s:get(URL) until a shared counter
--                           reaches N
--   MODE "async":           s:get_async with a window of W: each response's continuation starts
--                           the next request until N have been started
-- Prints one line: "ok=<good responses> loop_wall=<s> loop_cpu=<s>" (the loop only, not start-up).
local url, n = arg[1], math.tointeger(tonumber(arg[2] or "10000"))
local w = math.tointeger(tonumber(arg[3] or "64"))
local mode = arg[4] or "spawn"
assert(url and n and n > 0 and w and w > 0, "usage: concurrent.lua URL N [W] [spawn|async]")
assert(mode == "spawn" or mode == "async", "MODE is spawn or async, not " .. tostring(mode))

local ok, core = pcall(require, "lunet.core")
local now = ok and type(core) == "table" and core.now or nil

local s = http.session{}
local first = s:get(url)
assert(first.status == 200, "status " .. tostring(first.status))
local size = #first.body

local started, finished, good = 0, 0, 0
local w0, c0 = now and now(), os.clock()

if mode == "spawn" then
  local function worker()
    while started < n do
      started = started + 1
      local r = s:get(url)
      finished = finished + 1
      if r.status == 200 and #r.body == size then good = good + 1 end
    end
  end
  local workers = {}
  for i = 1, w do workers[i] = task.spawn(worker) end
  task.all(workers):await()
else
  local all_done = task.source()
  local start
  local function on_done(t)
    finished = finished + 1
    if t.state == "done" and t.result.status == 200 and #t.result.body == size then good = good + 1 end
    if started < n then
      start()
    elseif finished == n then
      all_done:resolve(true)
    end
  end
  start = function()
    started = started + 1
    s:get_async(url):continue(on_done)
  end
  for _ = 1, math.min(w, n) do start() end
  all_done.task:await()
end

local c1, w1 = os.clock(), now and now()
assert(finished == n, string.format("%d of %d requests finished", finished, n))
print(string.format("ok=%d loop_wall=%s loop_cpu=%.6f", good,
  w0 and string.format("%.6f", w1 - w0) or "nil", c1 - c0))
