--- `lunet load merge A.json B.json ...`: shards' results (lunet.load.result) put back together
--- exactly: counters and rates add, histograms add bucket by bucket (a percentile of the merge
--- is the percentile of every sample, never an average of percentiles), the seconds of the
--- shards add where they fall on the same wall-clock second. Thresholds are judged on the
--- merged figures, with a single run's exit statuses. Files that are not one test's shards, each
--- once, whole and consistent, are refused with the file named (exit 2): a wrong total is never
--- printed.
local json = require "lunet.json"
local hdr = require "lunet.load.hdr"
local metrics = require "lunet.load.metrics"
local thresholds = require "lunet.load.thresholds"
local summary = require "lunet.load.summary"
local result = require "lunet.load.result"
local outputs = require "lunet.load.outputs"
local report_model = require "lunet.load.report_model"

local M = {}

M.usage = [[
usage: lunet load merge RESULT.json ... [--report FILE.html] [--summary-export FILE]
  --report FILE.html       the merged report, as lunet load --report writes it
  --summary-export FILE    the merged summary as k6's --summary-export writes it
Each RESULT.json is an --out json file of one shard (its last line is the shard's result) or
a file holding that line alone (a pod's last log line). Exit status: 0; 99 a threshold was
crossed; 2 the files are not one test's shards, each once, whole.]]

--- The last non-empty line of file `path`, read from its end (an --out json file can be large
--- and only its last line counts) in blocks kept in a list: each block is scanned once, so a
--- huge last line costs its length, not its length squared. Returns the line, or nil and a message.
--- The longest result line read (a run's summary and its per-second series): a file whose last
--- line is longer is refused before it is held whole.
M.MAX_RESULT = 128 << 20

function M.last_line(path, max)
  max = max or M.MAX_RESULT
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local pos, BLOCK = f:seek("end"), 1 << 20
  local blocks, started = {}, false   -- blocks of the line, last first; started: past the final line ends
  local held = 0
  while pos > 0 do
    if held > max then
      f:close()
      return nil, string.format("its last line is over %d MB: not a result lunet load wrote", max >> 20)
    end
    local n = math.min(BLOCK, pos)
    pos = pos - n
    f:seek("set", pos)
    local block = f:read(n)
    if not started then
      block = block:match("^(.-)[\r\n]*$")
      started = block ~= ""
    end
    local cut = block:find("[\r\n][^\r\n]*$")
    blocks[#blocks + 1] = cut and block:sub(cut + 1) or block
    held = held + #blocks[#blocks]
    if cut then break end
  end
  f:close()
  if not started then return nil, "it is empty" end
  if held > max then return nil, string.format("its last line is over %d MB: not a result lunet load wrote", max >> 20) end
  local parts = {}
  for i = #blocks, 1, -1 do parts[#parts + 1] = blocks[i] end
  return table.concat(parts)
end

-- Each source's result data, checked one by one and then together. Returns the list in shard
-- order, or nil and a message naming the file.
local function read_all(sources)
  if #sources == 0 then return nil, "no results to merge" end
  local list, by_index = {}, {}
  for _, src in ipairs(sources) do
    local ok, record = pcall(json.decode, src.text or "")
    if not ok or type(record) ~= "table" then
      return nil, string.format("%s: truncated or corrupt: its last line is not a whole JSON record", src.name)
    end
    if record.type ~= "Result" then
      return nil, string.format("%s: no result record at its end (the run did not finish, or the file was cut short)", src.name)
    end
    local data, problem = result.check(record)
    if not data then return nil, string.format("%s: corrupt result: %s", src.name, problem) end
    local first = list[1]
    if first then
      if data.test ~= first.data.test then
        return nil, string.format("%s and %s are results of different tests (or of one script run with other options)", first.name, src.name)
      end
      if data.shard.count ~= first.data.shard.count then
        return nil, string.format("%s is shard %d of %d, %s of %d", src.name, data.shard.index, data.shard.count, first.name, first.data.shard.count)
      end
    end
    local twice = by_index[data.shard.index]
    if twice then return nil, string.format("shard %d is given twice: %s and %s", data.shard.index, twice.name, src.name) end
    local entry = { name = src.name, data = data }
    by_index[data.shard.index] = entry
    list[#list + 1] = entry
  end
  local count = list[1].data.shard.count
  for i = 0, count - 1 do
    if not by_index[i] then return nil, string.format("shard %d of %d is missing (given: %d file%s)", i, count, #list, #list == 1 and "" or "s") end
  end
  table.sort(list, function(a, b) return a.data.shard.index < b.data.shard.index end)
  return list
end

-- The shards' seconds added where they share a wall-clock second (in the widest span any
-- shard's series reached: lunet.load.series).
local function merge_series(list)
  local lists, span = {}, 1
  for i, e in ipairs(list) do
    lists[i] = e.data.series
    for _, b in ipairs(e.data.series) do if (b.span or 1) > span then span = b.span end end
  end
  return require("lunet.load.series").rebucket(lists, span)
end

-- Checks by name (in the first shard's order, then any new ones), failures by message.
local function merge_checks_and_failures(list)
  local checks, by_name, failures, by_message = {}, {}, {}, {}
  for _, e in ipairs(list) do
    for _, c in ipairs(e.data.checks) do
      local m = by_name[c.name]
      if not m then m = { name = c.name, passes = 0, fails = 0 }; by_name[c.name] = m; checks[#checks + 1] = m end
      m.passes, m.fails = m.passes + c.passes, m.fails + c.fails
    end
    for _, f in ipairs(e.data.failures) do
      local m = by_message[f.message]
      if not m then m = { message = f.message, count = 0, scenario = f.scenario }; by_message[f.message] = m; failures[#failures + 1] = m end
      m.count = m.count + f.count
    end
  end
  return checks, failures
end

--- The merged figures of `sources` ({ name, text } each: a file's name and its result line):
--- { registry, series, checks, failures, thresholds (parsed), trend_stats, elapsed, shards,
--- script, interrupted, aborted }, or nil and a message naming the file.
function M.combine(sources)
  local list, err = read_all(sources)
  if not list then return nil, err end
  local registry = metrics.registry()
  local elapsed, interrupted, aborted = 0, {}, false
  -- The merged run: from the first shard's start to the last one's end (the report's seconds).
  local started, ended = math.huge, -math.huge
  for _, e in ipairs(list) do
    started, ended = math.min(started, e.data.started), math.max(ended, e.data.started + e.data.elapsed)
  end
  for _, e in ipairs(list) do
    registry:absorb(e.data.metrics)
    elapsed = math.max(elapsed, e.data.elapsed)
    if e.data.interrupted then interrupted[#interrupted + 1] = e.data.shard.index end
    aborted = aborted or e.data.aborted
  end
  local series = merge_series(list)
  -- The most VUs at once: the shards' VUs added second by second (a sum of each shard's own
  -- most would count VUs that ran at different times).
  local vus = registry.metrics.vus
  if vus and #series > 0 then
    local most = 0
    for _, b in ipairs(series) do if b.vus > most then most = b.vus end end
    for _, s in pairs(vus.sinks) do if s.value ~= nil then s.max = most end end
  end
  local checks, failures = merge_checks_and_failures(list)
  local ok, parsed = pcall(thresholds.parse, list[1].data.thresholds)
  if not ok then return nil, string.format("%s: its thresholds do not parse: %s", list[1].name, type(parsed) == "table" and parsed.usage or tostring(parsed)) end
  return { registry = registry, series = series, checks = checks, failures = failures, thresholds = parsed,
           trend_stats = list[1].data.trend_stats, elapsed = elapsed, started = started, ended = ended,
           shards = #list, script = list[1].data.script,
           interrupted = interrupted, aborted = aborted }
end

--- Merges `sources` and writes the summary, and opts.report / opts.summary_export; the exit
--- status (0, 99 a threshold crossed or a shard stopped by one, 130 a shard stopped early by
--- Ctrl-C or SIGTERM, 2 the sources do not merge).
function M.run(sources, opts, stdout, stderr)
  local m, err = M.combine(sources)
  if not m then stderr:write("lunet load merge: ", err, "\n"); return 2 end
  local passed, verdicts = thresholds.judge_all(m.thresholds, m.registry, m.elapsed, summary.percentiles(m.trend_stats))
  if #m.interrupted > 0 then
    stderr:write("lunet load merge: shard", #m.interrupted == 1 and " " or "s ", table.concat(m.interrupted, ", "),
      " stopped early (Ctrl-C or SIGTERM): the figures are what ran\n")
  end
  local safe = require "lunet.terminal_safe"
  local view = { registry = m.registry, elapsed = m.elapsed, checks = m.checks, verdicts = verdicts,
                 trend_stats = m.trend_stats, thresholds = m.thresholds }
  -- The script's name comes from the files: shown escaped, never obeyed by the terminal.
  stderr:write(string.format("lunet load merge: %d shard%s of %s\n", m.shards, m.shards == 1 and "" or "s",
    safe.line(tostring(m.script or "?"))))
  local written = outputs.conclude({
    failures = m.failures, view = view, summary_export = opts.summary_export, report = opts.report,
    report_model = function()
      return report_model.build({ title = m.script, shards = m.shards, started = m.started, ended = m.ended, elapsed = m.elapsed, registry = m.registry,
        series = m.series, checks = m.checks, thresholds = m.thresholds, passed = passed and not m.aborted })
    end,
  }, stdout, stderr)
  if not passed or m.aborted then return 99 end
  if not written then return 1 end
  -- Shards stopped early: the merge is of an incomplete run, and says so as that run would have.
  return #m.interrupted > 0 and 130 or 0
end

--- `lunet load merge` with the words after `merge`; the exit status.
function M.main(args, stdout, stderr)
  local ok, c = pcall(require("lunet.cli.argv").read, args,
    { takes = { ["--report"] = "report", ["--summary-export"] = "summary_export" }, flags = { ["--help"] = "help", ["-h"] = "help" },
      help = "lunet load merge --help" },
    function(message) error({ usage = message }, 0) end,
    function(c, a) c.files = c.files or {}; c.files[#c.files + 1] = a end)
  if not ok then
    if type(c) == "table" and c.usage then stderr:write("lunet load merge: ", c.usage, "\n") return 2 end
    error(c, 0)
  end
  if c.help then stdout:write(M.usage, "\n") return 0 end
  local files, opts = c.files or {}, { report = c.report, summary_export = c.summary_export }
  if #files == 0 then stderr:write("lunet load merge: which results? ", M.usage, "\n"); return 2 end
  local sources = {}
  for _, path in ipairs(files) do
    local line, err = M.last_line(path)
    if not line then stderr:write("lunet load merge: ", path, ": ", tostring(err), "\n"); return 2 end
    sources[#sources + 1] = { name = path, text = line }
  end
  return M.run(sources, opts, stdout, stderr)
end

return M
