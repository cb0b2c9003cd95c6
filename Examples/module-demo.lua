-- lunet as a module of a stock Lua 5.4 interpreter:
--   LUA_CPATH="/path/to/dir/with/lunet.so/?.so;;" lua5.4 Examples/module-demo.lua http://127.0.0.1:8080
local lunet = require "lunet"
local base = arg[1] or "http://127.0.0.1:8080"

-- Outside a lunet coroutine a request waits right here, driving lunet's loop.
local r = lunet.http.get(base .. "/get", { query = { from = "lua5.4" } })
print(r.status, r.json.args.from)

-- lunet.run: a coroutine of lunet's, so _async requests run together.
local statuses = lunet.run(function()
  local a = lunet.http.get_async(base .. "/status/201")
  local b = lunet.http.get_async(base .. "/status/202")
  local both = lunet.task.all{ a, b }:await()
  return { both[1].status, both[2].status }
end)
print(statuses[1], statuses[2])

-- Errors are objects with a kind.
local ok, err = pcall(lunet.http.get, "http://127.0.0.1:1/")
print(ok, err.kind)
