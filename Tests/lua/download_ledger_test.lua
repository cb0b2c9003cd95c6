-- Resuming downloads only from what is known to be on disk: a segmented download killed with
-- SIGKILL leaves a sparse part file, and the resume must fetch every missing range (not the
-- tail after the file's length); a record that cannot be trusted starts again from zero.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")
local LOG = h.env("LUNET_NGINX_LOG")
local LUNET = h.lunet()

local MB = 1024 * 1024
local work = h.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work)

local sha256sum, apparent = h.sha256sum, h.file_size
-- Bytes actually allocated on disk (a sparse file's holes take none).
local function allocated(path)
  local code, out = h.run("stat -c %b " .. path .. " 2>/dev/null")
  return code == 0 and tonumber(out:match("%d+")) * 512 or 0
end
local function make_file(name, megabytes) return h.random_file(WWW .. "/" .. name, megabytes * MB) end
local function log_size() return apparent(LOG) or 0 end
local function settled_log_size() return h.settled_size(LOG) end
-- Bytes nginx sent for `uri` since `from` bytes into its log.
local function sent_since(uri, from)
  local total, n = 0, 0
  local f = io.open(LOG)
  local text = f:read("a"):sub(from + 1)
  f:close()
  for line in text:gmatch("[^\n]+") do
    local _, _, _, u, _, bytes = line:match("^(%d+) (%d+) (%S+) (%S+) (%d+) (%d+)")
    if u == uri then total, n = total + tonumber(bytes), n + 1 end
  end
  return total, n
end

local ledger = require "lunet.download_ledger"

test("ledger (pure): new segments cover the length; missing ranges follow what is done", function()
  local r = ledger.new("u", '"e"', nil, 1000, 3)
  eq(#r.segments, 3, "three segments")
  eq({ r.segments[1].first, r.segments[1].last, r.segments[3].first, r.segments[3].last }, { 0, 333, 668, 999 }, "bounds")
  r.segments[1].done, r.segments[2].done = 334, 10
  local m = ledger.missing(r)
  eq(#m, 2, "two ranges left")
  eq({ m[1].from, m[1].to, m[2].from, m[2].to }, { 344, 667, 668, 999 }, "from where each segment's bytes end")
  eq(ledger.done(r), 344, "done")
  local back = ledger.load(ledger.encode(r), "u", 1000)
  truthy(back and back.segments[2].done == 10, "encode and load round-trip")
  eq(ledger.load(ledger.encode(r), "u", 300), nil, "a part file shorter than the record is not trusted")
  local open_end = ledger.new("u", nil, "Tue, 01 Jan 2030 00:00:00 GMT", nil, 4)
  eq({ #open_end.segments, open_end.segments[1].last }, { 1, nil }, "unknown length: one open segment")
  local gap = '{"url":"u","etag":"e","length":10,"segments":[{"first":0,"last":3,"done":0},{"first":5,"last":9,"done":0}]}'
  eq(select(2, ledger.load(gap, "u", 0)), "segments overlap or leave a gap", "a gap")
end)

local SUM = make_file("ledger200.bin", 200)

-- The bytes a download's record says are on disk (0 when there is none yet).
local function recorded(meta)
  local f = io.open(meta)
  if not f then return 0 end
  local text = f:read("a")
  f:close()
  local n = 0
  for done in text:gmatch('"done":(%d+)') do n = n + tonumber(done) end
  return n
end

-- Runs `code` in a new lunet process and SIGKILLs it once `ready(part)` says so (bounded).
local function killed(code, part, ready)
  local script = work .. "/child.lua"
  local f = io.open(script, "w")
  f:write(code)
  f:close()
  h.run(string.format("sh -c '%s %s > %s/child.log 2>&1 & echo $! > %s/pid'", LUNET, script, work, work))
  local pid = io.open(work .. "/pid"):read("a"):match("%d+")
  for _ = 1, 500 do
    if ready(part) then break end
    task.sleep(0.02)
  end
  h.run("kill -9 " .. pid)
  task.sleep(0.2)
end

test("a segmented download killed with SIGKILL resumes every missing range: byte-exact", function()
  local dest = work .. "/seg.bin"
  local url = NGINX .. "/slow/ledger200.bin"
  -- Killed once its record names 30 MB as written (the record is brought up to date every second).
  killed(string.format("http.download(%q, %q, { segments = 4, resume = true })", url, dest), dest .. ".part",
    function(part)
      -- (A record without segments, as lunet wrote before it kept them, is killed at 40 MB on disk.)
      local f = io.open(part .. ".meta")
      local text = f and f:read("a") or ""
      if f then f:close() end
      if text ~= "" and not text:find('"segments"', 1, true) then return allocated(part) > 40 * MB end
      return recorded(part .. ".meta") > 30 * MB
    end)
  local part = dest .. ".part"
  local size, on_disk = apparent(part) or 0, allocated(part)
  truthy(on_disk > 0 and on_disk < 200 * MB, "a partial part file: " .. on_disk .. " bytes on disk")
  truthy(size > on_disk + 8 * MB, "the part is sparse (" .. size .. " bytes long, " .. on_disk .. " written): the case that went wrong")
  truthy(not apparent(dest), "nothing under the final name")
  local mark = settled_log_size()
  local r = http.download(url, dest, { segments = 4, resume = true, sha256 = SUM })
  eq(sha256sum(dest), SUM, "byte-identical to the server's file")
  eq(r.bytes, 200 * MB, "the whole length")
  local sent = sent_since("/slow/ledger200.bin", mark)
  truthy(sent < 200 * MB - 30 * MB, "only what was missing was fetched again (" .. sent .. " bytes)")
  truthy(not apparent(part) and not apparent(part .. ".meta"), "no part files left")
end)

test("a single-stream download killed with SIGKILL resumes from what its record says was written", function()
  local dest = work .. "/single.bin"
  local url = NGINX .. "/slow/ledger200.bin"
  killed(string.format("http.download(%q, %q, { resume = true })", url, dest), dest .. ".part",
    function(part) return (apparent(part) or 0) > 30 * MB end)
  local r = http.download(url, dest, { resume = true, sha256 = SUM })
  truthy(r.resumed_from > 0, "resumed, not restarted: " .. tostring(r.resumed_from))
  eq(sha256sum(dest), SUM, "byte-identical")
end)

-- Writes a part file of `n` garbage bytes and the record `meta` (a JSON text) beside it.
local function planted(dest, n, meta)
  h.run(string.format("head -c %d /dev/urandom > %s.part", n, dest))
  local f = io.open(dest .. ".part.meta", "w")
  f:write(meta)
  f:close()
end

test("a record that cannot be trusted starts again from zero, and the result is byte-exact", function()
  local url = NGINX .. "/ledger200.bin"
  local etag = http.head(url).headers["etag"]
  local cases = {
    overlapping = string.format('{"url":%q,"etag":%q,"length":%d,"segments":[{"first":0,"last":%d,"done":%d},{"first":%d,"last":%d,"done":0}]}',
      url, etag, 200 * MB, 120 * MB, 50 * MB, 100 * MB, 200 * MB - 1),
    beyond = string.format('{"url":%q,"etag":%q,"length":%d,"segments":[{"first":0,"last":%d,"done":%d}]}',
      url, etag, 200 * MB, 200 * MB - 1, 300 * MB),
    other_url = string.format('{"url":%q,"etag":%q,"length":%d,"segments":[{"first":0,"last":%d,"done":%d}]}',
      url .. "?x", etag, 200 * MB, 200 * MB - 1, 10 * MB),
    no_record = string.format('{"url":%q,"etag":%q,"length":%d}', url, etag, 200 * MB),
    not_json = "{ this is not json",
  }
  for name, meta in pairs(cases) do
    local dest = work .. "/planted-" .. name .. ".bin"
    planted(dest, 20 * MB, meta)
    local r = http.download(url, dest, { resume = true, sha256 = SUM })
    eq(r.resumed_from, 0, name .. ": started from zero")
    eq(sha256sum(dest), SUM, name .. ": byte-exact")
  end
end)

test("a record whose ranges say more than the part file holds is not trusted", function()
  local url = NGINX .. "/ledger200.bin"
  local etag = http.head(url).headers["etag"]
  local dest = work .. "/short.bin"
  planted(dest, 5 * MB, string.format('{"url":%q,"etag":%q,"length":%d,"segments":[{"first":0,"last":%d,"done":%d}]}',
    url, etag, 200 * MB, 200 * MB - 1, 50 * MB))
  local r = http.download(url, dest, { resume = true, sha256 = SUM })
  eq(r.resumed_from, 0, "started from zero")
  eq(sha256sum(dest), SUM, "byte-exact")
end)

h.cleanup(after_all, function() os.execute("rm -rf " .. work) os.remove(WWW .. "/ledger200.bin") end)
if h.done then h.done() end
