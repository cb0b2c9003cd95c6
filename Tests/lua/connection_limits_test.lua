-- Connections are capped per host and in total (libcurl's CURLMOPT_MAX_HOST_CONNECTIONS and
-- CURLMOPT_MAX_TOTAL_CONNECTIONS): thousands of requests at once wait for a connection instead
-- of opening thousands and having the server drop them.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")
local LOG = h.env("LUNET_NGINX_LOG")

local f = io.open(WWW .. "/limits.txt", "w")
f:write("ok\n")
f:close()

local function log_size() local g = io.open(LOG) local n = g:seek("end") g:close() return n end
-- The distinct connections nginx served `uri` on since `mark`.
local function connections_since(uri, mark)
  local g = io.open(LOG)
  local text = g:read("a"):sub(mark + 1)
  g:close()
  local seen, n = {}, 0
  for line in text:gmatch("[^\n]+") do
    local conn, _, _, u = line:match("^(%d+) (%d+) (%S+) (%S+)")
    if u and u:find(uri, 1, true) == 1 and not seen[conn] then seen[conn] = true; n = n + 1 end
  end
  return n
end

local function burst(count, uri)
  local list = {}
  for i = 1, count do list[i] = http.get_async(NGINX .. uri .. "?i=" .. i) end
  local results = task.all(list):timeout(60):await()
  local ok = 0
  for _, r in ipairs(results) do if r.status == 200 then ok = ok + 1 end end
  return ok
end

test("the defaults: 64 connections per host at most, every request answered", function()
  local mark = log_size()
  eq(burst(2000, "/limits.txt"), 2000, "every request answered 200")
  local n = connections_since("/limits.txt", mark)
  truthy(n >= 1 and n <= 64, "at most 64 connections opened: " .. n)
  eq(http.limits().per_host, 64, "the default per host")
  eq(http.limits().total, 256, "the default in total")
end)

test("http.limits sets them for every session (they share connections)", function()
  -- In a new process: connections already open stay open (and reused) when a limit is lowered.
  local mark = log_size()
  local code, out = h.run(h.lunet() .. [[ -e '
    local before = http.limits{ per_host = 4 }
    local list = {}
    for i = 1, 300 do list[i] = http.session{}:get_async("]] .. NGINX .. [[/limits.txt?small" .. i) end
    local n = 0
    for _, r in ipairs(task.all(list):await()) do if r.status == 200 then n = n + 1 end end
    print(before.per_host, n)' 2>&1]])
  eq({ code, out }, { 0, "64\t300\n" }, "the limit before, and every request answered")
  local n = connections_since("/limits.txt?small", mark)
  truthy(n >= 1 and n <= 4, "at most 4 connections, across sessions: " .. n)
  local ok, err = pcall(http.limits, { per_host = 0 })
  truthy(not ok and err.kind == "argument", "a limit below 1 is refused: " .. tostring(err))
end)

if h.done then h.done() end
