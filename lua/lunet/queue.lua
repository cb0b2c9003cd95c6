-- Identifier queues and batches. The decisions are queue_policy's (pure); this file carries
-- them out with tasks and a session.
local task = require "lunet.task"
local errors = require "lunet.errors"
local policy = require "lunet.queue_policy"
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)

local M = {}

local Queue = {}
Queue.__index = Queue
Queue.__name = "lunet.Queue"

local function as_request(req, where)
  if type(req) == "string" then return { method = "GET", url = req } end
  if type(req) ~= "table" or type(req.url) ~= "string" then
    errors.raise("argument", where .. ": a request is a URL string or a table with a url")
  end
  local copy = {}
  for k, v in pairs(req) do copy[k] = v end
  copy.method = copy.method or "GET"
  return copy
end

function M.new(session, max_concurrent)
  return setmetatable({ session = session, max = max_concurrent, entries = {} }, Queue)
end

-- Starts what may start, and forgets what has finished.
function Queue:_pump()
  local kept = {}
  for _, e in ipairs(self.entries) do if e.state ~= "done" then kept[#kept + 1] = e end end
  self.entries = kept
  for _, e in ipairs(policy.startable(self.entries, self.max)) do
    e.state = "running"
    e.inner = self.session:request_async(e.request)
    e.inner:continue(function(t)
      e.state = "done"
      if t.state == "done" then task._resolve(e.task, t.result)
      elseif t.state == "failed" then task._reject(e.task, t.error, t.traceback)
      else task._cancel(e.task, t.error and t.error.message) end
      self:_pump()
    end)
  end
end

--- Adds a request under `id` (nil: no identifier) with options { policy = "wait" (default) |
--- "cancel" | "reuse", max = 1 }; a task of its response.
function Queue:add(id, request, opts)
  opts = opts or {}
  local req = as_request(request, "queue:add")
  local decision = policy.admit(self.entries, id, opts.policy or "wait", opts.max)
  if decision.reuse then return decision.reuse.task end
  for _, e in ipairs(decision.cancel) do
    e.task:cancel("cancelled by a newer request with id " .. tostring(id))
  end
  local entry = { id = id, policy = opts.policy or "wait", state = "waiting", request = req, task = task.new() }
  entry.task.url = req.url
  entry.task:_on_cancel_do(function()
    if entry.inner then entry.inner:cancel() end
    entry.state = "done"
    self:_pump()
  end)
  self.entries[#self.entries + 1] = entry
  self:_pump()
  return entry.task
end

--- Cancels every queued and running request with `id` (every request when id is nil).
function Queue:cancel(id)
  local n = 0
  for _, e in ipairs(self.entries) do
    if e.state ~= "done" and (id == nil or e.id == id) then
      e.task:cancel("cancelled by queue:cancel")
      n = n + 1
    end
  end
  return n
end

--- Queued and running requests with `id` (all of them when id is nil).
function Queue:count(id)
  local n = 0
  for _, e in ipairs(self.entries) do
    if e.state ~= "done" and (id == nil or e.id == id) then n = n + 1 end
  end
  return n
end

--- Waits until nothing is queued or running (failures included; they are the tasks' own).
function Queue:await_all()
  while true do
    local pending
    for _, e in ipairs(self.entries) do if e.state ~= "done" then pending = e break end end
    if not pending then return end
    pending.task:continue(function() end):await()
  end
end

function Queue:__tostring()
  return string.format("queue (%d queued or running)", self:count())
end

-- Batches ------------------------------------------------------------------------------------

-- A progress bar on standard error, redrawn in place.
local function bar(done, total)
  local width = 30
  local filled = total > 0 and math.floor(done / total * width) or width
  io.stderr:write(string.format("\r[%s%s] %d/%d %3d%%", string.rep("#", filled), string.rep(" ", width - filled),
    done, total, total > 0 and math.floor(done / total * 100) or 100))
  if done == total then io.stderr:write("\n") end
  io.stderr:flush()
end

--- Runs requests `concurrency` at a time; a task of the results in input order (a response or
--- an error object each; one failure does not stop the others).
function M.batch_async(session, requests, opts)
  opts = opts or {}
  if type(requests) ~= "table" then errors.argument(1, "batch", "a list of requests expected, got " .. type(requests)) end
  local total = #requests
  local q = M.new(session, opts.concurrency or 8)
  local results, done = {}, 0
  local progress = opts.progress
  local show_bar = progress ~= false and core.isatty(2)
  if type(progress) ~= "function" then progress = nil end
  local finished = task.source()
  if total == 0 then finished:resolve(results) return finished.task end
  for i, req in ipairs(requests) do
    q:add(nil, req):continue(function(t)
      results[i] = t.state == "done" and t.result or t.error
      done = done + 1
      if progress then progress(done, total) end
      if show_bar then bar(done, total) end
      if done == total then finished:resolve(results) end
    end)
  end
  finished.task:_on_cancel_do(function() q:cancel() end)
  return finished.task
end

return M
