-- Runs once when a host starts: installs the coroutine functions that understand host awaits,
-- the globals of API.md, and returns what the Swift host drives.
local runtime = require "lunet.runtime"
local errors = require "lunet.errors"

-- lunet.core is lunet's own: out of package.loaded, and out of reach by chunk names and the
-- debug library (lunet.core_guard).
local core = select(2, ...)   -- lunet.core, from the module's loader
require("lunet.core_guard")(core)

-- The lunet program (and a Swift tool embedding it) owns its interpreter and replaces
-- coroutine.resume and coroutine.wrap, so that a user's own coroutines pass awaits through. A
-- stock lua5.4 that loaded lunet with `require` keeps its own: lunet.coroutine has these there.
local own_interpreter = debug.getregistry()["lunet.globals"]
if own_interpreter then
  coroutine.resume = runtime.resume
  coroutine.wrap = runtime.wrap
  -- libcurl may be opening on another thread (core.curl_preload, when http loads), and a
  -- cache's disk writes may be queued on its writer's thread: the process waits for both
  -- before it runs its exit handlers.
  local raw_exit = os.exit
  os.exit = function(...)
    core.before_exit()
    return raw_exit(...)
  end
end

local task = require "lunet.task"

-- The composition root: the features the core reaches by name (lunet.features), each loaded
-- when first asked for.
local features = require "lunet.features"
features.provide("auth", function() return require "lunet.auth" end)
features.provide("session_store", function() return require "lunet.session_store" end)
features.provide("openapi", function() return require "lunet.openapi" end)

-- The lunet program sets API.md's modules as globals; `require "lunet"` in another interpreter
-- does not. `task` is set now (the host needs it anyway); the others load when a script first
-- names them, through an __index on _G: a script that prints a line never loads http and what it
-- needs (~0.45 ms, a sixth of start-up). Code that looks at or replaces _G's metatable (a strict
-- mode, a sandbox) gets them all loaded and the __index gone first, so it sees plain globals.
local LAZY = { http = "lunet.http", json = "lunet.json", url = "lunet.url", net = "lunet.net",
               xml = "lunet.xml", protobuf = "lunet.protobuf", yaml = "lunet.yaml", help = "lunet.help", grpc = "lunet.grpc" }
if own_interpreter then
  _G.task = task
  local raw_getmetatable, raw_setmetatable = getmetatable, setmetatable
  local debug_getmetatable, debug_setmetatable = debug.getmetatable, debug.setmetatable
  local lazy_mt = {}
  local function materialize()
    if debug_getmetatable(_G) ~= lazy_mt then return end
    debug_setmetatable(_G, nil)
    for name, module in pairs(LAZY) do
      if rawget(_G, name) == nil then rawset(_G, name, require(module)) end
    end
  end
  lazy_mt.__index = function(g, name)
    local module = LAZY[name]
    if module == nil then return nil end
    local value = require(module)
    rawset(g, name, value)
    return value
  end
  raw_setmetatable(_G, lazy_mt)
  function getmetatable(v) if v == _G then materialize() end return raw_getmetatable(v) end
  function setmetatable(t, mt) if t == _G then materialize() end return raw_setmetatable(t, mt) end
  function debug.getmetatable(v) if v == _G then materialize() end return debug_getmetatable(v) end
  function debug.setmetatable(v, mt) if v == _G then materialize() end return debug_setmetatable(v, mt) end
else
  for _, module in pairs(LAZY) do require(module) end
end

local host = {}

-- The globals a fresh state has, so the prompt's .vars can show only the user's.
host.builtins = {}
for k in pairs(_G) do host.builtins[k] = true end
for k in pairs(LAZY) do host.builtins[k] = true end
host.drain = runtime.drain
host.deliver = runtime.deliver
host.recover = runtime.recover
host.start = task._start

--- For front ends: cancels a task (and what it waits for).
function host.cancel(t, message) return t:cancel(message) end

--- For Swift callers: runs fn(t) once t has settled; t counts as looked at.
function host.observe(t, fn)
  t[task._OBSERVED] = true
  task._when_settled(t, fn)
end

local function failure_text(t)
  if t.traceback then return require("lunet.traceback").user(t.traceback) end
  return errors.describe(t.error)
end

--- Failures nobody looked at, as report lines (the host prints them).
local function unobserved_reports(reports, except)
  for _, t in ipairs(task._take_unobserved()) do
    if t ~= except then reports[#reports + 1] = "a task failed and nothing awaited or caught it: " .. failure_text(t) end
  end
  return reports
end

--- After a script: its exit status, and the reports to print (how its main task failed, and
--- every failure nobody looked at).
function host.finish(main)
  local http = package.loaded["lunet.http"]   -- nothing to save if it never loaded
  if http then http._save_records() end
  local code, reports = 0, {}
  if main.state == "failed" then
    main[task._OBSERVED] = true
    reports[1] = failure_text(main)
    code = 1
  elseif main.state == "cancelled" then
    reports[1] = errors.describe(main.error)
    code = 1
  elseif main.state == "pending" then
    reports[1] = "the script waits for a task that nothing will ever settle"
    code = 1
  end
  local before = #reports
  unobserved_reports(reports, main)
  -- An unhandled failure fails the script too, unless the script chose "warn".
  if code == 0 and #reports > before and task._unhandled == "exit" then code = 1 end
  return code, reports
end

--- Interactive input: the chunk for `code` (as an expression if it is one), or nil and
--- "incomplete" when more input could complete it, or nil and the syntax error.
-- Each input gets its own chunk name (input#1, input#2, ...) so errors say which one failed.
local inputs, input_count = {}, 0
host.inputs = inputs

function host.compile(code)
  local name = "=input#" .. (input_count + 1)
  local fn = load("return " .. code, name, "t")
  if not fn then
    local err
    fn, err = load(code, name, "t")
    -- A curl command line pasted at the prompt, which is not Lua, is sent as that request
    -- (lunet.import, docs/import.md): after Lua had its say, so `curl = 5` stays an assignment.
    local pasted = not fn and code:find("^%s*curl%s") and require("lunet.import").at_prompt(code)
    if pasted == "incomplete" then return nil, "incomplete" end
    if pasted then fn = pasted end
    if not fn then
      if string.find(err, "<eof>", 1, true) then return nil, "incomplete" end
      return nil, err
    end
  end
  input_count = input_count + 1
  inputs[input_count] = code
  return fn
end


--- After an interactive line: prints its values (or its error), keeps the first in `_`, and
--- returns whether it succeeded and the reports of failures nobody looked at.
--- A failed line as one block: the message, the failing line of the input, and a traceback
--- of the user's own frames (lunet's internals left out).
local function line_failure(t)
  local message = errors.describe(t.error)
  local out = { message }
  local k, n = message:match("^input#(%d+):(%d+):")
  if not k then k, n = (t.traceback or ""):match("\n%s*input#(%d+):(%d+):") end
  local code = k and inputs[tonumber(k)]
  if code then
    local i = 0
    for text in (code .. "\n"):gmatch("(.-)\n") do
      i = i + 1
      if i == tonumber(n) then out[#out + 1] = string.format("  input#%s:%s | %s", k, n, text) break end
    end
  end
  -- At the prompt only the user's Lua frames (the C and lunet ones say little next to the
  -- input line); LUNET_TRACEBACK=full shows them all.
  local tb = require "lunet.traceback"
  local full, frames = tb.full(), {}
  for _, frame in ipairs(t.traceback and tb.frames(t.traceback) or {}) do
    frame = frame:gsub("^%s+", "")
    if full or not (frame:find("^%[lunet%]") or frame:find("^%[C%]") or frame:find("tail calls", 1, true)) then
      frames[#frames + 1] = "  " .. frame
    end
  end
  if #frames > 1 then
    out[#out + 1] = "traceback:"
    for i = 1, full and #frames or math.min(#frames, 6) do out[#out + 1] = frames[i] end
  end
  return table.concat(out, "\n")
end

function host.show(t, color, code)
  host.last_line_kept = false   -- whether this line's value went into `_` (for the prompt's .save)
  if t.state == "done" then
    local values = t.results or { t.result, n = t.result ~= nil and 1 or 0 }
    local n = values.n or #values
    if n > 0 then
      local pretty = require "lunet.pretty"
      local out = {}
      for i = 1, n do out[i] = pretty.value(values[i], { color = color }) end
      io.stdout:write(table.concat(out, "\t"), "\n")
      io.stdout:flush()
      _G._ = values[1]
      host.last_line_kept = true
    end
    return true, unobserved_reports({}, t)
  end
  t[task._OBSERVED] = true
  return false, unobserved_reports({ line_failure(t) }, t)
end

return host
