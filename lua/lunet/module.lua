-- What `require "lunet"` returns in a stock Lua interpreter: lunet's modules, and run() to use
-- tasks from the main thread.
local task = require "lunet.task"

local M = {
  http = require "lunet.http", task = task, json = require "lunet.json", url = require "lunet.url",
  net = require "lunet.net", xml = require "lunet.xml", protobuf = require "lunet.protobuf",
}
-- The interpreter's coroutine functions stay as they were; these pass lunet's awaits through a
-- coroutine of the script's own (what the lunet program's coroutine.resume and wrap do).
local runtime = require "lunet.runtime"
M.coroutine = { resume = runtime.resume, wrap = runtime.wrap }
M.version = select(2, ...).version(false)   -- (true would open libcurl)

--- Runs fn(...) as a lunet coroutine, so `_async` requests and `await` work inside it, and
--- drives the loop until it has finished: its result, or its error raised.
function M.run(fn, ...)
  if type(fn) ~= "function" then require("lunet.errors").argument(1, "run", "function expected, got " .. type(fn)) end
  return task._start(fn, ...):await()
end

return M
