-- `lunet load` against ../shared/HOSTILE.md's classes, second part: what a careless script grows
-- (distinct failure messages, tagged requests', custom metrics' and checks' names and tag sets), values no request
-- has in the histograms, result files a merge reads (hostile failures, a huge last line), and
-- output paths where no file can be written.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end
local NGINX = h.env("LUNET_NGINX")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- `lunet load` on `source` with `args` under /usr/bin/time: the exit status, stdout, stderr,
-- the seconds it took and its peak memory in KiB.
local function load(source, args)
  local script = h.temp_file(source, ".lua")
  local err, mem = h.tmpname(), h.tmpname()
  local t0 = os.time()
  local code, out = h.run("{ /usr/bin/time -f %M -o " .. q(mem) .. " " .. q(LUNET) .. " load --quiet " .. q(script) .. " "
    .. (args or "") .. " 2>" .. q(err) .. "; }")
  return code, out, h.read_file(err) or "", os.time() - t0, tonumber((h.read_file(mem) or ""):match("(%d+)%s*$")) or 0
end

test("distinct failure messages are bounded: kept by the hundred, long ones cut, every failure counted", function()
  local stream = h.tmpname()
  local code, out, err, secs, kib = load([[
options = { iterations = 60000, vus = 4 }
return function(vu) error("failure " .. vu.iteration .. "-" .. vu.id .. string.rep("x", 20000), 0) end]],
    "--out json=" .. q(stream))
  eq(code, 0, err)
  h.time_bound(secs, 20, "bounded in time: " .. secs .. " s")
  h.memory_bound(kib, 120 * 1024, "bounded in memory: " .. kib .. " KiB")
  local last
  for line in io.lines(stream) do last = line end
  truthy(#last < 4 * 1024 * 1024, "the result line is bounded: " .. #last .. " bytes")
  local failures = json.decode(last).data.failures
  truthy(#failures <= 101, "at most 100 messages and the shared one: " .. #failures)
  local total, longest = 0, 0
  for _, f in ipairs(failures) do total, longest = total + f.count, math.max(longest, #f.message) end
  eq(total, 60000, "every failure counted")
  truthy(longest <= 4200, "a message is cut: " .. longest)
  truthy(out:find("iteration_failed.-60000", 1), "the summary counts them all:\n" .. out:sub(1, 2000))
end)

test("tagged requests are bounded as untagged ones are: past 10,000 tag sets, one shared name", function()
  local stream = h.tmpname()
  local code, out, err, secs = load(string.format([[
options = { scenarios = { ids = { executor = "shared-iterations", vus = 32, iterations = 10200 } } }
return function(vu) vu.session:get(%q, { tags = { name = "small", id = vu.iteration .. "-" .. vu.id } }) end]], NGINX .. "/small.txt"),
    "--out json=" .. q(stream))
  eq(code, 0, err)
  h.time_bound(secs, 60, "bounded in time: " .. secs .. " s")
  local sets, other = {}, 0
  for line in io.lines(stream) do
    local e = json.decode(line)
    if e.metric == "http_reqs" and e.data.tags then
      sets[(e.data.tags.name or "") .. "\1" .. (e.data.tags.id or "")] = true
      if e.data.tags.name == "(other names)" then other = other + e.data.count end
    end
  end
  local n = 0
  for _ in pairs(sets) do n = n + 1 end
  eq(n, 10001, "10,000 tag sets and the shared one")
  eq(other, 200, "the requests past the bound, under the shared name, their id tag dropped")
  truthy(out:find("http_reqs.-10200", 1), "every request counted:\n" .. out:sub(1, 2000))
end)

test("hdr: values no request has (negative, infinite, past 2^63, NaN) are floored, clamped or skipped", function()
  local hdr = require "lunet.load.hdr"
  local a, b = hdr.new(), hdr.new()
  local g = hdr.group({ a, b })
  for _, v in ipairs({ -math.huge, -1, math.mininteger, -0.0, math.huge, math.maxinteger, 2.0 ^ 63, 1e300, 0 / 0 }) do
    hdr.record(a, v)
    hdr.record_group(g, v, v)
  end
  eq({ a.count, a.min, a.max, a.clamped }, { 16, 0, hdr.HIGHEST, 8 }, "eight values twice, NaN not kept")
  eq({ b.count, b.sum, b.clamped }, { 8, 4 * hdr.HIGHEST, 4 }, "the group's second histogram")
  eq(a:encode().count, 16, "and it encodes")
end)

-- `lunet load merge` on `files`: the exit status, stdout, stderr and the seconds it took.
local function merge(files)
  local err, args = h.tmpname(), {}
  for i, f in ipairs(files) do args[i] = q(f) end
  local t0 = os.time()
  local code, out = h.run("{ " .. q(LUNET) .. " load merge " .. table.concat(args, " ") .. " 2>" .. q(err) .. "; }")
  return code, out, h.read_file(err) or "", os.time() - t0
end

test("merge refuses a result whose failures are not messages with counts, naming the place", function()
  local stream = h.tmpname()
  local code, _, err = load([[
options = { iterations = 2, vus = 1 }
return function(vu) error("boom", 0) end]], "--out json=" .. q(stream))
  eq(code, 0, err)
  local last
  for line in io.lines(stream) do last = line end
  for _, failures in ipairs({ { 5 }, { { message = {}, count = 1, scenario = "default" } },
      { { message = "x", count = "y", scenario = "default" } }, { { message = "x", count = -5, scenario = "default" } },
      { { message = "x", count = 1, scenario = {} } } }) do
    local record = json.decode(last)
    record.data.failures = failures
    local file = h.temp_file(json.encode(record) .. "\n", ".json")
    local mcode, _, merr = merge({ file })
    eq(mcode, 2, "refused: " .. json.encode(failures) .. "\n" .. merr)
    truthy(merr:find("/data/failures/0", 1, true) and not merr:find("traceback", 1, true), "the place named, no traceback:\n" .. merr)
  end
end)

test("merge reads a huge last line in linear time: 48 MiB without a line end is refused in seconds", function()
  local file = h.tmpname()
  local f = assert(io.open(file, "wb"))
  local block = string.rep("x", 1 << 20)
  f:write('{"type":"Result"}\n')
  for _ = 1, 48 do f:write(block) end
  f:write("\n\n")
  f:close()
  local code, _, err, secs = merge({ file })
  eq(code, 2, err)
  truthy(err:find("truncated or corrupt", 1, true), err)
  h.time_bound(secs, 8, "bounded in time: " .. secs .. " s")
  os.remove(file)
end)

test("--summary-export and --report where no file can be written: said before the run, nothing left", function()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local script = [[
options = { iterations = 1, vus = 1 }
return function(vu) sleep(30) end]]
  for _, c in ipairs({ { "--summary-export", dir, "Is a directory" }, { "--summary-export", dir .. "/no/such/x.json", "No such file" },
                       { "--report", dir, "Is a directory" }, { "--report", dir .. "/no/r.html", "No such file" } }) do
    local code, _, err, secs = load(script, c[1] .. " " .. q(c[2]))
    eq(code, 2, c[1] .. " " .. c[2] .. ": " .. err)
    truthy(err:find(c[2], 1, true) and err:find(c[3], 1, true), "named, with why:\n" .. err)
    truthy(secs <= 10, "before the run: " .. secs .. " s")
  end
  local left = io.popen("ls -A " .. q(dir)):read("a")
  eq(left, "", "nothing left in the directory")
end)

test("a custom metric's tag sets are bounded: past 10,000, new ones share one, every sample kept", function()
  local export = h.tmpname()
  local code, out, err, secs, kib = load([[
options = { iterations = 120000, vus = 4 }
local t, c = metrics.trend("per_user"), metrics.counter("per_user_count")
return function(vu)
  local tags = { user = vu.iteration .. "-" .. vu.id }
  t:add(1, tags)
  c:add(1, tags)
end]], "--summary-export " .. q(export))
  eq(code, 0, err)
  h.time_bound(secs, 30, "bounded in time: " .. secs .. " s")
  h.memory_bound(kib, 60 * 1024, "bounded in memory: " .. kib .. " KiB")
  truthy(err:find("per_user", 1, true) and err:find("10000 tag sets", 1, true), "said once, naming the metric:\n" .. err)
  eq(json.decode(h.read_file(export)).metrics.per_user_count.count, 120000, "every sample in the metric's total")
  truthy(out:find("per_user", 1, true), out:sub(1, 2000))
end)

test("check names and check tags are bounded: past 1,000 names one shared name, every check counted", function()
  local export = h.tmpname()
  local code, out, err, secs, kib = load([[
options = { iterations = 30000, vus = 4 }
return function(vu)
  check(vu.iteration, { ["item " .. vu.iteration .. "-" .. vu.id .. " ok"] = function() return true end }, { user = vu.iteration .. "-" .. vu.id })
end]], "--summary-export " .. q(export))
  eq(code, 0, err)
  h.time_bound(secs, 30, "bounded in time: " .. secs .. " s")
  h.memory_bound(kib, 60 * 1024, "bounded in memory: " .. kib .. " KiB")
  truthy(err:find("1000 check names", 1, true), "said once:\n" .. err)
  local _, lines = out:gsub("item %d+%-%d+ ok", "")
  eq(lines, 1000, "the summary lists the first thousand names")
  truthy(out:find("(other checks)", 1, true), out:sub(1, 500))
  local checks = json.decode(h.read_file(export)).metrics.checks
  eq(checks.passes, 30000, "every check counted")
end)

h.done()

-- Issue 46, item 5: a check's name, or a tag's value, whose __tostring raises never ends the run:
-- the summary and the export are written, the thresholds judged.
test("a check named by a value whose __tostring raises, and such a tag: the run ends with its summary", function()
  local export = h.tmpname()
  local code, out, err = load([[
options = { iterations = 3, vus = 1, thresholds = { checks = { "rate > 0.5" } } }
local bad = setmetatable({}, { __tostring = function() error("no text for you") end })
return function(vu)
  check(1, { [bad] = function() return true end, plain = function() return true end }, { weird = bad })
end]], "--summary-export " .. q(export))
  eq(code, 0, err)
  local summary = json.decode(assert(h.read_file(export)))
  eq(summary.metrics.checks.passes, 6, "both checks counted on each of 3 iterations")
  truthy(not out:find("no text for you", 1, true), "the name's error is not the run's")
end)
