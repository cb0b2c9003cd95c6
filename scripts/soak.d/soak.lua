-- The soak: N GETs of one URL at W concurrent (W task.spawn workers over one session), with the
-- process's RSS sampled every second, and the process's file descriptors, Lua heap and registry
-- references counted before and after. Run by scripts/soak; usable on its own:
--   lunet scripts/soak.d/soak.lua URL [N] [W] [WARMUP]
-- N defaults to 1,000,000, W to 64, WARMUP (requests before the baseline) to N / 10.
-- Prints the figures, one PASS/FAIL line per criterion, and "RESULT: PASS|FAIL"; exits 1 on FAIL.
local url = arg[1]
local N = math.tointeger(tonumber(arg[2] or "1000000"))
local W = math.tointeger(tonumber(arg[3] or "64"))
assert(url and N and N > 0 and W and W > 0, "usage: soak.lua URL [N] [W] [WARMUP]")
local WARMUP = math.tointeger(tonumber(arg[4] or "")) or math.max(W, N // 10)
WARMUP = math.min(WARMUP, N)

local now = require("lunet.core").now
local PID
do
  local f = assert(io.open("/proc/self/stat"))
  PID = f:read("l"):match("^(%d+)")
  f:close()
end
local SAMPLE_EVERY = 1   -- seconds

-- -- measurements -----------------------------------------------------------------------------

--- VmRSS of this process in KB.
local function rss_kb()
  local f = assert(io.open("/proc/self/status"))
  local text = f:read("a")
  f:close()
  return tonumber(text:match("VmRSS:%s*(%d+)"))
end

--- Open file descriptors of this process: the total, and a count per kind (socket, pipe, ...).
--- (The listing runs in a child through a pipe: that pipe's descriptor is left out.)
local function fds()
  local p = assert(io.popen("find /proc/" .. PID .. "/fd -mindepth 1 -maxdepth 1 -printf '%l\\n' 2>/dev/null"))
  local text = p:read("a")
  p:close()
  local total, kinds, skipped = 0, {}, false
  for target in text:gmatch("[^\n]+") do
    local kind = target:match("^(%a[%w_]*):") or (target:match("^/") and "file") or target
    if kind == "anon_inode" then kind = "anon_inode:" .. (target:match("^anon_inode:%[?([^%]]*)") or "") end
    if kind == "pipe" and not skipped then
      -- the last pipe opened is the one io.popen just made: leave one pipe out
      skipped = true
    else
      total = total + 1
      kinds[kind] = (kinds[kind] or 0) + 1
    end
  end
  local parts = {}
  for k, v in pairs(kinds) do parts[#parts + 1] = k .. " " .. v end
  table.sort(parts)
  return total, table.concat(parts, ", ")
end

--- Registry references: luaL_ref slots in use (integer keys past the predefined ones whose value
--- is not a number; a free slot holds the next free index, a number).
local function registry_refs()
  local n = 0
  for k, v in pairs(debug.getregistry()) do
    if math.type(k) == "integer" and k > 2 and type(v) ~= "number" then n = n + 1 end
  end
  return n
end

--- The Lua heap in KB after a full collection.
local function lua_heap_kb()
  collectgarbage("collect")
  collectgarbage("collect")
  return collectgarbage("count")
end

-- -- the run --------------------------------------------------------------------------------

local s = http.session{}
local fds_before, fds_before_kinds = fds()
local first = s:get(url)
assert(first.status == 200, "the soak URL answered " .. tostring(first.status))
local size = #first.body

local samples, sample_times = {}, {}
local t_start = now()
local running = true
local sampler = task.spawn(function()
  while running do
    samples[#samples + 1] = rss_kb()
    sample_times[#sample_times + 1] = now() - t_start
    task.sleep(SAMPLE_EVERY)
  end
end)

local started, finished, good, errors = 0, 0, 0, 0
local error_kinds = {}

--- Runs requests until `limit` have been started, over W workers; returns when all have ended.
local function phase(limit)
  local function worker()
    while started < limit do
      started = started + 1
      local ok, r = pcall(s.get, s, url)
      finished = finished + 1
      if ok and r.status == 200 and #r.body == size then
        good = good + 1
      else
        errors = errors + 1
        local k = ok and ("status " .. tostring(r.status)) or (type(r) == "table" and r.kind or tostring(r))
        error_kinds[k] = (error_kinds[k] or 0) + 1
      end
    end
  end
  local workers = {}
  for i = 1, W do workers[i] = task.spawn(worker) end
  task.all(workers):await()
end

-- warm-up: the pool fills (W keep-alive connections), caches and allocators settle
phase(WARMUP)
local warm = {
  at = now() - t_start, fds = nil, kinds = nil,
  heap = lua_heap_kb(), refs = registry_refs(), transfers = http.stats().transfers,
}
warm.fds, warm.kinds = fds()
warm.rss = rss_kb()
local warm_sample = #samples + 1
samples[warm_sample] = warm.rss
sample_times[warm_sample] = warm.at

-- the soak itself
phase(N)
local elapsed = now() - t_start
local last_rss = rss_kb()
samples[#samples + 1] = last_rss
sample_times[#sample_times + 1] = elapsed
running = false
sampler:await()

local transfers = http.stats().transfers
local fds_end, fds_end_kinds = fds()
local refs_end = registry_refs()
local heap_end = lua_heap_kb()
local rss_after_gc = rss_kb()

-- -- figures --------------------------------------------------------------------------------

local max_rss, max_at = 0, 0
for i = warm_sample, #samples do
  if samples[i] > max_rss then max_rss, max_at = samples[i], sample_times[i] end
end
-- least-squares slope of RSS over time after warm-up, KB per minute
local n, sx, sy, sxx, sxy = 0, 0, 0, 0, 0
for i = warm_sample, #samples do
  local x, y = sample_times[i], samples[i]
  n, sx, sy, sxx, sxy = n + 1, sx + x, sy + y, sxx + x * x, sxy + x * y
end
local slope = (n > 1 and n * sxx - sx * sx > 0) and (n * sxy - sx * sy) / (n * sxx - sx * sx) * 60 or 0
local growth = last_rss - warm.rss
local growth_pct = growth / warm.rss * 100

local function line(label, fmt, ...)
  print(string.format("%-15s" .. fmt, label ~= "" and label .. ":" or "", ...))
end
print(string.format("soak: %d requests of %s (%d bytes) at %d concurrent, one session", N, url, size, W))
line("requests", "%d done, %d ok, %d errors", finished, good, errors)
for k, v in pairs(error_kinds) do line("  errors", "%s x %d", k, v) end
line("elapsed", "%.1f s (warm-up: first %d requests, %.1f s)", elapsed, WARMUP, warm.at)
line("rate", "%.0f req/s overall, %.0f req/s after warm-up", finished / elapsed,
  (finished - WARMUP) / math.max(elapsed - warm.at, 1e-9))
line("rss samples", "%d, every %d s: first %d KB, after warm-up %d KB, max %d KB (at %.0f s), last %d KB",
  #samples, SAMPLE_EVERY, samples[1], warm.rss, max_rss, max_at, last_rss)
line("rss growth", "%+d KB after warm-up (%+.2f%%); max %+d KB; trend %+.1f KB/min; after a full GC %d KB",
  growth, growth_pct, max_rss - warm.rss, slope, rss_after_gc)
line("fds", "before any request %d (%s)", fds_before, fds_before_kinds)
line("", "after warm-up %d (%s)", warm.fds, warm.kinds)
line("", "at the end %d (%s)", fds_end, fds_end_kinds)
line("lua heap", "after a full GC: %.0f KB after warm-up, %.0f KB at the end (%+.0f KB)", warm.heap, heap_end, heap_end - warm.heap)
line("registry refs", "%d after warm-up, %d at the end (luaL_ref slots in debug.getregistry())", warm.refs, refs_end)
line("transfers", "%d (http.stats().transfers at the end)", transfers)

local failed = false
local function check(ok, text, ...)
  print((ok and "PASS " or "FAIL ") .. string.format(text, ...))
  if not ok then failed = true end
end
check(finished == N and errors == 0, "every request answered 200 with the full body (%d of %d)", good, N)
check(growth_pct < 10, "RSS growth after warm-up below 10%% (%+.2f%%, %+d KB)", growth_pct, growth)
check(math.abs(fds_end - warm.fds) <= 2, "file descriptors equal after warm-up and at the end, +-2 (%d, %d)", warm.fds, fds_end)
check(transfers == 0, "http.stats().transfers is 0 (%d)", transfers)
check(refs_end <= warm.refs, "no registry references left behind (%d after warm-up, %d at the end)", warm.refs, refs_end)
check(heap_end - warm.heap < 1024, "Lua heap after a full GC grew less than 1 MB (%+.0f KB)", heap_end - warm.heap)
print("RESULT: " .. (failed and "FAIL" or "PASS"))
if failed then os.exit(1) end
