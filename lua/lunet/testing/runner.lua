-- Runs one test file: loads it in a fresh environment that has test, describe, before_each,
-- after_each, skip, only, expect and fail, collects its tests, and runs them one at a time,
-- each in a task of its own with a timeout. Produces the file's record (see report.lua for
-- its shape) and calls on_test(record) as each test ends.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"
local expect = require "lunet.testing.expect"
local show = require "lunet.testing.show"

local M = {}

local now = core.now

-- Seconds, to the microsecond.
local function since(t0) return math.floor((now() - t0) * 1e6 + 0.5) / 1e6 end

-- An error caught where it was raised: the value, and where in the test file it happened.
local Captured = { __name = "lunet.testing.Captured" }
Captured.__index = Captured
Captured.__tostring = function(c) return errors.describe(c.err) end

-- Keeps the traceback lines that belong to the user's code: up to the runner's own frames.
local function trim_traceback(tb)
  local out = {}
  for line in string.gmatch(tb .. "\n", "(.-)\n") do
    if string.find(line, "lunet/testing/runner.lua", 1, true) then break end
    if not string.find(line, "^%s*%[C%]: in function 'x?pcall'") and not string.find(line, "(...tail calls...)", 1, true) then
      out[#out + 1] = line
    end
  end
  while #out > 0 and string.find(out[#out], "^%s*$") do out[#out] = nil end
  -- Nothing but the header and C functions: it says nothing the location does not.
  local useful = false
  for _, line in ipairs(out) do
    if not string.find(line, "^stack traceback:") and not string.find(line, "^%s*%[C%]") then useful = true end
  end
  return useful and table.concat(out, "\n") or nil
end

-- Runs fn; an error comes out as a Captured (with the location in `path`, when there is one).
local function protected(fn, path)
  local function handler(e)
    if getmetatable(e) == Captured then return e end
    local c = setmetatable({ err = e }, Captured)
    if not expect.is_failure(e) then
      c.traceback = trim_traceback((string.gsub(debug.traceback("", 2), "^\n", "")))
      local want = "@" .. path
      for level = 2, 80 do
        local info = debug.getinfo(level, "Sl")
        if not info then break end
        if info.source == want and info.currentline and info.currentline > 0 then
          c.at = path .. ":" .. info.currentline
          c.source = expect.source_line(path, info.currentline)
          break
        end
      end
    end
    return c
  end
  local ok, c = xpcall(fn, handler)
  if not ok then error(c, 0) end
end

local FIELDS = { "message", "at", "source", "expected", "actual", "diff", "request", "response_status", "response_body" }

--- The failure fields a report holds, from an error value (a Captured, a Failure, an error
--- object, a string, anything).
function M.failure_of(value)
  local f = {}
  local c = getmetatable(value) == Captured and value or nil
  local err = c and c.err or value
  if expect.is_failure(err) then
    f.type = "assertion"
    for _, k in ipairs(FIELDS) do f[k] = err[k] end
  else
    f.type = "error"
    f.message = errors.describe(err)
    if show.is_error(err) then f.kind = err.kind end
    expect.add_response(f, err)
    if c then f.at, f.source, f.traceback = c.at, c.source, c.traceback end
  end
  for k, v in pairs(f) do
    if type(v) == "string" then f[k] = show.clean(v) end
  end
  f.message = f.message or "failed"
  return f
end

-- Waits for task t, at most `limit` seconds (0: no limit); nil when it succeeded, else the
-- failure fields.
local function await_task(t, limit)
  local guarded = limit and limit > 0 and t:timeout(limit) or t
  local ok, err = pcall(guarded.await, guarded)
  if ok then return nil end
  if t.state == "cancelled" and guarded ~= t then
    return { type = "timeout", message = string.format("timed out after %g s", limit) }
  end
  return M.failure_of(t.error or err)
end

local TEST_OPTIONS = { timeout = "number", skip = "any", only = "boolean" }

local function check_options(what, opts)
  for k, v in pairs(opts) do
    local want = TEST_OPTIONS[k]
    if not want then error(string.format("unknown option '%s' in %s() (options: timeout, skip, only)", tostring(k), what), 5) end
    if want ~= "any" and type(v) ~= want then
      error(string.format("option '%s' of %s() must be a %s, got %s", k, what, want, type(v)), 5)
    end
    if k == "timeout" and v < 0 then error("option 'timeout' of " .. what .. "() must not be negative", 5) end
  end
end

-- The arguments of test/describe: name, [opts,] fn.
local function arguments(what, name, a, b, fn_optional)
  if type(name) ~= "string" then error(string.format("%s() takes a name (a string) first, got %s", what, type(name)), 4) end
  local opts, fn = {}, a
  if type(a) == "table" then opts, fn = a, b end
  if fn == nil and fn_optional then return name, opts, nil end
  if type(fn) ~= "function" then
    error(string.format("%s(%q, ...) needs a function, got %s", what, name, type(fn)), 4)
  end
  check_options(what, opts)
  return name, opts, fn
end

local function new_suite(name, parent, opts, mode)
  return { kind = "suite", name = name, parent = parent, opts = opts or {}, mode = mode,
           before = {}, after = {}, items = {} }
end

--- The arg table a test file sees: arg[0] is its path; the interpreter's arguments below 0.
local function file_arg(path)
  local a = { [0] = path }
  local outer = rawget(_G, "arg")
  if type(outer) == "table" then
    for k, v in pairs(outer) do
      if math.type(k) == "integer" and k < 0 then a[k] = v end
    end
  end
  return a
end

local function join(prefix, name)
  if prefix == "" then return name end
  return prefix .. " > " .. name
end

-- The environment a test file loads in, and what its top level declares into: `state.root`
-- (the suite tree), `state.after_all`, and `state.output`, the list print writes to now (the
-- runner swaps it per test). `state.loading` is true while the top level runs: test() and
-- describe() belong there.
local function declarations(path)
  local state = { root = new_suite("", nil, {}), after_all = {}, output = {}, loading = true }
  state.current = state.root

  local env = setmetatable({}, { __index = _G })
  env.arg = file_arg(path)
  env.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    for line in string.gmatch(table.concat(parts, "\t") .. "\n", "(.-)\n") do
      state.output[#state.output + 1] = show.clean(line)
    end
  end

  local function not_loading(what, level)
    error(what .. "() belongs at the top level of a test file or inside describe(), not inside a running test", level)
  end

  local function add_test(mode, name, a, b)
    if not state.loading then not_loading("test", 4) end
    local opts, fn
    name, opts, fn = arguments("test", name, a, b, mode == "skip")
    if mode == "skip" and opts.skip == nil then opts.skip = true end
    local items = state.current.items
    items[#items + 1] = { kind = "test", name = name, opts = opts, fn = fn, mode = mode }
  end

  local function add_suite(mode, name, a, b)
    if not state.loading then not_loading("describe", 4) end
    local opts, fn
    name, opts, fn = arguments("describe", name, a, b)
    local outer = state.current
    local suite = new_suite(name, outer, opts, mode)
    outer.items[#outer.items + 1] = suite
    state.current = suite
    fn()   -- an error here fails the file (its top level)
    state.current = outer
  end

  local test = setmetatable({}, { __call = function(_, ...) add_test(nil, ...) end })
  test.skip = function(...) add_test("skip", ...) end
  test.only = function(...) add_test("only", ...) end
  local describe = setmetatable({}, { __call = function(_, ...) add_suite(nil, ...) end })
  describe.skip = function(...) add_suite("skip", ...) end
  describe.only = function(...) add_suite("only", ...) end

  local function hook(list_name)
    local what = list_name == "before" and "before_each" or "after_each"
    return function(fn)
      if not state.loading then not_loading(what, 3) end
      if type(fn) ~= "function" then error(what .. "() takes a function, got " .. type(fn), 2) end
      local list = state.current[list_name]
      list[#list + 1] = fn
    end
  end

  -- after_all(fn): runs once after the file's last test (cleaning up what the top level made).
  env.after_all = function(fn)
    if type(fn) ~= "function" then error("after_all() takes a function, got " .. type(fn), 2) end
    state.after_all[#state.after_all + 1] = fn
  end
  env.test, env.describe = test, describe
  env.skip, env.only = test.skip, test.only
  env.before_each, env.after_each = hook("before"), hook("after")
  env.expect, env.fail = expect.expect, expect.fail
  return env, state
end

-- The tests of a suite tree, in order, each with its hooks (outer before_each first, outer
-- after_each last) and the options it inherits; and whether any of them is only().
local function flatten(root)
  local entries, any_only = {}, false
  local function walk(suite, prefix, befores, afters, inherited)
    local b, a = {}, {}
    for _, f in ipairs(befores) do b[#b + 1] = f end
    for _, f in ipairs(suite.before) do b[#b + 1] = f end
    for _, f in ipairs(suite.after) do a[#a + 1] = f end
    for _, f in ipairs(afters) do a[#a + 1] = f end
    for _, item in ipairs(suite.items) do
      local opts = item.opts
      local here = {
        timeout = opts.timeout or inherited.timeout,
        skip = opts.skip or inherited.skip or (item.mode == "skip" and true) or nil,
        only = inherited.only or opts.only or item.mode == "only",
      }
      if item.kind == "suite" then
        walk(item, join(prefix, item.name), b, a, here)
      else
        if here.only then any_only = true end
        entries[#entries + 1] = { name = join(prefix, item.name), fn = item.fn, befores = b, afters = a,
                                  timeout = here.timeout, skip = here.skip, only = here.only }
      end
    end
  end
  walk(root, "", {}, {}, { only = false })
  return entries, any_only
end

-- Runs one test with its hooks, each phase a task with the test's timeout; its failure
-- fields, or nil when it passed.
local function run_test(e, path, limit)
  local phase = "test"
  local failure = await_task(task.spawn(function()
    -- A test that never yields never lets its timeout's timer run: a deadline hook on its
    -- coroutine stops it anyway.
    if limit and limit > 0 then core.deadline(limit) end
    for _, h in ipairs(e.befores) do
      phase = "before_each"
      protected(h, path)
    end
    phase = "test"
    protected(e.fn, path)
  end), limit)
  core.deadline(nil)
  if failure and phase == "before_each" then failure.message = "in before_each: " .. failure.message end
  if #e.afters == 0 then return failure end
  -- Every after_each runs, whatever failed before; the first failure is reported.
  local after_failure = await_task(task.spawn(function()
    local first
    for _, h in ipairs(e.afters) do
      local ok, err = pcall(protected, h, path)
      if not ok and not first then first = err end
    end
    if first then error(first, 0) end
  end), limit)
  if after_failure then
    after_failure.message = "in after_each: " .. after_failure.message
    if failure then failure.also = after_failure.message else failure = after_failure end
  end
  return failure
end

-- The record of one selected test, run (or skipped); what it printed goes to its record.
local function run_entry(e, full_name, path, config, state)
  local record = { name = show.clean(e.name), full_name = show.clean(full_name), status = "passed" }
  state.output = {}
  record.output = state.output
  local t0 = now()
  if e.skip then
    record.status = "skipped"
    if type(e.skip) == "string" then record.skip_reason = show.clean(e.skip) end
  else
    local failure = run_test(e, path, e.timeout or config.timeout)
    if failure then
      record.status = "failed"
      record.failure = failure
    end
  end
  record.duration = since(t0)
  return record
end

--- Runs the test file at `path`. config: { timeout = seconds (0: none), filter = Lua pattern
--- or nil }. Returns the file's record; calls on_loaded(lines printed by the top level) once the
--- file has loaded, and on_test(record) after each test.
function M.run_file(path, config, on_test, on_loaded)
  on_test = on_test or function() end
  local file = { path = path, tests = {}, notes = {}, timestamp = os.time() }
  local started = now()
  local env, state = declarations(path)

  local function finish_file()
    for _, fn in ipairs(state.after_all) do
      local ok, err = pcall(fn)
      if not ok then io.stderr:write("after_all in ", path, " failed: ", tostring(err), "\n") end
    end
    file.duration = since(started)
    return file
  end

  -- Loading: the file's top level, as a task with the default timeout.
  local chunk, load_err = loadfile(path, "t", env)
  local top_output = state.output
  local top_failure
  if not chunk then
    top_failure = { type = "error", message = show.clean(load_err) }
  else
    top_failure = await_task(task.spawn(protected, chunk, path), config.timeout)
  end
  state.loading = false
  if top_failure then
    local record = { name = "(top level)", full_name = show.clean(path), status = "failed", top_level = true,
                     duration = since(started), failure = top_failure, output = top_output }
    file.tests[1] = record
    file.error = top_failure.message
    on_test(record)
    return finish_file()
  end

  local entries, any_only = flatten(state.root)
  if #top_output > 0 then file.output = top_output end
  if on_loaded then on_loaded(top_output) end

  local left_out = 0
  for _, e in ipairs(entries) do
    local full_name = path .. " > " .. e.name
    if any_only and not e.only then
      left_out = left_out + 1
    elseif not config.filter or string.find(full_name, config.filter) then   -- else not selected: not reported
      local record = run_entry(e, full_name, path, config, state)
      file.tests[#file.tests + 1] = record
      on_test(record)
    end
  end
  if left_out > 0 then
    file.notes[#file.notes + 1] = string.format("%s: %d test%s not run because only() is used in the file",
      show.clean(path), left_out, left_out == 1 and "" or "s")
  end
  return finish_file()
end

return M
