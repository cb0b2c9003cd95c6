-- Downloads and uploads against nginx: big files, kill and resume across processes, changed
-- files, servers without ranges, parallel segments, checksums, uploads, a full disk.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local _, eq, truthy, fails = h.test, h.eq, h.truthy, h.fails
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")
local LOG = h.env("LUNET_NGINX_LOG")
local UPLOADS = h.env("LUNET_NGINX_UPLOADS")
local LUNET = h.lunet()

local work = h.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work)

local sha256sum, size = h.sha256sum, h.file_size
local function exists(path) return size(path) ~= nil end
local function make_file(name, megabytes)
  local path = WWW .. "/" .. name
  return path, h.random_file(path, megabytes * 1024 * 1024)
end
-- nginx log lines for a URI since `from` bytes into the log: { status, bytes, range }
local function log_lines(uri, from)
  local out = {}
  local text = io.open(LOG):read("a"):sub(from + 1)
  for line in text:gmatch("[^\n]+") do
    local _, _, method, u, status, bytes, _, _, range = line:match("^(%d+) (%d+) (%S+) (%S+) (%d+) (%d+) (%S+) (%S+) (.*)$")
    if u == uri then out[#out + 1] = { method = method, status = tonumber(status), bytes = tonumber(bytes), range = range } end
  end
  return out
end
local function log_size() return size(LOG) or 0 end

local BIG, BIG_SUM = make_file("big200.bin", 200)

test("a 200 MB download arrives whole and passes its sha256", function()
  local dest = work .. "/big.bin"
  local r = http.download(NGINX .. "/big200.bin", dest, { sha256 = BIG_SUM })
  eq({ r.status, r.bytes, r.sha256, r.resumed_from }, { 200, 200 * 1024 * 1024, BIG_SUM, 0 }, "result")
  eq(sha256sum(dest), BIG_SUM, "the file")
  truthy(not exists(dest .. ".part") and not exists(dest .. ".part.meta"), "no part files left")
end)

-- Starts a download in another lunet process and SIGKILLs it once `at_least` bytes are on disk.
local function killed_download(url, dest)
  local script = work .. "/dl.lua"
  io.open(script, "w"):write(string.format("http.download(%q, %q, { resume = true })", url, dest)):close()
  h.run(string.format("sh -c '%s %s > /dev/null 2>&1 & echo $! > %s/pid'", LUNET, script, work))
  local pid = io.open(work .. "/pid"):read("a"):match("%d+")
  for _ = 1, 200 do
    if (size(dest .. ".part") or 0) > 20 * 1024 * 1024 then break end
    task.sleep(0.02)
  end
  h.run("kill -9 " .. pid)
  task.sleep(0.1)
  return size(dest .. ".part")
end

test("killed with SIGKILL part-way, resumed by a new process: byte-identical, only the rest fetched", function()
  local dest = work .. "/resumed.bin"
  local partial = killed_download(NGINX .. "/slow/big200.bin", dest)
  truthy(partial and partial > 0 and partial < 200 * 1024 * 1024, "a partial file: " .. tostring(partial))
  truthy(exists(dest .. ".part.meta"), "the validators were saved beside it")
  truthy(not exists(dest), "nothing under the final name")
  local mark = h.settled_size(LOG)   -- once the killed process's request is logged
  local r = http.download(NGINX .. "/slow/big200.bin", dest, { resume = true, sha256 = BIG_SUM })
  -- It resumes where its record says the bytes on disk end (download_ledger.lua): at most the
  -- part's length, since the record is brought up to date only after the data is synced.
  truthy(r.resumed_from > 0 and r.resumed_from <= partial, "resumed inside the part: " .. r.resumed_from .. " of " .. partial)
  eq(sha256sum(dest), BIG_SUM, "byte-identical")
  local lines = log_lines("/slow/big200.bin", mark)
  eq(#lines, 1, "one request")
  eq(lines[1].status, 206, "a range response")
  eq(tonumber(lines[1].range:match("^bytes=(%d+)%-")), r.resumed_from, "asked for the rest: " .. lines[1].range)
  eq(lines[1].bytes, 200 * 1024 * 1024 - r.resumed_from, "only the rest was sent")
end)

test("a file changed on the server between runs restarts from zero", function()
  local path = make_file("changing.bin", 100)
  local dest = work .. "/changing.bin"
  local partial = killed_download(NGINX .. "/slow/changing.bin", dest)
  truthy(partial and partial > 0, "a partial file")
  task.sleep(1.1)                                    -- a new Last-Modified second
  local _, new_sum = make_file("changing.bin", 100)  -- new content, new ETag
  local r = http.download(NGINX .. "/slow/changing.bin", dest, { resume = true, sha256 = new_sum })
  eq(r.resumed_from, 0, "started over")
  eq(sha256sum(dest), new_sum, "the new content")
end)

test("a server without range support restarts from zero cleanly", function()
  local dest = work .. "/noranges.bin"
  local partial = killed_download(NGINX .. "/slow/big200.bin", dest)
  truthy(partial and partial > 0, "a partial file")
  -- the same partial file, now asked of a location that ignores Range (same validators)
  local meta = io.open(dest .. ".part.meta"):read("a"):gsub("/slow/", "/noranges/")
  io.open(dest .. ".part.meta", "w"):write(meta):close()
  local r = http.download(NGINX .. "/noranges/big200.bin", dest, { resume = true, sha256 = BIG_SUM })
  eq(r.resumed_from, 0, "a 200 answer to the range request: started over")
  eq(size(dest), 200 * 1024 * 1024, "the whole file, not appended")
end)

test("a part file its record says is complete is finished without a request; an open end answered 416 too", function()
  local dest = work .. "/complete.bin"
  local total = 200 * 1024 * 1024
  h.run("cp " .. BIG .. " " .. dest .. ".part")
  local head = http.head(NGINX .. "/big200.bin")
  io.open(dest .. ".part.meta", "w"):write(json.encode({ url = NGINX .. "/big200.bin", etag = head.headers.etag,
    length = total, segments = { { first = 0, last = total - 1, done = total } } })):close()
  local mark = log_size()
  local r = http.download(NGINX .. "/big200.bin", dest, { resume = true, sha256 = BIG_SUM })
  eq(r.bytes, total, "complete")
  -- (GETs only: nginx may log the HEAD above after `mark` was taken.)
  local gets = 0
  for _, l in ipairs(log_lines("/big200.bin", mark)) do if l.method == "GET" then gets = gets + 1 end end
  eq(gets, 0, "nothing was asked of the server")
  truthy(exists(dest) and not exists(dest .. ".part"), "renamed into place")
  -- A body whose length was not known: its open-ended segment holds it all, and the server
  -- answers the range after it with 416.
  os.remove(dest)
  h.run("cp " .. BIG .. " " .. dest .. ".part")
  io.open(dest .. ".part.meta", "w"):write(json.encode({ url = NGINX .. "/big200.bin", etag = head.headers.etag,
    segments = { { first = 0, done = total } } })):close()
  mark = log_size()
  r = http.download(NGINX .. "/big200.bin", dest, { resume = true, sha256 = BIG_SUM })
  eq(r.bytes, total, "complete")
  local statuses = {}
  for _, l in ipairs(log_lines("/big200.bin", mark)) do if l.method == "GET" then statuses[#statuses + 1] = l.status end end
  eq(statuses, { 416 }, "one GET, and the server said there was nothing left")
  truthy(exists(dest) and not exists(dest .. ".part"), "renamed into place")
end)

test("segments = 4 fetches four ranges into one file, identical to one stream", function()
  local dest = work .. "/segments.bin"
  local mark = log_size()
  local r = http.download(NGINX .. "/big200.bin", dest, { segments = 4, sha256 = BIG_SUM })
  eq({ r.segments, r.bytes }, { 4, 200 * 1024 * 1024 }, "result")
  local ranges = 0
  for _, l in ipairs(log_lines("/big200.bin", mark)) do if l.status == 206 then ranges = ranges + 1 end end
  eq(ranges, 4, "four range requests")
  local fallback = http.download(NGINX .. "/noranges/big-1m.bin", work .. "/fallback.bin", { segments = 4 })
  eq(fallback.segments, nil, "a server without ranges falls back to one stream")
  eq(fallback.bytes, 1024 * 1024, "and still gets it all")
end)

test("a wrong sha256 removes the part and raises kind decode", function()
  local dest = work .. "/wrong.bin"
  local e = fails("decode", function() http.download(NGINX .. "/big-1m.bin", dest, { sha256 = string.rep("ab", 32) }) end)
  truthy(e.message:find("sha256", 1, true), e.message)
  truthy(not exists(dest) and not exists(dest .. ".part"), "nothing left behind")
end)

test("progress callbacks and on_chunk streaming", function()
  local calls, last = 0, nil
  http.download(NGINX .. "/big-1m.bin", work .. "/progress.bin", { progress = function(done, total) calls = calls + 1; last = { done, total } end })
  truthy(calls >= 1, "progress was reported")
  eq(last, { 1024 * 1024, 1024 * 1024 }, "the last report is complete")
  local got = {}
  http.download(NGINX .. "/big-1m.bin", nil, { on_chunk = function(c) got[#got + 1] = c end })
  local joined = table.concat(got)
  eq(#joined, 1024 * 1024, "every byte reached on_chunk")
  eq(joined, io.open(WWW .. "/big-1m.bin", "rb"):read("a"), "in order")
end)

test("a 100 MB upload to nginx with progress; multipart uploads", function()
  local src = work .. "/upload.bin"
  h.run("head -c " .. 100 * 1024 * 1024 .. " /dev/urandom > " .. src)
  local sum = sha256sum(src)
  local reports, last = 0, nil
  local r = http.upload(NGINX .. "/upload/up.bin", src, { method = "PUT", progress = function(done, total) reports = reports + 1; last = { done, total } end })
  truthy(r.status == 201 or r.status == 204, "stored: " .. r.status)
  eq(sha256sum(UPLOADS .. "/up.bin"), sum, "the stored file is identical")
  truthy(reports >= 2, "progress reported " .. reports .. " times")
  eq(last, { 100 * 1024 * 1024, 100 * 1024 * 1024 }, "complete")
  local bin = h.env("LUNET_HTTPBIN")
  local small = work .. "/small.txt"
  io.open(small, "w"):write("part contents"):close()
  local m = http.upload(bin .. "/post", small, { method = "POST", as = "multipart", field = "doc" })
  eq(m.json.files.doc, "part contents", "as a multipart part")
  local raw = http.upload(bin .. "/post", small, { method = "POST", content_type = "text/plain" })
  eq(raw.json.data, "part contents", "raw POST")
  fails("io", function() http.upload(bin .. "/post", work .. "/missing.bin") end, "a missing file")
end)

-- ThreadSanitizer's runtime backs part of its shadow memory with a file it creates at start-up
-- (/tmp/tsan.rodata.PID); under `ulimit -f 256` that file cannot grow, and the process dies of
-- SIGBUS before it runs any Lua. ulimit is how this test fills the disk, so not under TSan.
local full_disk = h.under_file_size_limit
test("a full disk fails with kind io and leaves nothing under the final name", full_disk, function()
  local dest = work .. "/full.bin"
  local script = work .. "/full.lua"
  io.open(script, "w"):write(string.format([[
    local ok, e = pcall(http.download, %q, %q)
    io.write(tostring(ok), " ", tostring(e and e.kind), " ", tostring(e and e.message))
  ]], NGINX .. "/big-1m.bin", dest)):close()
  -- a file-size limit of 256 KB stands in for a full disk (writes fail with EFBIG)
  local _, out = h.run("sh -c 'ulimit -f 256; " .. LUNET .. " " .. script .. "'")
  truthy(out:find("^false io "), out)
  truthy(not exists(dest), "no file under the final name")
end)

test("bad arguments", function()
  fails("argument", function() http.download(42, "x") end)
  fails("argument", function() http.download(NGINX .. "/x", 42) end)
  fails("argument", function() http.download(NGINX .. "/x", "y", { segments = 0 }) end)
  local e = fails("status", function() http.download(NGINX .. "/no-such-file", work .. "/404.bin") end)
  eq(e.response.status, 404, "a 404 is a status error")
  truthy(not exists(work .. "/404.bin"), "nothing under the final name")
end)

h.cleanup(after_all, function()
  os.remove(WWW .. "/big200.bin")
  os.remove(WWW .. "/changing.bin")
  os.execute("rm -rf " .. work)
end)
h.done()
