-- Timers and combinators over lunet tasks: delay, sleep, Task:timeout, all, any, race.
-- lunet.task calls this once with its module, the Task methods table and the primitives they
-- are built from (kept local there, so tasks stay cheap), and the functions land on M and Task.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"

-- Timers ---------------------------------------------------------------------------------

local function install_timers(M, Task, p)
  local new, resolve, reject, cancel, adopt = p.new, p.resolve, p.reject, p.cancel, p.adopt
  local when_settled = p.when_settled

  --- A task that resolves after `seconds`.
  function M.delay(seconds, value)
    if type(seconds) ~= "number" then errors.argument(1, "delay", "number of seconds expected, got " .. type(seconds)) end
    local t = new()
    local timer = core.timer(seconds, function() resolve(t, value) end)
    t:_on_cancel_do(function() core.timer_cancel(timer) end)
    return t
  end

  function M.sleep(seconds)
    if type(seconds) ~= "number" then errors.argument(1, "sleep", "number of seconds expected, got " .. type(seconds)) end
    return M.delay(seconds):await()
  end

  --- A task that fails with kind "timeout" if this one is not done within `seconds`; the
  --- original is then cancelled (it stands for work nobody waits for any more). Cancelling the
  --- returned task cancels the original too.
  function Task:timeout(seconds)
    if type(seconds) ~= "number" then errors.argument(1, "timeout", "number of seconds expected, got " .. type(seconds)) end
    local t2 = new()
    local source = self
    local timer = core.timer(seconds, function()
      if reject(t2, errors.new("timeout", string.format("not done within %g s", seconds))) then
        cancel(source, string.format("timed out after %g s", seconds))
      end
    end)
    adopt(t2, self)
    when_settled(t2, function() core.timer_cancel(timer) end)
    t2:_on_cancel_do(function() cancel(source) end)
    return t2
  end
end

-- Combinators --------------------------------------------------------------------------------

local function install_combinators(M, p)
  local new, resolve, reject, observe, is_task = p.new, p.resolve, p.reject, p.observe, p.is_task
  local adopt, when_settled = p.adopt, p.when_settled

  local function check_list(list, name)
    if type(list) ~= "table" then errors.argument(1, name, "a list of tasks expected, got " .. type(list)) end
    for i = 1, #list do
      if not is_task(list[i]) then errors.argument(1, name, "item " .. i .. " is a " .. type(list[i]) .. ", not a task") end
    end
  end

  -- The error a combinator fails with: the first error in input order, with every error in
  -- `errors` (in input order; cancelled tasks give their `cancelled` error).
  local function combined_error(errs, n)
    local list, first = {}, nil
    for i = 1, n do
      if errs[i] ~= nil then
        list[#list + 1] = errs[i]
        first = first or errs[i]
      end
    end
    local e
    if errors.is(first) then
      e = errors.new(first.kind, first.message)
      for k, v in pairs(first) do e[k] = v end
    else
      e = errors.new(nil, errors.describe(first))
    end
    e.errors = list
    return e
  end

  --- Waits for every task: the list of results in input order, or the first error in input
  --- order with `errors` listing all of them.
  function M.all(list)
    check_list(list, "all")
    local n, t = #list, new()
    local results, errs, remaining, failed = {}, {}, n, false
    if n == 0 then resolve(t, results); return t end
    for i = 1, n do
      observe(list[i])
      when_settled(list[i], function(s)
        if s.state == "done" then results[i] = s.result else errs[i] = s.error; failed = true end
        remaining = remaining - 1
        if remaining == 0 then
          if failed then reject(t, combined_error(errs, n)) else resolve(t, results) end
        end
      end)
    end
    return t
  end

  --- The first success; fails only when every task failed.
  function M.any(list)
    check_list(list, "any")
    local n, t = #list, new()
    local errs, remaining = {}, n
    if n == 0 then reject(t, errors.new("argument", "task.any of an empty list")); return t end
    for i = 1, n do
      observe(list[i])
      when_settled(list[i], function(s)
        if s.state == "done" then resolve(t, s.result); return end
        errs[i] = s.error
        remaining = remaining - 1
        if remaining == 0 then reject(t, combined_error(errs, n)) end
      end)
    end
    return t
  end

  --- Settles as the first task to settle does.
  function M.race(list)
    check_list(list, "race")
    local t = new()
    for i = 1, #list do adopt(t, list[i]) end
    return t
  end

end

return function(M, Task, p)
  install_timers(M, Task, p)
  install_combinators(M, p)
end
