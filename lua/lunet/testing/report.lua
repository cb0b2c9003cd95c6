-- Reports of a test run: TAP version 13 (streamed as tests end), JUnit XML and JSON (written at
-- the end), and the summary line.
--
-- The records they read (the JSON report is exactly this, so child processes of --jobs hand
-- theirs back through it):
--   file: { path, duration, timestamp (epoch seconds), error (top-level message, when the file
--           failed to load or run), notes = { text }, output = { line }, tests = { test } }
--   test: { name ("describe > test"), full_name ("path > describe > test"), status ("passed",
--           "failed", "skipped"), duration, skip_reason, message (the failure's message),
--           failure = { type ("assertion", "error", "timeout"), message, at, source, expected,
--           actual, diff, request, response_status, response_body, kind, traceback, also },
--           output = { line }, top_level (true for a file's load error) }
local json = require "lunet.json"
local show = require "lunet.testing.show"

local M = {}

-- Counting --------------------------------------------------------------------------------

function M.count(files)
  local c = { passed = 0, failed = 0, skipped = 0, total = 0, duration = 0 }
  for _, f in ipairs(files) do
    c.duration = c.duration + (f.duration or 0)
    for _, t in ipairs(f.tests) do
      c[t.status] = (c[t.status] or 0) + 1
      c.total = c.total + 1
    end
  end
  return c
end

function M.summary_line(c)
  local s = string.format("%d passed, %d failed", c.passed, c.failed)
  if c.skipped > 0 then s = s .. string.format(", %d skipped", c.skipped) end
  return s
end

-- Failure details as plain text -------------------------------------------------------------

local function indent(text, prefix)
  return prefix .. string.gsub(text, "\n", "\n" .. prefix)
end

--- A failure as readable text: the message, where, expected/actual, differences, the request.
function M.details(f)
  local lines = { f.message }
  local function add(label, value)
    if value == nil then return end
    value = tostring(value)
    if string.find(value, "\n", 1, true) then
      lines[#lines + 1] = "  " .. label .. ":"
      lines[#lines + 1] = indent(value, "    ")
    else
      lines[#lines + 1] = "  " .. label .. ": " .. value
    end
  end
  if f.at then
    lines[#lines + 1] = "  at " .. f.at
    if f.source then lines[#lines + 1] = "    " .. f.source end
  end
  add("expected", f.expected)
  add("actual", f.actual)
  if f.diff then
    lines[#lines + 1] = "  differences:"
    lines[#lines + 1] = indent(f.diff, "    ")
  end
  add("request", f.request)
  add("response status", f.response_status)
  add("response body", f.response_body)
  add("also", f.also)
  if f.traceback and f.traceback ~= "" then lines[#lines + 1] = indent(f.traceback, "  ") end
  return table.concat(lines, "\n")
end

-- TAP ---------------------------------------------------------------------------------------

local Tap = {}
Tap.__index = Tap

--- A TAP reporter writing to `out` (a file handle).
function M.tap(out)
  return setmetatable({ out = out, n = 0 }, Tap)
end

function Tap:start()
  self.out:write("TAP version 13\n")
end

local function tap_description(s)
  s = string.gsub(s, "[\r\n]+", " ")
  return (string.gsub(s, "([\\#])", "\\%1"))
end

local YAML_ORDER = { "message", "type", "kind", "at", "source", "expected", "actual", "diff",
                     "request", "response_status", "response_body", "also", "traceback" }

local function yaml_field(key, value)
  if type(value) == "number" then return "  " .. key .. ": " .. tostring(value) .. "\n" end
  value = tostring(value)
  if not string.find(value, "\n", 1, true) then
    -- single-quoted: nothing but ' is special (the text is clean: no control characters)
    return "  " .. key .. ": '" .. string.gsub(value, "'", "''") .. "'\n"
  end
  local header = string.find(value, "^[ \t]") and "|2-" or "|-"
  return "  " .. key .. ": " .. header .. "\n" .. indent(value, "    ") .. "\n"
end

function Tap:test(t)
  local out = self.out
  for _, line in ipairs(t.output or {}) do out:write("# ", line, "\n") end
  self.n = self.n + 1
  local line = (t.status == "failed" and "not ok " or "ok ") .. self.n .. " - " .. tap_description(t.full_name)
  if t.status == "skipped" then
    line = line .. " # SKIP" .. (t.skip_reason and (" " .. tap_description(t.skip_reason)) or "")
  end
  out:write(line, "\n")
  if t.failure then
    local parts = { "  ---\n" }
    for _, k in ipairs(YAML_ORDER) do
      if t.failure[k] ~= nil then parts[#parts + 1] = yaml_field(k, t.failure[k]) end
    end
    parts[#parts + 1] = "  ...\n"
    out:write(table.concat(parts))
  end
  out:flush()
end

function Tap:note(text)
  for line in string.gmatch(text .. "\n", "(.-)\n") do self.out:write("# ", line, "\n") end
end

function Tap:finish(c)
  self.out:write("1..", self.n, "\n", M.summary_line(c), "\n")
  self.out:flush()
end

-- JSON ----------------------------------------------------------------------------------------

local function array_copy(list)
  local a = json.array()
  for i, v in ipairs(list or {}) do a[i] = v end
  return a
end

local TEST_KEYS = { "name", "full_name", "status", "duration", "skip_reason", "top_level" }

--- The JSON report of `files`.
function M.json_report(files, c)
  local out_files = json.array()
  for _, f in ipairs(files) do
    local tests = json.array()
    for _, t in ipairs(f.tests) do
      local o = {}
      for _, k in ipairs(TEST_KEYS) do o[k] = t[k] end
      if t.failure then
        o.message = t.failure.message
        o.failure = t.failure
      end
      o.output = array_copy(t.output)
      tests[#tests + 1] = o
    end
    out_files[#out_files + 1] = {
      path = f.path, duration = f.duration, timestamp = f.timestamp, error = f.error,
      notes = array_copy(f.notes),
      output = array_copy(f.output),
      tests = tests,
    }
  end
  return json.encode({
    version = 1,
    summary = { passed = c.passed, failed = c.failed, skipped = c.skipped, total = c.total, duration = c.duration },
    files = out_files,
  }, { pretty = true, sort_keys = true }) .. "\n"
end

-- JUnit XML ---------------------------------------------------------------------------------

local XML_ESCAPES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&apos;",
                      ["\n"] = "&#10;", ["\r"] = "&#13;", ["\t"] = "&#9;" }

-- Text safe in XML 1.0: valid UTF-8 without the control characters XML forbids.
local function xml_safe(s)
  s = show.clean(tostring(s))
  -- U+FFFE and U+FFFF are not XML characters either.
  return (string.gsub(s, "\239\191([\190\191])", function(b) return b == "\190" and "\\uFFFE" or "\\uFFFF" end))
end

local function attr(s)
  return (string.gsub(xml_safe(s), "[&<>\"'\n\r\t]", XML_ESCAPES))
end

local function text(s)
  return (string.gsub(xml_safe(s), "[&<>]", XML_ESCAPES))
end

local function seconds(d) return string.format("%.3f", d or 0) end

local function iso(epoch)
  return os.date("!%Y-%m-%dT%H:%M:%S", math.floor(epoch or os.time()))
end

local function hostname()
  local f = io.open("/proc/sys/kernel/hostname", "r") or io.open("/etc/hostname", "r")
  local name = f and f:read("l")
  if f then f:close() end
  name = name and string.match(name, "^%s*(.-)%s*$") or ""
  if name == "" then name = os.getenv("HOSTNAME") or "localhost" end
  return name
end

--- The JUnit XML report of `files`: <testsuites> with a <testsuite> per file and a
--- <testcase classname="path" name="describe > test"> per test.
function M.junit_report(files, c)
  local host = hostname()
  local out = {
    '<?xml version="1.0" encoding="UTF-8"?>\n',
    string.format('<testsuites name="lunet test" tests="%d" failures="%d" errors="0" skipped="%d" time="%s">\n',
      c.total, c.failed, c.skipped, seconds(c.duration)),
  }
  for i, f in ipairs(files) do
    local fc = M.count({ f })
    out[#out + 1] = string.format(
      '  <testsuite name="%s" id="%d" tests="%d" failures="%d" errors="0" skipped="%d" time="%s" timestamp="%s" hostname="%s">\n',
      attr(f.path), i - 1, fc.total, fc.failed, fc.skipped, seconds(f.duration), iso(f.timestamp), attr(host))
    for _, t in ipairs(f.tests) do
      out[#out + 1] = string.format('    <testcase classname="%s" name="%s" time="%s"',
        attr(f.path), attr(t.name), seconds(t.duration))
      local body = {}
      if t.status == "failed" then
        local fl = t.failure or { message = "failed", type = "error" }
        body[#body + 1] = string.format('      <failure message="%s" type="%s">%s</failure>\n',
          attr(fl.message), attr(fl.type or "error"), text(M.details(fl)))
      elseif t.status == "skipped" then
        body[#body + 1] = t.skip_reason and string.format('      <skipped message="%s"/>\n', attr(t.skip_reason))
          or '      <skipped/>\n'
      end
      if t.output and #t.output > 0 then
        body[#body + 1] = "      <system-out>" .. text(table.concat(t.output, "\n") .. "\n") .. "</system-out>\n"
      end
      if #body == 0 then
        out[#out + 1] = "/>\n"
      else
        out[#out + 1] = ">\n" .. table.concat(body) .. "    </testcase>\n"
      end
    end
    local notes = {}
    for _, line in ipairs(f.output or {}) do notes[#notes + 1] = line end
    for _, line in ipairs(f.notes or {}) do notes[#notes + 1] = "# " .. line end
    if #notes > 0 then
      out[#out + 1] = "    <system-out>" .. text(table.concat(notes, "\n") .. "\n") .. "</system-out>\n"
    end
    out[#out + 1] = "  </testsuite>\n"
  end
  out[#out + 1] = "</testsuites>\n"
  return table.concat(out)
end

--- Writes `content` to `path` (through a temporary file renamed into place).
function M.write_file(path, content) return require("lunet.whole_file").write(path, content) end

return M
