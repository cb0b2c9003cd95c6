-- Callbacks that receive a stream (on_chunk, progress) may wait: a task.sleep or a request
-- inside them. Chunks still arrive exactly once and in order, the transfer waits while the
-- callback does, and the request resolves only after the last callback has returned.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local NGINX = h.env("LUNET_NGINX")
local HTTPBIN = h.env("LUNET_HTTPBIN")
local WWW = h.env("LUNET_NGINX_WWW")

local MB = 1024 * 1024
-- A file of random bytes in nginx's root; its content.
local function make_file(name, bytes)
  h.random_file(WWW .. "/" .. name, bytes)
  return h.read_file(WWW .. "/" .. name)
end

local BODY = make_file("chunks-20m.bin", 20 * MB)

-- Collects every chunk; returns the collector and a function telling how many calls came.
local function collector(wait_every, wait)
  local parts, calls, after_done = {}, 0, nil
  local c = {}
  function c.on_chunk(b)
    calls = calls + 1
    if after_done then after_done = after_done + 1 end
    parts[#parts + 1] = b
    if calls % wait_every == 0 then wait() end
  end
  function c.body() return table.concat(parts) end
  function c.calls() return calls end
  function c.mark_done() after_done = 0 end
  function c.calls_after_done() return after_done end
  return c
end

test("a sleeping on_chunk gets every byte once, in order, and the download resolves after it", function()
  local c = collector(16, function() task.sleep(0.01) end)
  local r = http.download(NGINX .. "/chunks-20m.bin", nil, { on_chunk = c.on_chunk })
  c.mark_done()
  eq(r.status, 200, "status")
  local got = c.body()
  eq(#got, #BODY, "bytes delivered")
  truthy(got == BODY, "the bytes are the file's, in order")
  task.sleep(0.3)
  eq(c.calls_after_done(), 0, "on_chunk calls after the download returned")
end)

test("an on_chunk that makes a request of its own still gets the body exactly", function()
  local statuses = {}
  local c = collector(64, function() statuses[#statuses + 1] = http.get(HTTPBIN .. "/get").status end)
  http.download(NGINX .. "/chunks-20m.bin", nil, { on_chunk = c.on_chunk })
  c.mark_done()
  truthy(#statuses > 0, "requests were made inside on_chunk")
  for _, s in ipairs(statuses) do eq(s, 200, "inner request") end
  truthy(c.body() == BODY, "the bytes are the file's, in order")
end)

test("a waiting on_chunk of a download to a file: the file and the chunks both match", function()
  local dest = h.tmpname()
  local c = collector(8, function() task.sleep(0.005) end)
  local r = http.download(NGINX .. "/chunks-20m.bin", dest, { on_chunk = c.on_chunk })
  c.mark_done()
  eq(r.bytes, #BODY, "bytes written")
  local f = assert(io.open(dest, "rb"))
  local on_disk = f:read("a")
  f:close()
  os.remove(dest)
  truthy(on_disk == BODY, "the file is the server's")
  truthy(c.body() == BODY, "the chunks are the server's, in order")
  task.sleep(0.2)
  eq(c.calls_after_done(), 0, "on_chunk calls after the download returned")
end)

test("a progress callback that waits sees increasing figures and the download ends once", function()
  local seen, last, decreasing = 0, -1, false
  local r = http.download(NGINX .. "/chunks-20m.bin", nil, {
    on_chunk = function() end,
    progress = function(done)
      seen = seen + 1
      if done < last then decreasing = true end
      last = done
      task.sleep(0.002)
    end,
  })
  eq(r.status, 200, "status")
  truthy(seen > 0, "progress was reported")
  truthy(not decreasing, "progress never went backwards")
end)

test("error(nil) inside on_chunk fails the download with the callback's error, not 'cancelled'", function()
  local ok, err = pcall(http.download, NGINX .. "/chunks-20m.bin", nil, { on_chunk = function() error(nil) end })
  truthy(not ok, "the download failed")
  truthy(type(err) ~= "table" or err.kind ~= "cancelled", "the error is not 'cancelled': " .. tostring(type(err) == "table" and err.kind or err))
end)

if h.done then h.done() end
