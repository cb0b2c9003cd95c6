-- The HTTP cache against httpbin, nginx and the counting server: what is served from storage,
-- what is revalidated, what is never stored, and what survives a process.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")
local HOSTILE = h.env("LUNET_HOSTILE")

local fresh_cache = h.fresh_cache
local function unique(name) return name .. "-" .. os.time() .. "-" .. math.random(1e6) end
local function hits(key) return http.get(HOSTILE .. "/hits-count/" .. key).json.count end

test("max-age: miss, then hit without the network", function()
  local s = http.session{ cache = fresh_cache() }
  local first = s:get(BIN .. "/cache/60")
  local second = s:get(BIN .. "/cache/60")
  eq({ first.cache, second.cache }, { "miss", "hit" }, "r.cache")
  eq(second.json.url, first.json.url, "the same body")
  truthy(second.headers["age"] ~= nil, "a served response carries Age")
end)

test("an invalid Age is ignored (RFC 9111 §5.1): the fresh response is served from the cache", function()
  local s = http.session{ cache = fresh_cache() }
  for _, bad in ipairs({ "abc", "-1", "1.5" }) do
    local url = BIN .. "/response-headers?Cache-Control=max-age%3D60&Age=" .. bad
    local first, second = s:get(url), s:get(url)
    eq({ first.cache, second.cache }, { "miss", "hit" }, "Age: " .. bad)
    truthy(tonumber(second.headers["age"]) ~= nil, "the served response's Age is lunet's own number: " .. tostring(second.headers["age"]))
  end
end)

test("ETag: a stale entry is revalidated with If-None-Match and a 304", function()
  local s = http.session{ cache = fresh_cache() }
  eq(s:get(BIN .. "/etag/v1").cache, "miss", "first")
  local again = s:get(BIN .. "/etag/v1")
  eq(again.cache, "revalidated", "second")
  eq(again.status, 200, "the stored 200, freshened")
end)

test("nginx static files: Last-Modified heuristic freshness", function()
  local s = http.session{ cache = fresh_cache() }
  eq(s:get(NGINX .. "/small.txt").cache, "miss", "first")
  local second = s:get(NGINX .. "/small.txt")
  truthy(second.cache == "hit" or second.cache == "revalidated", "served from storage: " .. tostring(second.cache))
  eq(second.body, "hello, lunet\n", "body")
end)

test("no-store responses are never stored", function()
  local s = http.session{ cache = fresh_cache() }
  local url = BIN .. "/response-headers?Cache-Control=no-store"
  eq({ s:get(url).cache, s:get(url).cache }, { "miss", "miss" }, "both from the network")
end)

test("Vary: a stored entry is used only when the varying request headers match", function()
  local s = http.session{ cache = fresh_cache() }
  local url = BIN .. "/response-headers?Cache-Control=max-age%3D60&Vary=Accept-Language"
  eq(s:get(url, { headers = { ["Accept-Language"] = "en" } }).cache, "miss", "en first")
  eq(s:get(url, { headers = { ["Accept-Language"] = "en" } }).cache, "hit", "en again")
  eq(s:get(url, { headers = { ["Accept-Language"] = "ja" } }).cache, "miss", "ja does not match")
end)

test("an unsafe method invalidates the URL", function()
  local s = http.session{ cache = fresh_cache() }
  local url = BIN .. "/anything/item?x=1"
  local cached = HOSTILE .. "/hits/" .. unique("inv")
  eq(s:get(cached .. "?status=200", { cache = "default" }).cache, "miss", "not cacheable without headers (a miss)")
  local r = BIN .. "/cache/60"
  s:get(r)
  eq(s:get(r).cache, "hit", "stored")
  s:post(r)   -- httpbin answers 405 to POST /cache/60: an error status does not invalidate
  eq(s:get(r).cache, "hit", "still stored after a failed POST")
  local ok_url = BIN .. "/response-headers?Cache-Control=max-age%3D60"
  s:get(ok_url)
  eq(s:get(ok_url).cache, "hit", "stored")
  s:post(ok_url)
  eq(s:get(ok_url).cache, "miss", "a successful POST removed it")
end)

test("policies: reload, no_store, prefer_cache, only_if_cached", function()
  local s = http.session{ cache = fresh_cache() }
  local url = BIN .. "/cache/60"
  s:get(url)
  eq(s:get(url, { cache = "reload" }).cache, "miss", "reload goes to the network")
  eq(s:get(url, { cache = "no_store" }).cache, "miss", "no_store goes to the network")
  local unstored = BIN .. "/cache/60?no-store-probe"
  s:get(unstored, { cache = "no_store" })
  fails("offline", function() s:get(unstored, { cache = "only_if_cached" }) end, "no_store wrote nothing")
  local stale_url = BIN .. "/response-headers?Cache-Control=max-age%3D0&ETag=%22e1%22"
  s:get(stale_url)
  eq(s:get(stale_url, { cache = "prefer_cache" }).cache, "stale", "prefer_cache serves however old")
  eq(s:get(url, { cache = "only_if_cached" }).cache, "hit", "only_if_cached with something stored")
  local e = fails("offline", function() s:get(BIN .. "/get?nothing-stored", { cache = "only_if_cached" }) end)
  truthy(e.message:find("only_if_cached", 1, true), e.message)
end)

test("host rules keep matching hosts' GETs for the rule's time, whatever their headers", function()
  local c = fresh_cache()
  c:rule{ host = "127.0.0.1", ttl = 3600 }
  local s = http.session{ cache = c }
  local url = HOSTILE .. "/hits/" .. unique("rule")
  eq(s:get(url).cache, "miss", "first")
  eq(s:get(url).cache, "hit", "kept although the response has no caching headers")
  fails("argument", function() c:rule{ host = 42, ttl = 1 } end)
end)

test("concurrent requests for the same URL make one network request", function()
  local s = http.session{ cache = fresh_cache() }
  local key = unique("collapse")
  local list = {}
  for i = 1, 6 do list[i] = s:get_async(HOSTILE .. "/hits/" .. key) end
  task.all(list):await()
  eq(hits(key), 1, "requests counted at the server")
end)

test("the disk tier survives the process, and two processes can share it", function()
  local _, cache_dir = fresh_cache()
  local script = h.tmpname()
  io.open(script, "w"):write(string.format([[
    local s = http.session{ cache = http.cache{ dir = %q } }
    io.write(s:get(%q).cache)
  ]], cache_dir, BIN .. "/cache/120")):close()
  local _, first = h.run(h.lunet() .. " " .. script)
  local _, second = h.run(h.lunet() .. " " .. script)
  eq({ first, second }, { "miss", "hit" }, "the second process hit what the first stored")
  -- two at once never corrupt it
  local _, both = h.run("(" .. h.lunet() .. " " .. script .. " & " .. h.lunet() .. " " .. script .. "; wait)")
  eq(both, "hithit", "both hit")
  os.remove(script)
end)

test("a damaged disk entry is dropped and fetched again, never served", function()
  local c, cache_dir = fresh_cache({ memory = 1 })   -- memory too small to hold it: disk only
  local s = http.session{ cache = c }
  s:get(BIN .. "/cache/120")
  local _, files = h.run("find " .. cache_dir .. " -type f -size +100c")
  local count = 0
  for path in files:gmatch("[^\n]+") do
    -- flip a byte in the middle of every entry
    local f = io.open(path, "r+b")
    local size = f:seek("end")
    f:seek("set", size // 2)
    local b = f:read(1)
    f:seek("set", size // 2)
    f:write(string.char((b:byte() + 1) % 256))
    f:close()
    count = count + 1
  end
  truthy(count >= 1, "an entry on disk")
  local c2 = http.cache{ dir = cache_dir, memory = 1 }
  local again = http.session{ cache = c2 }:get(BIN .. "/cache/120")
  eq(again.cache, "miss", "fetched again")
  eq(again.status, 200, "and fine")
end)

test("the disk limit is respected", function()
  local c, cache_dir = fresh_cache({ memory = 1, disk = "64KB" })
  local s = http.session{ cache = c }
  for i = 1, 40 do s:get(BIN .. "/range/4096?i=" .. i, { headers = {} }) end
  for i = 1, 40 do s:get(BIN .. "/response-headers?Cache-Control=max-age%3D60&pad=" .. string.rep("x", 2000) .. i) end
  local _, sizes = h.run("find " .. cache_dir .. " -type f -printf '%s\\n'")
  local bytes = 0
  for n in sizes:gmatch("%d+") do bytes = bytes + tonumber(n) end
  truthy(bytes <= 64 * 1024 + 4096, "the entry files hold " .. bytes .. " bytes (an index file may add a little)")
  truthy(c:stats().disk_bytes <= 64 * 1024, "stats: " .. c:stats().disk_bytes)
end)

test("a plain GET served from memory: the session's headers, exact counts, validation", function()
  local c = fresh_cache{ dir = false }
  local s = http.session{ cache = c, headers = { ["Accept-Language"] = "en" } }
  local url = BIN .. "/response-headers?Cache-Control=max-age%3D60&Vary=Accept-Language"
  eq(s:get(url).cache, "miss", "first")
  for i = 1, 3 do eq(s:get(url).cache, "hit", "hit " .. i) end
  s.headers["Accept-Language"] = "ja"   -- the session's headers as they are now select the variant
  eq(s:get(url).cache, "miss", "another language is another variant")
  local st = c:stats()
  eq({ st.hits, st.misses }, { 3, 2 }, "each request counted once (hits, misses)")

  local strict = http.session{ cache = c, headers = { ["Accept-Language"] = "ja" }, accept_types = { "text/html" } }
  local ok, e = pcall(strict.get, strict, url)
  truthy(not ok and type(e) == "table" and e.kind == "content_type", "a hit is validated too: " .. tostring(e))
  eq(e.response.cache, "hit", "the response the error carries came from the cache")

  local retrying = http.session{ cache = c, headers = { ["Accept-Language"] = "ja" }, retry = { max = 2 } }
  local r = retrying:get(url)
  eq({ r.cache, #r.attempts }, { "hit", 1 }, "with retries, a hit still lists its one attempt")
end)

test("stats, entries, purge and clear", function()
  local c = fresh_cache()
  local s = http.session{ cache = c }
  s:get(BIN .. "/cache/60"); s:get(BIN .. "/cache/60")
  local st = c:stats()
  truthy(st.hits >= 1 and st.misses >= 1 and st.memory_entries >= 1, json.encode(st))
  local list = c:entries()
  eq(list[1].url, BIN .. "/cache/60", "listed")
  eq(c:purge(BIN .. "/cache/60"), 1, "purged")
  eq(s:get(BIN .. "/cache/60").cache, "miss", "gone")
  c:clear()
  eq(#c:entries(), 0, "cleared")
end)

test("a script's disk writes are on disk when it ends, by os.exit or not (the writer thread is waited for)", function()
  local dir = h.tmpname()
  os.remove(dir)
  local url = BIN .. "/cache/600?exit=" .. math.random(1e9)
  for _, ending in ipairs({ "", " os.exit(0)", " os.exit(3)" }) do
    local target = url .. "&e=" .. #ending
    local code = h.run(h.lunet() .. " -e " .. string.format("%q", "http.session{ cache = http.cache{ dir = '" .. dir .. "' } }:get('" .. target .. "')" .. ending))
    eq(code, ending == " os.exit(3)" and 3 or 0, "the first run" .. ending)
    local _, out = h.run(h.lunet() .. " -e " .. string.format("%q", "print(http.session{ cache = http.cache{ dir = '" .. dir .. "' } }:get('" .. target .. "').cache)"))
    eq(out, "hit\n", "the second run finds it on disk" .. ending)
  end
  os.execute("rm -rf '" .. dir .. "'")
end)

h.cleanup(after_all, h.remove_caches)
h.done()
