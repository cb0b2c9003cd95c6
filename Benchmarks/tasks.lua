-- Task machinery against plain coroutines, in one process.
-- usage: lunet tasks.lua N [BATCH [GC]]   (or: lua5.4 tasks.lua N [BATCH [GC]]: coroutines only)
--   GC: "default" (leave the collector as the host set it), "incremental" or "generational"
--   tasks:      N times `local src = task.source(); src.task:next(fn); src:resolve(i)`; after
--               every BATCH of them the script awaits the batch's last continuation task, so
--               the loop drains the queued continuations (default BATCH 1000)
--   coroutines: N times `coroutine.resume(coroutine.create(f), i)`, f counting its runs: with
--               the coroutine.resume scripts see (in lunet, the prelude's, which passes host
--               awaits through), and, in lunet, with the raw one (lunet.runtime.raw_resume)
-- Prints one line per measure: "<name> n=<N> ran=<callbacks run> cpu=<s> wall=<s|nil>"
-- (cpu from os.clock(); wall from lunet.core.now when there is one).
local n = math.tointeger(tonumber(arg[1] or "1000000"))
local batch = math.tointeger(tonumber(arg[2] or "1000"))
local gc = arg[3] or "default"
assert(n and n > 0 and batch and batch > 0, "usage: tasks.lua N [BATCH [GC]]")
assert(gc == "default" or gc == "incremental" or gc == "generational", "GC is default, incremental or generational")
if gc ~= "default" then collectgarbage(gc) end

local ok, core = pcall(require, "lunet.core")
local now = ok and type(core) == "table" and core.now or nil
local clock = os.clock

local function report(name, ran, c0, c1, w0, w1)
  print(string.format("%s n=%d ran=%d cpu=%.6f wall=%s", name, n, ran, c1 - c0,
    w0 and string.format("%.6f", w1 - w0) or "nil"))
end

local ran = 0
local function count() ran = ran + 1 end

local function coroutines(name, resume)
  local create = coroutine.create
  collectgarbage()
  ran = 0
  local w0, c0 = now and now(), clock()
  for i = 1, n do
    resume(create(count), i)
  end
  local c1, w1 = clock(), now and now()
  report(name, ran, c0, c1, w0, w1)
end

if task then -- a plain read: lunet may provide its globals lazily; lua5.4 has none
  collectgarbage()
  ran = 0
  local source = task.source
  local w0, c0 = now and now(), clock()
  local i = 0
  while i < n do
    local last
    for _ = 1, math.min(batch, n - i) do
      i = i + 1
      local src = source()
      last = src.task:next(count)
      src:resolve(i)
    end
    last:await() -- continuations run in the order their tasks settled: this one runs last
  end
  local c1, w1 = clock(), now and now()
  report("tasks", ran, c0, c1, w0, w1)
end

coroutines("coroutines", coroutine.resume)
local rok, runtime = pcall(require, "lunet.runtime")
if rok and type(runtime) == "table" and runtime.raw_resume then
  coroutines("coroutines_raw", runtime.raw_resume)
end
