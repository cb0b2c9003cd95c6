--- gRPC in `lunet load`, as k6's grpc module records it: `vu:grpc(target, opts)` gives the VU a
--- grpc.client (one per target and VU, made on first use) whose calls are timed into the trend
--- `grpc_req_duration` and counted in `grpc_reqs`, tagged with the method (`name`), the
--- status code's name (`status`: OK, UNAVAILABLE, ...) and the scenario. A call that fails
--- still counts, with its status (or the error's kind), and raises as it would.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"

local M = {}

--- The recorder of a run's gRPC calls: record(vu, method, status, seconds).
function M.recorder(registry)
  local duration = registry:metric("grpc_req_duration", "trend", "time")
  local count = registry:metric("grpc_reqs", "counter")
  return function(vu, method, status, seconds)
    local tags = { name = method, status = status, scenario = vu.scenario }
    for k, v in pairs(vu._scenario_tags or {}) do tags[k] = tostring(v) end
    registry:add(duration, seconds * 1000, tags)
    registry:add(count, 1, tags)
  end
end

local function status_of(ok, err)
  if ok then return "OK" end
  if errors.is(err) then return err.code or err.kind end
  return "error"
end

-- A client whose calls are recorded; the rest of grpc.client's methods as they are.
local function recorded(vu, real, record)
  local wrapper = {}
  local function timed(method_name, name, ...)
    local t0 = core.now()
    local results = table.pack(pcall(real[method_name], real, name, ...))
    record(vu, name, status_of(results[1], results[2]), core.now() - t0)
    if not results[1] then error(results[2], 0) end
    return table.unpack(results, 2, results.n)
  end
  function wrapper.call(_, name, ...) return timed("call", name, ...) end
  function wrapper.stream(_, name, message, opts)
    -- the whole stream is the request: timed from the call to its last reply
    local t0 = core.now()
    local ok, iterator = pcall(real.stream, real, name, message, opts)
    if not ok then record(vu, name, status_of(false, iterator), core.now() - t0) error(iterator, 0) end
    return function()
      local fine, msg = pcall(iterator)
      if not fine then record(vu, name, status_of(false, msg), core.now() - t0) error(msg, 0) end
      if msg == nil then record(vu, name, "OK", core.now() - t0) end
      return msg
    end
  end
  return setmetatable(wrapper, { __index = function(_, k)
    local v = real[k]
    if type(v) == "function" then return function(_, ...) return v(real, ...) end end
    return v
  end })
end

--- vu:grpc(target, opts): the VU's client of `target`, recording its calls.
function M.client(vu, target, opts)
  vu._grpc = vu._grpc or {}
  local c = vu._grpc[target]
  if not c then
    c = recorded(vu, require("lunet.grpc").client(target, opts), vu._grpc_record)
    vu._grpc[target] = c
  end
  return c
end

return M
