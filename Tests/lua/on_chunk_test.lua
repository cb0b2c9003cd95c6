-- on_chunk on every request and session method: a 2xx body arrives as it comes, once and in
-- order, with backpressure (the transfer waits while the callback does); the request resolves
-- after the last callback returned, and its error is the callback's when the callback fails.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local NGINX = h.env("LUNET_NGINX")
local HTTPBIN = h.env("LUNET_HTTPBIN")
local WWW = h.env("LUNET_NGINX_WWW")

-- A file of random bytes in nginx's root; its content.
local function make_file(name, bytes)
  h.random_file(WWW .. "/" .. name, bytes)
  return h.read_file(WWW .. "/" .. name)
end
local BODY = make_file("on-chunk-4m.bin", 4 * 1024 * 1024)

test("http.get with on_chunk streams the body once, in order, and resolves after the last chunk", function()
  local parts, calls, after = {}, 0, nil
  local r = http.get(NGINX .. "/on-chunk-4m.bin", { on_chunk = function(c)
    calls = calls + 1
    if after then after = after + 1 end
    parts[#parts + 1] = c
    if calls % 8 == 0 then task.sleep(0.002) end
  end })
  after = 0
  eq(r.status, 200, "status")
  truthy(table.concat(parts) == BODY, "the chunks are the body, in order")
  eq(r.body, "", "the body went to on_chunk, not into memory")
  task.sleep(0.1)
  eq(after, 0, "no call after the request returned")
end)

test("session methods take on_chunk too, with the session's base URL", function()
  local s = http.session{ base_url = NGINX .. "/" }
  local n = 0
  local r = s:get("on-chunk-4m.bin", { on_chunk = function(c) n = n + #c end })
  eq({ r.status, n }, { 200, #BODY }, "status and bytes")
  local got = {}
  local p = http.post(HTTPBIN .. "/post", { json = { a = 1 }, on_chunk = function(c) got[#got + 1] = c end })
  eq(p.status, 200, "a POST's status")
  eq(json.decode(table.concat(got)).json, { a = 1 }, "a POST's streamed body")
end)

test("a failing on_chunk fails the request with its own error and stops the transfer", function()
  local ok, err = pcall(http.get, NGINX .. "/on-chunk-4m.bin", { on_chunk = function() error("stop here") end })
  truthy(not ok and tostring(err):find("stop here", 1, true), "the callback's error: " .. tostring(err))
  eq(http.stats().transfers, 0, "no transfer left running")
end)

test("a non-2xx answer keeps its body in r.body and calls nothing", function()
  local calls = 0
  local r = http.get(HTTPBIN .. "/status/404", { on_chunk = function() calls = calls + 1 end })
  eq({ r.status, calls }, { 404, 0 }, "status and calls")
end)

test("on_chunk must be a function", function()
  local ok, err = pcall(http.get, HTTPBIN .. "/get", { on_chunk = "print" })
  truthy(not ok and err.kind == "argument" and err.message:find("on_chunk", 1, true), tostring(err))
end)

test("stream = true: the response comes with its head, and r:chunks() gives the body as it arrives", function()
  local r = http.get(NGINX .. "/on-chunk-4m.bin", { stream = true })
  eq(r.status, 200, "the status is there before the body")
  eq(tonumber(r.headers["content-length"]), #BODY, "and the headers")
  local parts, n = {}, 0
  for piece in r:chunks() do
    n = n + 1
    parts[n] = piece
    if n % 16 == 0 then task.sleep(0.002) end   -- a slow reader: the transfer waits for it
  end
  truthy(table.concat(parts) == BODY, "every byte once, in order")
  truthy(n > 1, "in more than one piece: " .. n)
  truthy(r.timings.total > 0, "after the stream, the finished response's fields are there")
  eq(http.stats().transfers, 0, "no transfer left")
end)

test("stream = true on a non-2xx answer or an empty body: r:chunks() gives the body once", function()
  local r = http.get(HTTPBIN .. "/status/404", { stream = true })
  eq(r.status, 404, "status")
  local n = 0
  for _ in r:chunks() do n = n + 1 end
  truthy(n <= 1, "at most one piece")
  local ok, err = pcall(function()
    local s = http.get("http://127.0.0.1:1/", { stream = true })
    for _ in s:chunks() do end
  end)
  truthy(not ok and err.kind == "connect", "a failure before the head raises from the request: " .. tostring(err))
end)

test("breaking out of r:chunks() early and closing the response stops the transfer", function()
  local r = http.get(NGINX .. "/on-chunk-4m.bin", { stream = true })
  for _ in r:chunks() do break end
  r:close()
  task.sleep(0.05)
  eq(http.stats().transfers, 0, "the transfer was stopped")
end)

if h.done then h.done() end
