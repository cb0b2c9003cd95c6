-- The identifier queue's decisions, as pure functions over plain tables (no I/O, no tasks):
-- tested without the network. An entry is { id = ..., state = "waiting" | "running" | "done",
-- seq = n }; the queue (queue.lua) carries out what these return.
local M = {}

--- What adding a request with `id` under `policy` does to the live entries (oldest first):
--- returns { cancel = { entries to cancel }, reuse = entry or nil }.
---   "cancel": cancel every live entry with that id, then add (type-ahead search).
---   "reuse":  when `max` live entries with that id exist, return the newest instead of adding.
---   "wait":   add; it will start after the earlier entries with that id (see startable).
function M.admit(entries, id, policy, max)
  local result = { cancel = {} }
  if id == nil then return result end
  local live = {}
  for _, e in ipairs(entries) do
    if e.id == id and e.state ~= "done" then live[#live + 1] = e end
  end
  if policy == "cancel" then
    result.cancel = live
  elseif policy == "reuse" then
    if #live >= (max or 1) then result.reuse = live[#live] end
  elseif policy ~= "wait" and policy ~= nil then
    error("unknown queue policy '" .. tostring(policy) .. "' (use \"cancel\", \"reuse\" or \"wait\")", 0)
  end
  return result
end

--- The waiting entries that may start now, in order: at most `max_concurrent` running in all,
--- and an entry with policy "wait" only when no earlier entry with its id is unfinished.
function M.startable(entries, max_concurrent)
  local running = 0
  for _, e in ipairs(entries) do if e.state == "running" then running = running + 1 end end
  local out = {}
  local blocked = {}   -- ids with an earlier unfinished entry
  for _, e in ipairs(entries) do
    if e.state ~= "done" then
      local must_wait = e.policy == "wait" and e.id ~= nil and blocked[e.id]
      if e.state == "waiting" and not must_wait and running < (max_concurrent or math.huge) then
        out[#out + 1] = e
        running = running + 1
      end
      if e.id ~= nil then blocked[e.id] = true end
    end
  end
  return out
end

return M
