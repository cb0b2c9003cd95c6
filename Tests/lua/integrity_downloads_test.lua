-- Issue 33, items 12-14 and 16 (downloads): bytes reported as success that are not the
-- resource. An unrequested 206 is not the file; parts of two versions are never combined; a
-- body of any size goes to a file or a pipe; -d --check-status and -d -c behave.
-- Servers: Tests/servers/integrity_server.py (/unrequested-206, /etag-flip, /etag-mixed), nginx.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails

local server, pid, port = h.start_server("integrity_server.py")
h.cleanup(after_all, function() h.stop_server(server, pid) end)
local BASE = "http://127.0.0.1:" .. port
local NGINX, WWW = h.env("LUNET_NGINX"), h.env("LUNET_NGINX_WWW")

local function exists(path) return h.file_size(path) ~= nil end

-- A fresh path in a folder of its own (nothing else named like it there).
local function fresh_path(name)
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p '" .. dir .. "'")
  return dir .. "/" .. name, dir
end

-- ---------------------------------------------------------------------------------------------
-- Item 12: a 206 nobody asked for
-- ---------------------------------------------------------------------------------------------

test("a 206 to a plain GET is kind protocol, and no file (not even a .part) is left", function()
  local path = fresh_path("five.bin")
  local e = fails("protocol", function() http.download(BASE .. "/unrequested-206", path) end, "http.download")
  truthy(e.message:find("part of it", 1, true), e.message)
  eq({ exists(path), exists(path .. ".part"), exists(path .. ".part.meta") }, { false, false, false }, "nothing on disk")
  -- The command line: not "Saved", exit 1, nothing on disk.
  local _, dir = fresh_path("x")
  local code, out = h.run("cd '" .. dir .. "' && " .. h.lunet() .. " -d " .. BASE .. "/unrequested-206")
  eq(code, 1, "lunet -d: " .. out)
  truthy(not out:find("Saved", 1, true), "no 'Saved': " .. out)
  local _, listing = h.run("ls -A '" .. dir .. "'")
  eq(listing, "", "the folder is empty")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 13: parts of two versions are never combined
-- ---------------------------------------------------------------------------------------------

test("a resume whose 206 carries another ETag (If-Range ignored) starts over: the file is one version", function()
  local path = fresh_path("flip.bin")
  local url = BASE .. "/etag-flip?size=200000&key=" .. math.random(1e9)
  -- The first try is cut half-way: version 1's first half stays in the .part.
  fails("protocol", function() http.download(url, path, { resume = true }) end, "the cut first try")
  eq(h.file_size(path .. ".part"), 100000, "half of version 1 kept to resume")
  local r = http.download(url, path, { resume = true })
  eq(r.resumed_from, 0, "not resumed onto another version's bytes")
  local body = h.read_file(path)
  eq(#body, 200000, "the whole length")
  eq(body, string.rep("b", 200000), "and all of it version 2")
end)

test("segments answered with parts of two versions are not combined: the file is one version", function()
  local path = fresh_path("mixed.bin")
  local size = 1024 * 1024
  local r = http.download(BASE .. "/etag-mixed?size=" .. size .. "&key=" .. math.random(1e9), path, { segments = 4 })
  local body = h.read_file(path)
  eq(#body, size, "the whole length")
  truthy(body == string.rep("a", size) or body == string.rep("b", size), "one version only (a or b throughout)")
  eq(r.bytes, size, "reported")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 14: a body over max_body goes to a file or a pipe whole
-- ---------------------------------------------------------------------------------------------

local BIG = 110 * 1024 * 1024
local big_name = "big-" .. math.random(1e9) .. ".bin"
os.execute("truncate -s " .. BIG .. " '" .. WWW .. "/" .. big_name .. "'")
h.cleanup(after_all, function() os.remove(WWW .. "/" .. big_name) end)

test("a 110 MB body goes whole to a pipe, to -o, and after the heads with -v, in flat memory", function()
  local out = h.tmpname()
  local timing = h.tmpname()
  local function run(args)
    local code, text = h.run("/usr/bin/time -o " .. timing .. " -f 'peak=%M' " .. h.lunet() .. " " .. args)
    eq(code, 0, args .. ": " .. text)
    local kb = tonumber(h.read_file(timing):match("peak=(%d+)"))
    h.memory_bound(kb, 100 * 1024, args .. ": peak RSS " .. kb .. " KB")
  end
  run("GET " .. NGINX .. "/" .. big_name .. " > " .. out)
  eq(h.file_size(out), BIG, "to a pipe or file on stdout")
  os.remove(out)
  run("GET " .. NGINX .. "/" .. big_name .. " -o " .. out)
  eq(h.file_size(out), BIG, "-o")
  os.remove(out)
  run("-v GET " .. NGINX .. "/" .. big_name .. " > " .. out)
  local size = h.file_size(out)
  truthy(size > BIG and size < BIG + 4096, "-v: the heads, then the whole body: " .. size)
  local f = io.open(out, "rb")
  truthy(f:read(4) == "GET ", "the request head first")
  f:close()
  os.remove(out)
end)

test("-o leaves no half-written file when the transfer fails, and an old file stays as it was", function()
  local path = fresh_path("cut.bin")
  local f = io.open(path, "wb") f:write("old") f:close()
  local code = h.run(h.lunet() .. " GET " .. BASE .. "/etag-flip?size=200000&key=" .. math.random(1e9) .. " -o " .. path)
  truthy(code ~= 0, "the cut transfer fails")
  eq(h.read_file(path), "old", "the old file is untouched")
  local _, listing = h.run("ls -A \"$(dirname '" .. path .. "')\"")
  eq(listing, "cut.bin\n", "no temporary file left")
end)

-- ---------------------------------------------------------------------------------------------
-- Item 16: -d --check-status, -d -c
-- ---------------------------------------------------------------------------------------------

test("-d --check-status exits with the status's class and leaves no .part", function()
  local _, dir = fresh_path("x")
  local code, out = h.run("cd '" .. dir .. "' && " .. h.lunet() .. " -d --check-status " .. NGINX .. "/no-such-file.bin")
  eq(code, 4, "404: exit 4 (" .. out .. ")")
  local _, listing = h.run("ls -A '" .. dir .. "'")
  eq(listing, "", "nothing left")
end)

test("-d -c on a file already complete says so and downloads nothing", function()
  local name = "small-" .. math.random(1e9) .. ".txt"
  local src = io.open(WWW .. "/" .. name, "wb") src:write(string.rep("z", 5000)) src:close()
  local _, dir = fresh_path("x")
  local cd = "cd '" .. dir .. "' && "
  local log = h.env("LUNET_NGINX_LOG")
  eq((h.run(cd .. h.lunet() .. " -d " .. NGINX .. "/" .. name)), 0, "the first download")
  local before = h.settled_size(log)
  local code, out = h.run(cd .. h.lunet() .. " -d -c " .. NGINX .. "/" .. name)
  eq(code, 0, out)
  truthy(out:find("already complete", 1, true), out)
  local logged = h.read_file(log):sub(before + 1)
  truthy(not logged:find('"GET /' .. name, 1, true), "no GET of the file the second time: " .. logged)
  eq(h.file_size(dir .. "/" .. name), 5000, "the file as it was")
  os.remove(WWW .. "/" .. name)
end)

h.done()
