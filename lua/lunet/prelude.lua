-- Runs once when a host starts: installs the coroutine functions that understand host awaits,
-- the globals of API.md, and returns what the Swift host drives.
local runtime = require "lunet.runtime"
local errors = require "lunet.errors"

coroutine.resume = runtime.resume
coroutine.wrap = runtime.wrap

local task = require "lunet.task"
http = require "lunet.http"
_G.task = task
json = require "lunet.json"
url = require "lunet.url"

local host = {}
host.drain = runtime.drain
host.start = task._start

local stderr = io.stderr

local function report(prefix, t)
  local text = t.traceback or errors.describe(t.error)
  stderr:write("lunet: ", prefix, text, "\n")
end

--- After a script: reports how its main task ended and every failure nobody looked at.
--- Returns the exit status.
function host.finish(main)
  local code = 0
  if main.state == "failed" then
    main._observed = true
    report("", main)
    code = 1
  elseif main.state == "cancelled" then
    stderr:write("lunet: ", errors.describe(main.error), "\n")
    code = 1
  elseif main.state == "pending" then
    stderr:write("lunet: the script waits for a task that nothing will ever settle\n")
    code = 1
  end
  for _, t in ipairs(task._take_unobserved()) do
    if t ~= main then report("a task failed and nothing awaited or caught it: ", t) end
  end
  return code
end

--- Interactive input: the chunk for `code` (as an expression if it is one), or nil and
--- "incomplete" when more input could complete it, or nil and the syntax error.
function host.compile(code)
  local fn = load("return " .. code, "=stdin", "t")
  if fn then return fn end
  local err
  fn, err = load(code, "=stdin", "t")
  if fn then return fn end
  if string.find(err, "<eof>", 1, true) then return nil, "incomplete" end
  return nil, err
end

--- After an interactive line: prints its values (or its error) and keeps the first in `_`.
function host.show(t)
  if t.state == "done" then
    local values = t.results or { t.result, n = t.result ~= nil and 1 or 0 }
    local n = values.n or #values
    if n > 0 then
      local out = {}
      for i = 1, n do out[i] = errors.describe(values[i]) end
      io.stdout:write(table.concat(out, "\t"), "\n")
      _G._ = values[1]
    end
    return true
  end
  t._observed = true
  report("", t)
  return false
end

return host
