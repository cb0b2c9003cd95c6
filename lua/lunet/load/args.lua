--- `lunet load`'s command line: the options of a run, checked before anything is sent (a usage
--- error is exit 2), and which shard of the test this process is.
local options = require "lunet.load.options"
local shard = require "lunet.load.shard"

local M = {}

M.usage = [[
usage: lunet load SCRIPT.lua [options]
       lunet load merge RESULT.json ... [--report FILE.html] [--summary-export FILE]
       lunet load k8s SCRIPT.lua --shards N --image IMAGE [...]   (lunet load k8s --help)
       lunet load collect JOB [--namespace NS] [--report FILE.html]
  --vus N, -u N            virtual users (with --duration: constant-vus; with --iterations: shared)
  --duration D, -d D       how long (30s, 1m30s, 500ms): replaces the script's scenarios
  --iterations N, -i N     iterations in all, shared by the VUs
  --rate R                 iterations per second (constant-arrival-rate; needs --duration)
  --out json=FILE          one JSON record per second per metric and tag set, then each
                           histogram, then the run's result (what lunet load merge reads)
  --out prometheus[=URL]   push the metrics live to Prometheus remote write (URL, or
                           LUNET_PROMETHEUS_RW_SERVER_URL; docs/load.md). --out again for
                           both; LUNET_OUT adds outputs as --out does, separated by spaces
  --summary-export FILE    the summary as k6's --summary-export writes it
  --report FILE.html       a report to open in a browser: charts over time, names, checks
  --shard I/N              run shard I (from 0) of N: N machines run the whole test together
  --shards N               N shards, this one JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)
  --start-at TIME          start the VUs at TIME (RFC 3339 or epoch seconds), after setup
  --result-line            print the run's result as the last line of standard output
  --quiet, -q              no live line (the summary still prints)
  --help                   this text
Exit status: 0; 99 when a threshold failed; 2 usage error; 1 the script raised; 130 Ctrl-C.]]

local function usage_error(message) error({ usage = message }, 0) end

local TAKES = { ["--vus"] = "vus", ["-u"] = "vus", ["--duration"] = "duration", ["-d"] = "duration",
                ["--iterations"] = "iterations", ["-i"] = "iterations", ["--rate"] = "rate",
                ["--out"] = "out", ["-o"] = "out", ["--summary-export"] = "summary_export", ["--report"] = "report",
                ["--shard"] = "shard", ["--shards"] = "shards", ["--start-at"] = "start_at" }
local FLAGS = { ["--help"] = "help", ["-h"] = "help", ["--quiet"] = "quiet", ["-q"] = "quiet", ["--result-line"] = "result_line" }

local function words(argv)
  return require("lunet.cli.argv").read(argv, { takes = TAKES, flags = FLAGS, lists = { out = true }, help = "lunet load --help" }, usage_error,
    function(c, a)
      if c.script then usage_error("one script only: '" .. c.script .. "' and '" .. a .. "'") end
      c.script = a
    end)
end

-- Which shard: --shard I/N; else --shards N (or LUNET_SHARDS) with JOB_COMPLETION_INDEX, which
-- Kubernetes sets in each pod of an Indexed Job. Sets c.shard_index and c.shard_count.
local function which_shard(c, getenv)
  if c.shard then
    if c.shards then usage_error("--shard I/N and --shards N: give one") end
    local i, n = shard.parse(c.shard)
    if not i then usage_error(n) end
    c.shard_index, c.shard_count = i, n
    return
  end
  local n_text = c.shards or getenv("LUNET_SHARDS")
  if not n_text then return end
  local where = c.shards and "--shards" or "LUNET_SHARDS"
  local n = math.tointeger(tonumber(n_text))
  local index_text = getenv("JOB_COMPLETION_INDEX")
  if not index_text then
    if n == 1 then c.shard_index, c.shard_count = 0, 1 return end
    usage_error(where .. " " .. n_text .. ": which shard is this one? --shard I/N, or JOB_COMPLETION_INDEX (set in a Kubernetes Indexed Job)")
  end
  local i = math.tointeger(tonumber(index_text))
  local ok, err = shard.check(i, n, where .. " with JOB_COMPLETION_INDEX=" .. index_text)
  if not ok then usage_error(err) end
  c.shard_index, c.shard_count = i, n
end

-- The outputs: each --out, then each word of LUNET_OUT (where a Kubernetes Job carries one),
-- read into c.out (json's FILE) and c.prometheus (its URL, or true: from the environment).
local function outputs(c, getenv)
  local list = c.out
  c.out = nil
  for word in (getenv("LUNET_OUT") or ""):gmatch("%S+") do list[#list + 1] = word end
  for _, o in ipairs(list) do
    local kind, value = o:match("^(%w+)=(.*)$")
    kind = kind or o
    if kind == "json" and value and value ~= "" then
      if c.out then usage_error("--out json: one file, got '" .. c.out .. "' and '" .. value .. "'") end
      c.out = value
    elseif kind == "prometheus" then
      if c.prometheus then usage_error("--out prometheus: one receiver") end
      c.prometheus = value or true
    else
      usage_error("--out takes json=FILE or prometheus[=URL], got '" .. require("lunet.terminal_safe").line(o) .. "'")
    end
  end
end

--- The command line: { script, vus, duration, iterations, rate, out, prometheus, summary_export, report,
--- shard_index, shard_count, start_at (epoch seconds), result_line, quiet, help }. `getenv`
--- (os.getenv by default) reads LUNET_SHARDS, JOB_COMPLETION_INDEX and LUNET_OUT.
function M.parse(argv, getenv)
  local c = words(argv)
  for _, k in ipairs({ "vus", "iterations" }) do
    if c[k] and not (tonumber(c[k]) and tonumber(c[k]) >= 1 and math.floor(tonumber(c[k])) == tonumber(c[k])) then
      usage_error("--" .. k .. " takes a whole number of at least 1, got '" .. c[k] .. "'")
    end
  end
  if c.rate and not (tonumber(c.rate) and tonumber(c.rate) > 0) then usage_error("--rate takes a number of iterations per second, got '" .. c.rate .. "'") end
  if c.duration then
    local _, err = options.duration(c.duration, "--duration")
    if err then usage_error(err) end
  end
  outputs(c, getenv or os.getenv)
  if c.start_at then
    local t, err = shard.parse_time(c.start_at)
    if not t then usage_error(err) end
    c.start_at = t
  end
  which_shard(c, getenv or os.getenv)
  if not c.script and not c.help then usage_error("which script? lunet load SCRIPT.lua") end
  return c
end

return M
