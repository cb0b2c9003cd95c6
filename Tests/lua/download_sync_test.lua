-- Issue 35, item 10: what a download asks of the disk, and in what order, traced with strace
-- (every sync call and rename, with the file each fd names). The guarantees (docs/downloads.md):
-- a record never names a byte that is not on disk (the part's data synced before each record
-- replaces the last); the final name appears only for a complete file, and with
-- `durable = true` the file is synced before the rename and the directory after it. What it no
-- longer does: sync the directory at every record (a journal commit each time).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local WWW = h.env("LUNET_NGINX_WWW")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
-- strace installed (scripts/deps test) and allowed to trace here (a container may forbid ptrace).
local has_strace = h.run("strace -qq -e trace=none true >/dev/null 2>&1") == 0

-- A 48 MiB file: past the 32 MiB writeback mark, and long enough for a record or two.
local SIZE = 48 * 1048576
local name = "sync-test-" .. math.random(1e9) .. ".bin"
if has_strace then
  assert(h.run("head -c " .. SIZE .. " /dev/urandom > " .. q(WWW .. "/" .. name)) == 0)
  h.cleanup(after_all, function() os.remove(WWW .. "/" .. name) end)
end

-- Downloads with `options` (Lua source) under strace; the traced calls as { call, path, to }.
local function traced(options)
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local dest, trace = dir .. "/file.bin", dir .. "/trace"
  local code, out = h.run("strace -f -y -qq -e trace=fsync,fdatasync,rename,sync_file_range -o " .. q(trace) .. " " ..
    q(LUNET) .. " -e " .. q("http.download(" .. string.format("%q", NGINX .. "/" .. name) .. ", " .. string.format("%q", dest) ..
    ", " .. options .. ")") .. " 2>&1")
  eq(code, 0, out)
  local calls = {}
  for line in io.lines(trace) do
    local call, args = line:match("^%d*%s*(%w+)%((.*)%)%s*=")
    if call then
      local path = args:match("^%d+<([^>]*)>")
      local from, to = args:match('^"([^"]*)", "([^"]*)"')
      calls[#calls + 1] = { call = call, path = path or from, to = to }
    end
  end
  local size = h.run("test $(stat -c %s " .. q(dest) .. ") = " .. SIZE) == 0
  truthy(size, "the file is whole")
  os.execute("rm -rf " .. q(dir))
  return calls, dest, dir
end

local function check_records(calls, dest)
  local part, meta = dest .. ".part", dest .. ".part.meta"
  local records, synced_since = 0, false
  for i, c in ipairs(calls) do
    if (c.call == "fdatasync" or c.call == "fsync") and c.path == part then synced_since = true end
    if c.call == "rename" and c.to == meta then
      records = records + 1
      -- The first record is made at the head, before any byte (validators only).
      if records > 1 then truthy(synced_since, "record " .. records .. " (call " .. i .. ") after the part's data was synced") end
      synced_since = false
    end
  end
  truthy(records >= 2, "records were kept while the body arrived: " .. records)
end

local function directory_syncs(calls, dir)
  local n = 0
  for _, c in ipairs(calls) do if c.call == "fsync" and c.path == dir then n = n + 1 end end
  return n
end

test("durable: every record after a data sync; the file synced, renamed, then its directory, once", { skip = not has_strace and "strace is not installed or cannot trace here" }, function()
  local calls, dest, dir = traced("{ durable = true }")
  check_records(calls, dest)
  local part = dest .. ".part"
  local final_rename
  for i, c in ipairs(calls) do if c.call == "rename" and c.path == part and c.to == dest then final_rename = i end end
  truthy(final_rename, "the part was renamed into place")
  local synced_before = false
  for i = final_rename - 1, 1, -1 do
    local c = calls[i]
    if c.call == "rename" then break end
    if c.call == "fsync" and c.path == part then synced_before = true end
  end
  truthy(synced_before, "the file was synced after the last record and before its rename")
  local last = calls[#calls]
  eq({ last.call, last.path }, { "fsync", dir }, "the directory is synced last, after the rename")
  eq(directory_syncs(calls, dir), 1, "and only then: records do not sync the directory")
end)

test("not durable: the records still follow data syncs; no directory sync at all", { skip = not has_strace and "strace is not installed or cannot trace here" }, function()
  local calls, dest, dir = traced("{}")
  check_records(calls, dest)
  eq(directory_syncs(calls, dir), 0, "no directory sync")
end)

h.done()
