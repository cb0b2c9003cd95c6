-- Network state: whether a route to the outside is up (the kernel's routing tables), changes
-- as they happen (netlink, or polling where netlink is not available), and waiting for the
-- network to come back. The source is injectable so that tests can drive it.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"

local M = {}

local source = core.net_online
local listeners = {}
local waiters = {}          -- sources of tasks waiting for the network
local last                  -- the last state listeners heard
local watching, poll_timer = false, nil
local notified = false      -- the kernel tells of route changes (netlink): no poll for listeners
local polls_in_background   -- poll_timer does not keep a script running (listeners only)

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

-- Polls while someone waits (that timer keeps a script alive until the network is back), and
-- while someone listens to a source that tells no one of its changes (an injected one, or the
-- kernel's without netlink): that timer runs in the background, as listening to netlink does,
-- so a script that set a listener still ends when its work is done.
local poll
local function schedule()
  local wait = #waiters > 0
  local listen = #listeners > 0 and (source ~= core.net_online or not notified)
  if poll_timer and polls_in_background and wait then   -- a waiter came: it must keep the loop
    core.timer_cancel(poll_timer)
    poll_timer = nil
  end
  if poll_timer or not (wait or listen) then return end
  polls_in_background = not wait
  poll_timer = core.timer(0.25, poll, polls_in_background)
end

function poll()
  poll_timer = nil
  check()
  schedule()
end

local function watch()
  if watching then return end
  watching = true
  last = source() and true or false
  notified = core.net_watch(check)   -- immediate notice where netlink works; polling covers the rest
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
  schedule()
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
  schedule()
  return src.task
end

--- For tests: replaces where the state comes from (a function returning a boolean), and checks
--- it now; listeners hear its changes (it is polled every 0.25 s). Pass nil to go back to the
--- kernel's routes.
function M._set_source(fn)
  source = fn or core.net_online
  if watching or #waiters > 0 then check() end
  schedule()
end

--- For tests: re-reads the source now (as a change notice would).
M._check = check

return M
