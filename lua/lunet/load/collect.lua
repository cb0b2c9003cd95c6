--- `lunet load collect JOB`: the results of a sharded run on Kubernetes (lunet load k8s), merged.
--- It asks kubectl for the Job's pods, takes for each completion index the pod that succeeded
--- (else the latest, and says that index failed), reads the last line of each pod's log, the
--- shard's result (`lunet load --result-line`), and hands them to lunet.load.merge, which prints
--- the summary of the whole run and judges its thresholds.
--- main(args, stdout, stderr) returns merge's exit status, or 2 when the results cannot be had
--- (kubectl missing or failing, no pods, an index missing, a log without a result line).
local json = require "lunet.json"

local M = {}

M.usage = [[
usage: lunet load collect JOB [options]
  --namespace NS, -n NS    the Job's namespace (default: kubectl's)
  --kubectl PATH           the kubectl to run (default: kubectl, from PATH)
  --timeout D              each kubectl call's limit (kubectl --request-timeout; default 5m), and
                           kubectl's own (stopped 5 s after it)
  --report FILE            the merged report, as lunet load --report writes it
  --summary-export FILE    the merged summary as k6's --summary-export writes it
Run it once the Job is done (kubectl wait --for=condition=complete job/JOB, or failed).]]

local INDEX = "batch.kubernetes.io/job-completion-index"
local PARALLEL_LOGS = 8   -- kubectl logs running at once

-- The longest line of a log kept (a shard's result line holds its histograms and up to ~36 MB
-- of seconds), and the most `kubectl get pods` may print.
M.MAX_LINE_BYTES = 256 * 1024 * 1024
local DEFAULT_TIMEOUT = 300

local terminal_safe = require "lunet.terminal_safe"

-- A log's line, kubectl's message: what a script or a server wrote, shown on a terminal with its
-- control bytes escaped (\x1b), never obeyed; line feeds kept.
local function shown(v)
  if type(v) ~= "string" then return v end
  return (terminal_safe.text(v):gsub("\r\n", "\n"))
end

local function fail(fmt, ...)
  local args = table.pack(...)
  for i = 1, args.n do args[i] = shown(args[i]) end
  error({ collect = string.format(fmt, table.unpack(args, 1, args.n)) }, 0)
end

local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local TAKES = { ["--namespace"] = "namespace", ["-n"] = "namespace", ["--kubectl"] = "kubectl",
                ["--report"] = "report", ["--summary-export"] = "summary_export", ["--timeout"] = "timeout" }

-- A DNS-1123 label (a Job's, a namespace's name), or with dots a subdomain (a pod's name): what
-- Kubernetes takes, so a name that kubectl would read as an option (--kubeconfig=...) is none.
local function is_name(v, subdomain)
  if type(v) ~= "string" or v == "" or #v > (subdomain and 253 or 63) then return false end
  for label in (v .. "."):gmatch("(.-)%.") do
    if not label:match("^[a-z0-9][a-z0-9-]*$") or label:sub(-1) == "-" or #label > 63 or (not subdomain and label ~= v) then return false end
  end
  return true
end

--- The command line: { job, namespace, kubectl, timeout (seconds), report, summary_export, help }.
function M.parse_args(args)
  local c = require("lunet.cli.argv").read(args, { takes = TAKES, flags = { ["--help"] = "help", ["-h"] = "help" },
    help = "lunet load collect --help" }, function(message) fail("%s", message) end,
    function(c, a)
      if c.job then fail("one Job only: '%s' and '%s'", c.job, a) end
      c.job = a
    end)
  if c.help then return c end
  if not c.job then fail("which Job? lunet load collect JOB (the name lunet load k8s printed)") end
  -- Names Kubernetes would refuse are refused here, where the message can say why.
  for _, k in ipairs({ "job", "namespace" }) do
    local v = c[k]
    if v and not is_name(v) then
      fail("%s '%s' is not a Kubernetes name (a DNS-1123 label: lower-case letters, digits and '-', at most 63)", k == "job" and "the Job" or "--namespace", terminal_safe.line(v))
    end
  end
  c.kubectl = c.kubectl or "kubectl"
  local timeout, err = require("lunet.load.options").duration(c.timeout or DEFAULT_TIMEOUT, "--timeout")
  if not timeout or timeout <= 0 then fail("%s", err or "--timeout must be more than 0") end
  c.timeout = math.ceil(timeout)
  return c
end

-- How much longer than --timeout a kubectl may run before it is stopped: its request limit
-- covers the API server's answer only, not kubectl's own start or a stall of its own.
M.KILL_GRACE = 5

-- kubectl's command line for `words`, its stderr to `err_path`. Every request has a time limit
-- (kubectl's default is none: a server that accepts and never answers would hold collect), and
-- so has kubectl itself (coreutils' timeout: TERM at --timeout + KILL_GRACE, KILL 5 s later).
local function command_line(c, words, err_path)
  local parts = { "timeout", "--kill-after=5", tostring(c.timeout + M.KILL_GRACE), sh(c.kubectl) }
  for i, w in ipairs(words) do
    parts[#parts + 1] = sh(w)
    if i == 1 then parts[#parts + 1] = sh("--request-timeout=" .. c.timeout .. "s") end
  end
  return table.concat(parts, " ") .. " 2>" .. sh(err_path)
end

-- Starts kubectl with `words`; returns a handle for finish().
local function start(c, words)
  local err_path = os.tmpname()
  return { pipe = io.popen(command_line(c, words, err_path), "r"), err_path = err_path, words = words }
end

-- Reads what a started kubectl prints, block by block, into keep(block); by default all of it,
-- up to M.MAX_LINE_BYTES.
local function drain(h, keep)
  local parts, size = {}, 0
  keep = keep or function(block)
    size = size + #block
    if size <= M.MAX_LINE_BYTES then parts[#parts + 1] = block end
  end
  while true do
    local block = h.pipe:read(1 << 16)
    if not block then break end
    keep(block)
  end
  return table.concat(parts), size > M.MAX_LINE_BYTES
end

-- Waits for a started kubectl: its stdout (through keep, when given), or raises naming what it
-- was asked and quoting what it said.
local function finish(c, h, keep)
  local out, over = drain(h, keep)
  local _, _, code = h.pipe:close()
  local f = io.open(h.err_path, "rb")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(h.err_path)
  if code == 127 then fail("cannot run kubectl ('%s'): not found (--kubectl PATH names another)", c.kubectl) end
  if code == 124 or code == 137 then
    fail("'kubectl %s' did not finish within --timeout %d s (and %d s more): stopped", table.concat(h.words, " "), c.timeout, M.KILL_GRACE)
  end
  if code ~= 0 then
    err = err:gsub("%s+$", "")
    fail("'kubectl %s' failed (exit %s)%s", table.concat(h.words, " "), tostring(code),
      err ~= "" and (": " .. (#err > 2000 and (err:sub(1, 2000) .. "...") or err)) or " and said nothing")
  end
  if over then fail("'kubectl %s' printed more than %d MiB", table.concat(h.words, " "), M.MAX_LINE_BYTES >> 20) end
  return out
end

local function kubectl(c, words) return finish(c, start(c, words)) end

local function scope(c, words)
  if c.namespace then table.insert(words, 2, "-n") table.insert(words, 3, c.namespace) end
  return words
end

-- The shard count the pods' command gives (--shards N), else nil.
local function shards_of(pod)
  local containers = pod.spec and pod.spec.containers or {}
  for _, ct in ipairs(containers) do
    local words = ct.command or {}
    for i, w in ipairs(words) do
      if w == "--shards" then return math.tointeger(tonumber(words[i + 1])) end
      local n = type(w) == "string" and w:match("^%-%-shards=(%d+)$")
      if n then return math.tointeger(tonumber(n)) end
    end
  end
end

-- Whether pod a should stand for its index rather than pod b: one that succeeded first, then
-- the latest created.
local function better(a, b)
  local sa, sb = a.phase == "Succeeded", b.phase == "Succeeded"
  if sa ~= sb then return sa end
  return a.created > b.created
end

--- The Job's pods by completion index: { count = N, [i] = { name, phase, created, tried } },
--- `tried` counting the index's pods. Raises when there are none or an index has no pod.
function M.pick(c, list)
  local by_index, count = {}, 0
  for _, pod in ipairs(list.items or {}) do
    local meta = pod.metadata or {}
    local index = math.tointeger(tonumber((meta.annotations or {})[INDEX] or ""))
    if index and meta.name then
      if not is_name(meta.name, true) then
        fail("job %s index %d: its pod's name '%s' is not a Kubernetes name: not asked for its log", c.job, index, terminal_safe.line(tostring(meta.name)))
      end
      local p = { name = meta.name, phase = (pod.status or {}).phase or "Unknown", created = meta.creationTimestamp or "", index = index }
      local held = by_index[index]
      p.tried = (held and held.tried or 0) + 1
      if not held or better(p, held) then by_index[index] = p else held.tried = p.tried end
      count = math.max(count, index + 1, shards_of(pod) or 0)
    end
  end
  local where = c.job .. (c.namespace and (" in namespace " .. c.namespace) or "")
  if count == 0 then
    fail("no pods of job %s (kubectl get pods -l job-name=%s): is the name right? Its pods are removed a day after it ends", where, c.job)
  end
  for i = 0, count - 1 do
    if not by_index[i] then fail("job %s has no pod for index %d of %d: its result is missing (a pod deleted?)", where, i, count) end
  end
  by_index.count = count
  return by_index
end

-- A log read as it comes, keeping its last two lines that are not blank: { text }, or for a
-- line over M.MAX_LINE_BYTES { text = its first 200 bytes, long = its length }. Memory is the
-- longest line kept, however long the log.
local function log_end()
  local k = { lines = {} }
  local parts, size, head = {}, 0, nil
  local function line_done()
    local line = head and { text = head, long = size } or { text = table.concat(parts) }
    parts, size, head = {}, 0, nil
    if line.long or line.text:find("%S") then k.lines[1], k.lines[2] = k.lines[2], line end
  end
  local function add(piece)
    size = size + #piece
    if head then return end
    parts[#parts + 1] = piece
    if size > M.MAX_LINE_BYTES then head, parts = table.concat(parts):sub(1, 200), {} end
  end
  function k.feed(block)
    local i = 1
    while true do
      local j, e = block:find("[\r\n]+", i)
      add(block:sub(i, (j or #block + 1) - 1))
      if not j then return end
      line_done()
      i = e + 1
    end
  end
  function k.lines_at_end() line_done() return k.lines end
  return k
end

-- What lunet load writes on stderr after the result line (a pod's log holds both streams).
local AFTER_RESULT = "lunet load: thresholds crossed:"

-- The shard's result in a log: its last line that is not blank, or the one before when that is
-- lunet's own line after the result; a JSON object of type "Result". The text, or raises
-- naming the index and the pod.
local function result_line(c, p, lines)
  local last = lines[2]
  if last and not last.long and last.text:find(AFTER_RESULT, 1, true) == 1 and lines[1] then last = lines[1] end
  local what = string.format("job %s index %d (pod %s, %s)", c.job, p.index, p.name, p.phase)
  if not last then fail("%s: its log is empty: the shard printed no result line", what) end
  if last.long then
    fail("%s: the last line of its log is over %d MiB (%d bytes), not a result line: %s...", what, M.MAX_LINE_BYTES >> 20, last.long, last.text)
  end
  local text = last.text:gsub("^%s+", ""):gsub("%s+$", "")
  local ok, t = pcall(json.decode, text)
  if not ok or type(t) ~= "table" or t.type ~= "Result" then
    fail("%s: the last line of its log is not a result line (lunet load --result-line): %s", what, #text > 200 and (text:sub(1, 200) .. "...") or text)
  end
  return text
end

--- The sources merge takes, ordered by index: { name = "JOB index I (pod P)", text = LINE }.
--- The logs are read PARALLEL_LOGS at a time.
function M.sources(c, pods)
  local sources = {}
  for first = 0, pods.count - 1, PARALLEL_LOGS do
    local running = {}
    for i = first, math.min(first + PARALLEL_LOGS, pods.count) - 1 do
      running[i] = start(c, scope(c, { "logs", pods[i].name }))
    end
    for i = first, math.min(first + PARALLEL_LOGS, pods.count) - 1 do
      local kept = log_end()
      local ok, log = pcall(finish, c, running[i], kept.feed)
      local p = pods[i]
      if not ok then
        for j = i + 1, math.min(first + PARALLEL_LOGS, pods.count) - 1 do pcall(finish, c, running[j], function() end) end
        if type(log) == "table" and log.collect then fail("job %s index %d (pod %s, %s): %s", c.job, i, p.name, p.phase, log.collect) end
        error(log, 0)
      end
      sources[#sources + 1] = { name = string.format("%s index %d (pod %s)", c.job, i, p.name), text = result_line(c, p, kept.lines_at_end()) }
    end
  end
  return sources
end

-- Says on stderr which indexes failed, or took more than one pod; raises for one still running.
local function report_indexes(c, pods, stderr)
  local failed = {}
  for i = 0, pods.count - 1 do
    local p = pods[i]
    if p.phase == "Pending" or p.phase == "Running" or p.phase == "Unknown" then
      fail("job %s index %d (pod %s) is %s: wait for the Job to end (kubectl wait --for=condition=complete job/%s)", c.job, i, p.name, p.phase, c.job)
    end
    if p.phase ~= "Succeeded" then failed[#failed + 1] = string.format("%d (pod %s)", i, p.name)
    elseif p.tried > 1 then stderr:write(string.format("lunet load collect: index %d took %d pods; pod %s succeeded\n", i, p.tried, p.name)) end
  end
  if #failed > 0 then
    stderr:write("lunet load collect: failed index", #failed == 1 and "" or "es", ": ", table.concat(failed, ", "),
      "; their results are merged all the same\n")
  end
end

--- Runs `lunet load collect` with args (the words after `collect`); returns the exit status.
function M.main(args, stdout, stderr)
  local ok, result = pcall(function()
    local c = M.parse_args(args or {})
    if c.help then return { help = true } end
    local text = kubectl(c, scope(c, { "get", "pods", "-l", "job-name=" .. c.job, "-o", "json" }))
    local decoded, list = pcall(json.decode, text)
    if not decoded or type(list) ~= "table" then fail("kubectl get pods printed no JSON list of pods: %s", text:sub(1, 200)) end
    local pods = M.pick(c, list)
    report_indexes(c, pods, stderr)
    return { sources = M.sources(c, pods), c = c }
  end)
  if not ok then
    if type(result) == "table" and result.collect then stderr:write("lunet load collect: ", result.collect, "\n") return 2 end
    error(result, 0)
  end
  if result.help then stdout:write(M.usage, "\n") return 0 end
  local merge = require "lunet.load.merge"
  return merge.run(result.sources, { report = result.c.report, summary_export = result.c.summary_export }, stdout, stderr)
end

return M
