-- The cache against what RFC 9111, RFC 9110 and RFC 5861 ask of a private cache (issue 19), each
-- test quoting the section it follows. The origins are httpbin and scripts/cache_server.py, a
-- scripted server of these tests' own: a test says what it answers, reply by reply, then reads
-- back what it was sent. Every exchange is real HTTP over a socket.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy, fails = h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")

local server, pid, port = h.start_server("cache_server.py")
local ORIGIN = "http://127.0.0.1:" .. port

local dir = os.tmpname()
os.remove(dir)
local function fresh_cache(opts)
  opts = opts or {}
  opts.dir = opts.dir or (dir .. "-" .. math.random(1e9))
  local c = http.cache(opts)
  c:clear()
  return c
end

local keys = 0
--- A new key whose replies are `replies` (see scripts/cache_server.py); returns its URL.
local function script(replies)
  keys = keys + 1
  local key = "k" .. keys .. "-" .. math.random(1e9)
  http.put(ORIGIN .. "/script/" .. key, { body = json.encode(replies) })
  return ORIGIN .. "/r/" .. key, key
end
--- The requests the origin received for `key`, oldest first.
local function log(key) return http.get(ORIGIN .. "/log/" .. key).json end

test("RFC 9111 §3.1: Set-Cookie is stored and returned with a hit, never applied to the jar again", function()
  -- §3.1: "Caches MUST include all received response header fields ... when storing a
  -- response"; only the Connection-named and proxy-authentication fields are excepted.
  local s = http.session{ cache = fresh_cache(), cookies = true }
  local url = BIN .. "/response-headers?Cache-Control=max-age%3D60&Set-Cookie=flavour%3Dfirst"
  eq(s:get(url).cache, "miss", "first")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "first" }, "the jar took the cookie from the network")
  s:get(BIN .. "/cookies/set?flavour=second")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "second" }, "the server changed it")
  local hit = s:get(url)
  eq(hit.cache, "hit", "second")
  eq(hit.headers["set-cookie"], "flavour=first", "the stored Set-Cookie comes back with the hit")
  eq(s:get(BIN .. "/cookies").json.cookies, { flavour = "second" }, "and is not applied to the jar a second time")
end)

h.cleanup(after_all, function()
  os.execute("rm -rf " .. dir .. "*")
  h.stop_server(server, pid)
end)
h.done()
