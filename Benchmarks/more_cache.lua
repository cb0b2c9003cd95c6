-- lunet: N sequential GETs of one URL through a session, answered by the cache or the network.
-- usage: lunet more_cache.lua URL N MODE [DIR]
--   MODE memory:  http.session{ cache = http.cache{ dir = false } }: fresh hits from memory
--   MODE disk:    http.cache{ dir = DIR, memory = 1 }: nothing fits in memory (an entry over an
--                 eighth of the memory limit is not kept there), so every hit reads DIR
--   MODE network: http.session{} without a cache: every GET goes to the server
-- The URL's response must be fresh for long enough (Cache-Control: max-age=3600). A first GET
-- fills the cache (a miss); a second must be a hit, or the script stops with a message saying
-- what r.cache was. Prints one line, for the loop only:
--   "ok=<good responses> hits=<r.cache == 'hit'> loop_wall=<s> loop_cpu=<s> memory_entries=<n> disk_entries=<n>"
local url, n, mode, dir = arg[1], math.tointeger(tonumber(arg[2] or "")), arg[3], arg[4]
assert(url and n and n > 0 and (mode == "memory" or mode == "disk" or mode == "network"),
  "usage: more_cache.lua URL N memory|disk|network [DIR]")
assert(mode ~= "disk" or dir, "MODE disk needs DIR")

local ok, core = pcall(require, "lunet.core")
local now = ok and type(core) == "table" and core.now or nil

local cache
if mode == "memory" then
  cache = http.cache{ dir = false }
elseif mode == "disk" then
  cache = http.cache{ dir = dir, memory = 1 }
end
local s = http.session{ cache = cache or false }

local function fail(msg)
  io.stderr:write("more_cache.lua (", mode, "): ", msg, "\n")
  os.exit(1)
end

local first = s:get(url)
if first.status ~= 200 then fail("the first GET of " .. url .. " answered " .. tostring(first.status)) end
local size = #first.body
local cc = first.headers["cache-control"]
if cache then
  if not (cc and cc:find("max-age", 1, true)) then
    fail(url .. " has no Cache-Control max-age (got " .. tostring(cc) .. "): nginx does not add it")
  end
  local second = s:get(url)
  if second.cache ~= "hit" then
    fail(string.format("the second GET of %s was not a cache hit: r.cache = %s (first: %s; Cache-Control: %s; %s)",
      url, tostring(second.cache), tostring(first.cache), tostring(cc), tostring(cache)))
  end
end

local good, hits = 0, 0
local w0, c0 = now and now(), os.clock()
for _ = 1, n do
  local r = s:get(url)
  if r.status == 200 and #r.body == size then good = good + 1 end
  if r.cache == "hit" then hits = hits + 1 end
end
local c1, w1 = os.clock(), now and now()

local st = cache and cache:stats() or {}
if mode == "disk" and (st.memory_entries or 0) ~= 0 then
  fail("the memory tier holds " .. tostring(st.memory_entries) .. " entries: the hits did not all come from disk")
end
if mode == "disk" and (st.disk_entries or 0) < 1 then
  fail("the disk tier holds no entry (" .. tostring(cache) .. ")")
end
print(string.format("ok=%d hits=%d loop_wall=%s loop_cpu=%.6f memory_entries=%s disk_entries=%s", good, hits,
  w0 and string.format("%.6f", w1 - w0) or "nil", c1 - c0, tostring(st.memory_entries or "-"),
  tostring(st.disk_entries or "-")))
