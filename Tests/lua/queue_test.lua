-- Queues, batches, retries and waiting for the network, against real servers.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local BIN = h.env("LUNET_HTTPBIN")
local HOSTILE = h.env("LUNET_HOSTILE")

local function hits(key) return http.get(HOSTILE .. "/hits-count/" .. key).json.count end
local function unique(name) return name .. "-" .. tostring(os.time()) .. "-" .. math.random(1e6) end

test("type-ahead: ten cancel-policy adds, only the last completes", function()
  local q = http.queue{ max_concurrent = 4 }
  local ts = {}
  for i = 1, 10 do ts[i] = q:add("search", BIN .. "/delay/0.2?q=" .. i, { policy = "cancel" }) end
  q:await_all()
  for i = 1, 9 do eq(ts[i].state, "cancelled", "add " .. i) end
  eq(ts[10].state, "done", "the last")
  eq(ts[10].result.json.args.q, "10", "the last one's response")
  eq(http.stats().transfers, 0, "no transfer left")
end)

test("reuse returns the same task while max tasks with that id exist", function()
  local q = http.queue{}
  local a = q:add("profile", BIN .. "/delay/0.3", { policy = "reuse", max = 1 })
  local b = q:add("profile", BIN .. "/delay/0.3", { policy = "reuse", max = 1 })
  truthy(rawequal(a, b), "the same task")
  eq(q:count("profile"), 1, "one request")
  local two = http.queue{}
  local x = two:add("p", BIN .. "/delay/0.3", { policy = "reuse", max = 2 })
  local y = two:add("p", BIN .. "/delay/0.3", { policy = "reuse", max = 2 })
  local z = two:add("p", BIN .. "/delay/0.3", { policy = "reuse", max = 2 })
  truthy(not rawequal(x, y) and rawequal(y, z), "max = 2 adds a second, then returns the newest")
  task.all{ a, x, y }:await()
end)

test("wait serialises requests by identifier while other identifiers run", function()
  local key = unique("wait")
  local q = http.queue{ max_concurrent = 8 }
  local order = {}
  local list = {}
  for i = 1, 3 do
    list[#list + 1] = q:add("same", BIN .. "/delay/0.2?i=" .. i, { policy = "wait" }):next(function(r)
      order[#order + 1] = "same" .. r.json.args.i
    end)
  end
  list[#list + 1] = q:add("other", BIN .. "/delay/0.1"):next(function() order[#order + 1] = "other" end)
  task.sleep(0.05)
  eq(q:count("same"), 3, "three with the same id queued or running")
  eq(http.stats().transfers, 2, "one 'same' and the 'other' in flight at once")
  task.all(list):await()
  eq(order, { "other", "same1", "same2", "same3" }, "in order per identifier, others alongside")
end)

test("q:cancel(id) and q:count(id)", function()
  local q = http.queue{ max_concurrent = 1 }
  local a = q:add("x", BIN .. "/delay/5")
  local b = q:add("x", BIN .. "/delay/5")
  local c = q:add("y", BIN .. "/get")
  eq({ q:count("x"), q:count("y"), q:count() }, { 2, 1, 3 }, "counts")
  eq(q:cancel("x"), 2, "two cancelled")
  eq({ a.state, b.state }, { "cancelled", "cancelled" }, "states")
  eq(c:await().status, 200, "the other identifier goes on")
end)

test("batch: results in input order, failures in place, progress counted", function()
  local seen = {}
  local results = http.batch({
    BIN .. "/delay/0.3?i=1", BIN .. "/get?i=2", "http://127.0.0.1:1/", { method = "POST", url = BIN .. "/post", json = { i = 4 } },
    BIN .. "/status/500",
  }, { concurrency = 2, progress = function(done, total) seen[#seen + 1] = done .. "/" .. total end })
  eq(#results, 5, "five results")
  eq(results[1].json.args.i, "1", "the slow first one is first")
  eq(results[2].json.args.i, "2", "second")
  eq(results[3].kind, "connect", "the failure is an error object in its place")
  eq(results[4].json.json, { i = 4 }, "a request table")
  eq(results[5].status, 500, "a 500 is a response")
  eq(seen, { "1/5", "2/5", "3/5", "4/5", "5/5" }, "progress")
end)

test("retries on 503 until the server recovers, counted at the server and in r.attempts", function()
  local key = unique("recover")
  local r = http.get(HOSTILE .. "/hits/" .. key .. "?status=503&until=2", { retry = { max = 3, backoff = 0.01 } })
  eq(r.status, 200, "recovered")
  eq(#r.attempts, 3, "three attempts")
  eq({ r.attempts[1].status, r.attempts[2].status, r.attempts[3].status }, { 503, 503, 200 }, "their statuses")
  eq(hits(key), 3, "three requests reached the server")
end)

test("429 with Retry-After is honoured; a session's retry policy applies to its requests", function()
  local key = unique("limited")
  local s = http.session{ retry = { max = 2, backoff = 0.01, on = { 429 } } }
  local started = os.time()
  local r = s:get(HOSTILE .. "/hits/" .. key .. "?status=429&retry_after=1&until=1")
  eq(r.status, 200, "served after waiting")
  eq(r.attempts[1].delay, 1, "the delay came from Retry-After")
  eq(hits(key), 2, "two requests")
end)

test("POST is not retried unless asked; errors carry their attempts", function()
  local key = unique("post")
  local r = http.post(HOSTILE .. "/hits/" .. key .. "?status=503", { retry = { max = 3, backoff = 0.01 } })
  eq({ r.status, #r.attempts, hits(key) }, { 503, 1, 1 }, "one attempt")
  local key2 = unique("postall")
  local r2 = http.post(HOSTILE .. "/hits/" .. key2 .. "?status=503", { retry = { max = 2, backoff = 0.01, methods = "all" } })
  eq({ #r2.attempts, hits(key2) }, { 3, 3 }, "retried when the caller says so")
  local e = fails("connect", function() http.get("http://127.0.0.1:1/", { retry = { max = 2, backoff = 0.01 } }) end)
  eq(#e.attempts, 3, "the error lists three attempts")
end)

test("cancelling a request during its retry delay stops it", function()
  local key = unique("cancel")
  local t = http.get_async(HOSTILE .. "/hits/" .. key .. "?status=503", { retry = { max = 5, backoff = 10, jitter = false } })
  task.sleep(0.3)
  t:cancel()
  eq(t.state, "cancelled", "cancelled")
  eq(hits(key), 1, "no second attempt")
end)

test("wait_for_network: a request made offline is sent when a route appears (network namespace)", function()
  local ns = unique("lunet-net")
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir)
  io.open(dir .. "/hello.txt", "w"):write("hello from the namespace\n"):close()
  local script = dir .. "/client.lua"
  io.open(script, "w"):write([[
    io.write("before: ", tostring(net.online()), "\n"); io.flush()
    local s = http.session{ wait_for_network = true }
    local r = s:get("http://127.0.0.1:18999/hello.txt")
    io.write("after: ", tostring(net.online()), " ", r.status, " ", r.body)
  ]]):close()
  local function sh(cmd) return h.run(cmd) end
  eq(sh("ip netns add " .. ns), 0, "ip netns add")
  sh("ip netns exec " .. ns .. " ip link set lo up")
  sh("ip netns exec " .. ns .. " sh -c '/usr/bin/python3 -m http.server --bind 127.0.0.1 18999 --directory " .. dir .. " >/dev/null 2>&1 & echo $! > " .. dir .. "/server.pid'")
  sh("ip netns exec " .. ns .. " sh -c '" .. h.lunet() .. " " .. script .. " > " .. dir .. "/out.txt 2>&1 & echo $! > " .. dir .. "/client.pid'")
  local function out() return io.open(dir .. "/out.txt"):read("a") end
  for _ = 1, 40 do if out():find("before", 1, true) then break end task.sleep(0.05) end
  task.sleep(0.5)
  eq(out(), "before: false\n", "offline, and the request waits")
  eq(sh("ip netns exec " .. ns .. " ip route add default dev lo"), 0, "a default route appears")
  for _ = 1, 100 do if out():find("after", 1, true) then break end task.sleep(0.05) end
  local text = out()
  sh("kill $(cat " .. dir .. "/server.pid) $(cat " .. dir .. "/client.pid) 2>/dev/null")
  sh("ip netns del " .. ns)
  os.execute("rm -rf " .. dir)
  eq(text, "before: false\nafter: true 200 hello from the namespace\n", "sent once the route was there")
end)

h.done()
