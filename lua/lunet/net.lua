-- Network state: whether a route to the outside is up (the kernel's routing tables), changes
-- as they happen (netlink, or polling where netlink is not available), and waiting for the
-- network to come back. The source is injectable so that tests can drive it.
local core = require "lunet.core"
local task = require "lunet.task"
local errors = require "lunet.errors"

local M = {}

local source = core.net_online
local listeners = {}
local waiters = {}          -- sources of tasks waiting for the network
local last                  -- the last state listeners heard
local watching, poll_timer = false, nil

local function check()
  local now = source() and true or false
  if now == last then return end
  last = now
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, now)
    if not ok then io.stderr:write("lunet: a net.on_change callback failed: ", errors.describe(err), "\n") end
  end
  if now then
    local ready = waiters
    waiters = {}
    for _, src in ipairs(ready) do src:resolve(true) end
  end
end

-- Polls while someone waits (a timer also keeps a script alive until the network is back).
local function poll()
  poll_timer = nil
  check()
  if #waiters > 0 then poll_timer = core.timer(0.25, poll) end
end

local function watch()
  if watching then return end
  watching = true
  last = source() and true or false
  core.net_watch(check)      -- immediate notice where netlink works; polling covers the rest
end

--- Whether a route to the internet is up now.
function M.online()
  return source() and true or false
end

--- Calls fn(online) whenever the state changes.
function M.on_change(fn)
  if type(fn) ~= "function" then errors.argument(1, "on_change", "function expected, got " .. type(fn)) end
  listeners[#listeners + 1] = fn
  watch()
end

--- A task that resolves (with true) once the network is up.
function M.wait_online()
  if M.online() then return task.resolved(true) end
  watch()
  local src = task.source()
  waiters[#waiters + 1] = src
  src.task:_on_cancel_do(function()
    for i, w in ipairs(waiters) do if w == src then table.remove(waiters, i) break end end
  end)
  if not poll_timer then poll_timer = core.timer(0.25, poll) end
  return src.task
end

--- For tests: replaces where the state comes from (a function returning a boolean), and checks
--- it now. Pass nil to go back to the kernel's routes.
function M._set_source(fn)
  source = fn or core.net_online
  if watching or #waiters > 0 then check() end
end

--- For tests: re-reads the source now (as a change notice would).
M._check = check

return M
