--- Thresholds, as k6 writes them: `thresholds = { http_req_duration = { "p(99) < 200" },
--- ["http_req_duration{name:login}"] = { "p(95) < 300" }, http_req_failed = { "rate < 0.01" },
--- checks = { { threshold = "rate > 0.99", abort_on_fail = true, delay_abort_eval = "10s" } } }`.
--- Pure: parsing (a bad expression is a usage error before any request) and judging a metric's
--- figures.
local options = require "lunet.load.options"

local M = {}

local function fail(fmt, ...) error({ usage = string.format(fmt, ...) }, 0) end

-- What each kind of metric can be judged by.
M.AGGREGATES = {
  trend = { avg = true, min = true, max = true, med = true, p = true },
  counter = { count = true, rate = true },
  rate = { rate = true },
  gauge = { value = true },
}
local OPS = {
  ["<"] = function(a, b) return a < b end, ["<="] = function(a, b) return a <= b end,
  [">"] = function(a, b) return a > b end, [">="] = function(a, b) return a >= b end,
  ["=="] = function(a, b) return a == b end, ["==="] = function(a, b) return a == b end,
  ["!="] = function(a, b) return a ~= b end,
}

--- One expression: { source, aggregate ("avg", "p", ...), p (for p), op, value }.
function M.expression(text, where)
  if type(text) ~= "string" then fail("%s: a threshold is a string such as \"p(95) < 200\", got %s", where, type(text)) end
  local agg, p, op, value
  local s = text:gsub("^%s+", ""):gsub("%s+$", "")
  agg, p, op, value = s:match("^(p)%(%s*([%d%.]+)%s*%)%s*([<>=!]+)%s*(%-?[%d%.]+[eE]?[%-+]?%d*)$")
  if not agg then agg, op, value = s:match("^(%a+)%s*([<>=!]+)%s*(%-?[%d%.]+[eE]?[%-+]?%d*)$") end
  if not agg or not OPS[op] or not tonumber(value) then
    fail("%s: '%s' is not a threshold (AGGREGATE OP NUMBER: avg, min, max, med, p(N), count, rate, value; < <= > >= == !=)", where, text)
  end
  if agg ~= "p" then
    local known = false
    for _, kinds in pairs(M.AGGREGATES) do if kinds[agg] then known = true end end
    if not known then fail("%s: '%s' is not an aggregate (avg, min, max, med, p(N), count, rate, value)", where, agg) end
  end
  if agg == "p" and not tonumber(p) then fail("%s: '%s': p takes a percentile in parentheses, as p(95)", where, text) end
  p = p and tonumber(p)
  if p and (p < 0 or p > 100) then fail("%s: p(%s) must be between 0 and 100", where, tostring(p)) end
  return { source = text, aggregate = agg, p = p, op = op, value = tonumber(value) }
end

--- A metric's name and the tags it is filtered by: "http_req_duration{name:login,method:GET}".
function M.selector(key)
  local name, inside = key:match("^([%w_]+)%s*{(.*)}$")
  if not name then
    if not key:match("^[%w_]+$") then fail("thresholds: '%s' is not a metric name (NAME or NAME{tag:value,...})", key) end
    return key, {}
  end
  local tags = {}
  for pair in inside:gmatch("[^,]+") do
    local k, v = pair:match("^%s*([^:]+):(.*)$")
    if not k then fail("thresholds: '%s': each tag is name:value", key) end
    tags[k:gsub("%s+$", "")] = v:gsub("^%s+", ""):gsub("%s+$", "")
  end
  return name, tags
end

--- Every threshold of the options: a list of { key, metric, tags, expressions = list, abort_on_fail,
--- delay_abort_eval }, one per expression, in the options' order by key.
function M.parse(t)
  local out = {}
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, key in ipairs(keys) do
    if type(key) ~= "string" then fail("thresholds: keys are metric names, got %s", type(key)) end
    local metric, tags = M.selector(key)
    local list = t[key]
    if type(list) == "string" then list = { list } end
    if type(list) ~= "table" then fail("thresholds['%s'] must be a list of expressions", key) end
    for i, item in ipairs(list) do
      local where = string.format("thresholds['%s'][%d]", key, i)
      local expr, abort, delay = item, false, 0
      if type(item) == "table" then
        for k in pairs(item) do
          if k ~= "threshold" and k ~= "abort_on_fail" and k ~= "delay_abort_eval" then
            fail("%s: unknown key '%s' (threshold, abort_on_fail, delay_abort_eval)", where, tostring(k))
          end
        end
        expr = item.threshold
        abort = item.abort_on_fail == true
        if item.delay_abort_eval ~= nil then
          local d, err = options.duration(item.delay_abort_eval, where .. ".delay_abort_eval")
          if not d then fail("%s", err) end
          delay = d
        end
      end
      out[#out + 1] = { key = key, metric = metric, tags = tags, expression = M.expression(expr, where),
                        abort_on_fail = abort, delay_abort_eval = delay }
    end
  end
  return out
end

--- Whether `figures` (a metric's: avg, min, max, med, p = { [N] = v }, count, rate, value, in
--- the units the summary shows: ms for durations) meet the expression; nil when the metric has
--- no figure for it (no sample yet: a threshold on nothing passes, as in k6 for trends).
function M.judge(expr, figures)
  local v
  if expr.aggregate == "p" then v = figures.p and figures.p[expr.p] else v = figures[expr.aggregate] end
  if v == nil then return nil end
  return OPS[expr.op](v, expr.value)
end

--- Every threshold of `list` (M.parse's) judged on `registry` now: sets each one's `passed`;
--- returns whether all passed and, per metric key, whether all of its passed (the summary's ✓
--- and ✗). A counter with no sample counts 0, and a gauge with none has no value (passed:
--- nothing crossed it); but a rate or a trend over no sample at all is no pass:
--- `http_req_failed` or `http_req_duration` over a run whose every request was cut off (a target
--- that never answers) judged nothing, and says so (th.no_samples).
function M.judge_all(list, registry, elapsed, percentiles)
  local all, by_key = true, {}
  for _, th in ipairs(list) do
    local f, m = registry:figures(th.metric, next(th.tags) and th.tags or nil, elapsed, percentiles)
    local passed
    th.no_samples = f ~= nil and m ~= nil and ((m.kind == "rate" and f.total == 0) or (m.kind == "trend" and f.count == 0))
    if th.no_samples then
      passed = false
    else
      passed = f and M.judge(th.expression, f)
      if passed == nil then passed = true end
    end
    th.passed = passed
    if by_key[th.key] == nil then by_key[th.key] = true end
    by_key[th.key] = by_key[th.key] and passed
    all = all and passed
  end
  return all, by_key
end

return M
