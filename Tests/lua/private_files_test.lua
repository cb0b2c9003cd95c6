-- Files lunet writes that can hold secrets (the cookie jar, HAR recordings) are created 0600
-- whatever the umask; a cookie jar that cannot be written (a full disk) is an error that names
-- the file, and the old jar stays as it was. Downloads keep the umask.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local HTTPBIN = h.env("LUNET_HTTPBIN")
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")

local work = h.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work)
local function mode(path)
  local _, out = h.run("stat -c %a " .. path)
  return out:match("%d+")
end
local read = h.read_file
local function child(code, prefix)
  local path = work .. "/child.lua"
  local f = io.open(path, "w")
  f:write(code)
  f:close()
  return h.run((prefix or "") .. LUNET .. " " .. path .. " 2>&1")
end

test("a cookie jar and a HAR file are 0600 with a umask of 022; a download keeps the umask", function()
  local jar, har, dl = work .. "/jar.txt", work .. "/run.har", work .. "/dl.txt"
  io.open(WWW .. "/private.txt", "w"):write("hello\n"):close()
  local code, out = child(string.format([[
    local s = http.session{ cookies = %q }
    s:get(%q)
    s:save_cookies()
    local rec = http.record(%q)
    http.get(%q)
    rec.save()
    http.download(%q, %q)
  ]], jar, HTTPBIN .. "/cookies/set?token=s3cr3t", har, HTTPBIN .. "/get", NGINX .. "/private.txt", dl), "umask 022; ")
  eq(code, 0, out)
  eq(mode(jar), "600", "the cookie jar")
  truthy(read(jar):find("s3cr3t", 1, true), "the jar holds the cookie")
  eq(mode(har), "600", "the HAR file")
  eq(mode(dl), "644", "a download keeps the umask")
end)

test("an existing jar rewritten stays 0600 even if it was not before", function()
  local jar = work .. "/old.txt"
  io.open(jar, "w"):write("# Netscape HTTP Cookie File\n"):close()
  os.execute("chmod 644 " .. jar)
  local code, out = child(string.format([[
    local s = http.session{ cookies = %q }
    s:get(%q)
    s:save_cookies()
  ]], jar, HTTPBIN .. "/cookies/set?a=1"), "umask 022; ")
  eq(code, 0, out)
  eq(mode(jar), "600", "rewritten 0600")
end)

-- ThreadSanitizer's runtime cannot start under ulimit -f (download_test.lua says why).
local full_disk = h.under_file_size_limit

test("save_cookies on a full disk (ulimit -f) raises kind io naming the file; the old jar is intact", full_disk, function()
  local jar = work .. "/full.txt"
  local old = "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\told\tvalue\n"
  io.open(jar, "w"):write(old):close()
  -- A cookie of 3 KB, and a file size limit of 1 KB: the new jar cannot be written.
  local code, out = child(string.format([[
    local s = http.session{ cookies = %q }
    s:get(%q)
    local ok, err = pcall(s.save_cookies, s)
    print(ok, type(err) == "table" and err.kind, type(err) == "table" and err.message)
  ]], jar, HTTPBIN .. "/cookies/set?big=" .. string.rep("x", 3000)), "ulimit -f 1; ")
  truthy(out:find("^false\tio\t") and out:find(jar, 1, true), "kind io naming the jar: " .. out)
  eq(read(jar), old, "the old jar is as it was")
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. work) end)
if h.done then h.done() end
