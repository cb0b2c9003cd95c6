-- A download's destination is checked before the first byte is asked for: a directory, or a
-- path whose directory does not exist, fails at once, asks nothing of the server and leaves no
-- part files behind.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")
local LOG = h.env("LUNET_NGINX_LOG")

local work = h.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work .. "/dir")
h.run("head -c 4194304 /dev/urandom > " .. WWW .. "/dest4m.bin")

local function exists(p) local f = io.open(p) if f then f:close() return true end return false end
local function requests_since(mark)
  local f = io.open(LOG)
  local text = f:read("a"):sub(mark + 1)
  f:close()
  local n = 0
  for _ in text:gmatch("/dest4m%.bin") do n = n + 1 end
  return n
end
local function log_size() local f = io.open(LOG) local n = f:seek("end") f:close() return n end

test("a directory as the destination fails at once, names it, and leaves nothing behind", function()
  local mark = log_size()
  local ok, err = pcall(http.download, NGINX .. "/dest4m.bin", work .. "/dir")
  truthy(not ok and err.kind == "argument" and err.message:find(work .. "/dir", 1, true), tostring(err))
  truthy(not exists(work .. "/dir.part") and not exists(work .. "/dir.part.meta"), "no part files")
  eq(requests_since(mark), 0, "nothing was asked of the server")
end)

test("a destination whose directory does not exist fails at once", function()
  local mark = log_size()
  local ok, err = pcall(http.download, NGINX .. "/dest4m.bin", work .. "/missing/file.bin", { segments = 4 })
  truthy(not ok and err.kind == "argument" and err.message:find(work .. "/missing", 1, true), tostring(err))
  eq(requests_since(mark), 0, "nothing was asked of the server")
end)

test("a good destination still works", function()
  local r = http.download(NGINX .. "/dest4m.bin", work .. "/dir/ok.bin")
  eq(r.bytes, 4194304, "bytes")
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. work) os.remove(WWW .. "/dest4m.bin") end)
if h.done then h.done() end
