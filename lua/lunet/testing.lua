-- `lunet test`: finds *_test.lua files, runs them (in this process, or N child processes with
-- --jobs), and reports in TAP on standard output, JUnit XML and JSON.
--
--   local status = require("lunet.testing").main(argv, { lunet = "/path/to/lunet" })
--
-- main returns the exit status (0: every test passed; 1: a test failed, or none ran; 2: bad
-- arguments) and never exits itself. See docs/testing.md.
local json = require "lunet.json"
local runner = require "lunet.testing.runner"
local report = require "lunet.testing.report"
local expect = require "lunet.testing.expect"

local M = {}

M.expect = expect.expect
M.jsonpath = require "lunet.testing.jsonpath"
M.run_file = runner.run_file

M.usage = [[
usage: lunet test [paths...] [options]
  paths              *_test.lua files, and directories searched for them (default: .)
  --filter PATTERN   run the tests whose full name ("file > describe > test") matches
                     this Lua pattern
  --timeout S        seconds a test may take (default 30; 0: no limit)
  --jobs N, -j N     run N files at a time, each in a process of its own
  --junit FILE       also write a JUnit XML report
  --json FILE        also write a JSON report
  --report-json FILE write the JSON report and nothing on standard output (used by --jobs)
  --help             this text]]

local DEFAULT_TIMEOUT = 30

local function usage_error(message)
  error({ usage = message }, 0)
end

--- Parses the arguments of `lunet test` (read by the commands' one reader, lunet.cli.argv).
function M.parse_args(argv)
  local words = {}
  for i = 1, #argv do words[i] = tostring(argv[i]) end
  local c = require("lunet.cli.argv").read(words, {
    takes = { ["--filter"] = "filter", ["--timeout"] = "timeout", ["--jobs"] = "jobs", ["-j"] = "jobs",
              ["--junit"] = "junit", ["--json"] = "json", ["--report-json"] = "report_json" },
    flags = { ["--help"] = "help", ["-h"] = "help" },
    help = "lunet test --help",
  }, usage_error, function(c, word) c.paths = c.paths or {}; c.paths[#c.paths + 1] = word end)
  local config = { paths = c.paths or {}, timeout = DEFAULT_TIMEOUT, jobs = 1, help = c.help,
                   junit = c.junit, json = c.json, report_json = c.report_json }
  if c.filter then
    local ok, err = pcall(string.find, "", c.filter)
    if not ok then usage_error("bad --filter pattern: " .. tostring(err)) end
    config.filter = c.filter
  end
  if c.timeout then
    local v = tonumber(c.timeout)
    if not v or v < 0 then usage_error("--timeout takes a number of seconds (0 for no limit)") end
    config.timeout = v
  end
  if c.jobs then
    local v = math.tointeger(tonumber(c.jobs))
    if not v or v < 1 then usage_error("--jobs takes a whole number, 1 or more") end
    config.jobs = v
  end
  if #config.paths == 0 then config.paths[1] = "." end
  return config
end

-- Discovery ---------------------------------------------------------------------------------

local function sh_quote(s)
  return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end
M.sh_quote = sh_quote

-- "dir", "file", or nil and a message.
local function path_kind(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local _, msg, code = f:read(0)
  f:close()
  if code == 21 or (type(msg) == "string" and string.find(msg, "Is a directory", 1, true)) then return "dir" end
  return "file"
end

--- The test files under `paths`: directories searched recursively for *_test.lua (hidden
--- directories skipped), sorted; a file path is taken as it is. Raises a usage error for a
--- path that does not exist.
function M.discover(paths)
  local files, seen = {}, {}
  local function add(p)
    if not seen[p] then seen[p] = true; files[#files + 1] = p end
  end
  for _, path in ipairs(paths) do
    local kind, err = path_kind(path)
    if not kind then usage_error("cannot read " .. tostring(err)) end
    if kind == "file" then
      add(path)
    else
      local cmd = "find " .. sh_quote(path) .. " -mindepth 1 \\( -name '.*' -prune \\) -o \\( -type f -name '*_test.lua' -print0 \\)"
      local p = assert(io.popen(cmd, "r"))
      local out = p:read("a")
      p:close()
      local found = {}
      for name in string.gmatch(out, "([^%z]+)%z") do
        if path == "." or path == "./" then name = string.gsub(name, "^%./", "") end
        found[#found + 1] = name
      end
      table.sort(found)
      for _, name in ipairs(found) do add(name) end
    end
  end
  return files
end

-- The lunet binary running now: the first interpreter argument, as lua5.4 sets `arg`.
local function interpreter()
  local a = rawget(_G, "arg")
  if type(a) ~= "table" then return "lunet" end
  local i = 0
  while a[i - 1] ~= nil do i = i - 1 end
  return i < 0 and a[i] or "lunet"
end

-- Running files in child processes ---------------------------------------------------------

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function crashed_file(path, message, output)
  local lines = {}
  for line in string.gmatch((output or "") .. "\n", "(.-)\n") do lines[#lines + 1] = line end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  local failure = { type = "error", message = message }
  if #lines > 0 then failure.traceback = require("lunet.testing.show").clean(table.concat(lines, "\n")) end
  return {
    path = path, duration = 0, timestamp = os.time(), error = message, notes = {}, output = {},
    tests = { { name = "(top level)", full_name = path, status = "failed", top_level = true, duration = 0,
                failure = failure, output = {} } },
  }
end

-- Runs `files` N at a time as `command... --report-json TMP FILE`, calling on_file(record) in
-- file order.
local function run_children(files, config, command, stderr, on_file)
  local prefix = {}
  for i, w in ipairs(command) do prefix[i] = sh_quote(w) end
  local base = table.concat(prefix, " ") .. " --timeout " .. string.format("%.17g", config.timeout)
  if config.filter then base = base .. " --filter " .. sh_quote(config.filter) end
  local jobs, started = {}, 0
  local function start()
    started = started + 1
    local file = files[started]
    local tmp = os.tmpname()
    -- The child writes nothing on standard output; its standard error comes through the pipe
    -- and is shown after that file's results, not interleaved with other files' output.
    local cmd = base .. " --report-json " .. sh_quote(tmp) .. " -- " .. sh_quote(file) .. " 2>&1"
    jobs[started] = { file = file, tmp = tmp, pipe = assert(io.popen(cmd, "r")) }
  end
  for _ = 1, math.min(config.jobs, #files) do start() end
  for i = 1, #files do
    local job = jobs[i]
    local output = job.pipe:read("a")
    local _, how, code = job.pipe:close()
    jobs[i] = nil
    if started < #files then start() end
    local text = read_file(job.tmp)
    os.remove(job.tmp)
    local ok, decoded = pcall(json.decode, text or "")
    local record = ok and type(decoded) == "table" and type(decoded.files) == "table" and decoded.files[1]
    if record then
      on_file(record)
    else
      on_file(crashed_file(job.file, string.format("the test process for %s ended (%s %s) without a report",
        job.file, tostring(how), tostring(code)), output))
    end
    if record and output ~= "" then stderr:write(output) end
  end
end

-- main ----------------------------------------------------------------------------------------

-- The run's configuration and test files from its arguments; or nil and the exit status when
-- there is nothing to run (help shown, or a usage error said).
local function configure(argv, stdout, stderr)
  local ok, config = pcall(M.parse_args, argv or {})
  local files
  if ok and not config.help then
    ok, files = pcall(M.discover, config.paths)
    if not ok then config = files end
  end
  if not ok then
    if type(config) == "table" and config.usage then
      stderr:write("lunet test: ", config.usage, "\n", M.usage, "\n")
      return nil, 2
    end
    error(config, 0)
  end
  if config.help then
    stdout:write(M.usage, "\n")
    return nil, 0
  end
  return config, files
end

-- A run where no test ran fails, and says why (unless it is a child of --jobs: its parent says
-- it for the whole run).
local function say_none_ran(c, config, tap, stderr, quiet)
  if quiet then return end
  if c.skipped > 0 then
    tap:note("no tests ran")
    stderr:write(string.format("lunet test: no tests ran (%d skipped)\n", c.skipped))
  else
    tap:note("no tests found")
    stderr:write("lunet test: no tests found" .. (config.filter and (" matching --filter " .. config.filter) or "") ..
      " in " .. table.concat(config.paths, " ") .. "\n")
  end
end

-- The report files the configuration asks for; false when one could not be written (said).
local function write_reports(config, records, c, stderr)
  local all_written = true
  local function write(path, content, what)
    local written, err = report.write_file(path, content)
    if not written then
      stderr:write("lunet test: cannot write the ", what, " report to ", path, ": ", tostring(err), "\n")
      all_written = false
    end
  end
  if config.report_json then write(config.report_json, report.json_report(records, c), "JSON") end
  if config.json then write(config.json, report.json_report(records, c), "JSON") end
  if config.junit then write(config.junit, report.junit_report(records, c), "JUnit") end
  return all_written
end

--- Runs `lunet test` with the arguments `argv` (a list of strings, the words after `test`).
--- opts.lunet: the lunet binary, for --jobs (default: the interpreter in arg[-n]);
--- opts.command: the words that start `lunet test` in a child (default { opts.lunet, "test" });
--- opts.stdout, opts.stderr: file handles (default io.stdout, io.stderr).
--- Returns the exit status: 0 all passed, 1 a failure or no test ran, 2 bad arguments.
function M.main(argv, opts)
  opts = opts or {}
  local stdout, stderr = opts.stdout or io.stdout, opts.stderr or io.stderr
  local config, files = configure(argv, stdout, stderr)
  if not config then return files end

  local quiet = config.report_json ~= nil
  local tap = report.tap(stdout)
  if not quiet then tap:start() end
  local records = {}
  local function file_done(record)
    records[#records + 1] = record
    if not quiet then
      for _, note in ipairs(record.notes or {}) do tap:note(note) end
    end
  end

  if config.jobs > 1 and #files > 1 then
    local command = opts.command or { opts.lunet or interpreter(), "test" }
    run_children(files, config, command, stderr, function(record)
      if not quiet then
        if record.output and #record.output > 0 then tap:note(table.concat(record.output, "\n")) end
        for _, t in ipairs(record.tests) do tap:test(t) end
      end
      file_done(record)
    end)
  else
    local function on_test(t) if not quiet then tap:test(t) end end
    for _, path in ipairs(files) do
      local record = runner.run_file(path, config, on_test, function(output)
        if not quiet and #output > 0 then tap:note(table.concat(output, "\n")) end
      end)
      file_done(record)
    end
  end

  local c = report.count(records)
  local status = c.failed > 0 and 1 or 0
  if c.passed + c.failed == 0 then
    status = 1
    say_none_ran(c, config, tap, stderr, quiet)
  end
  if not quiet then tap:finish(c) end
  if not write_reports(config, records, c, stderr) then status = 1 end
  return status
end

return M
