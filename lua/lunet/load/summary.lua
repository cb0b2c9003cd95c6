--- The end of a `lunet load` run, as k6 shows it: the check lines, then one line per metric
--- (trends: avg, min, med, p(90), p(95), p(99), max; counters: total and per second; rates:
--- percent and ✓/✗ counts; gauges: value, min, max), each threshold's metric marked ✓ or ✗,
--- and sub-metrics of thresholds with tags under their metric. And --summary-export's JSON in
--- the shape k6's legacy --summary-export writes (durations in ms; `thresholds` maps each
--- expression to true when it FAILED, as k6 writes it).
local M = {}

--- A duration in milliseconds, as k6 prints it: 850µs, 12.34ms, 1.2s, 1m30s.
function M.duration(ms)
  if ms == nil then return "-" end
  if ms < 1 then return string.format("%.2fµs", ms * 1000):gsub("%.?0+µs$", "µs") end
  if ms < 1000 then return (string.format("%.2fms", ms):gsub("%.?0+ms$", "ms")) end
  local s = ms / 1000
  if s < 60 then return (string.format("%.2fs", s):gsub("%.?0+s$", "s")) end
  return string.format("%dm%ds", math.floor(s / 60), math.floor(s % 60))
end

--- Bytes as k6 prints them (SI: kB, MB, GB).
function M.bytes(n)
  if n < 1000 then return string.format("%.0f B", n) end   -- a rate is seldom whole: 212.5 B/s
  local units = { "kB", "MB", "GB", "TB" }
  local i, v = 0, n
  repeat v = v / 1000; i = i + 1 until v < 1000 or i == #units
  return string.format("%.1f %s", v, units[i]):gsub("%.0 ", " ")
end

local function number(v)
  if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
  return (string.format("%.6f", v):gsub("0+$", ""):gsub("%.$", ""))
end

local function stat_value(stat, f)
  if stat == "avg" or stat == "min" or stat == "med" or stat == "max" then return f[stat] end
  local p = stat:match("^p%(([%d%.]+)%)$")
  if p then return f.p[tonumber(p)] end
end

--- The percentiles a list of trend stats asks for.
function M.percentiles(stats)
  local out = {}
  for _, s in ipairs(stats) do
    local p = s:match("^p%(([%d%.]+)%)$")
    if p then out[#out + 1] = tonumber(p) end
  end
  for _, p in ipairs({ 90, 95, 99 }) do out[#out + 1] = p end
  return out
end

-- The text after a metric's dots.
local function describe(m, f, stats, elapsed)
  if m.kind == "trend" then
    local parts = {}
    for _, s in ipairs(stats) do
      local v = stat_value(s, f)
      parts[#parts + 1] = s .. "=" .. (m.contains == "time" and M.duration(v) or (v and number(v) or "-"))
    end
    return table.concat(parts, " ")
  elseif m.kind == "counter" then
    if m.contains == "data" then return string.format("%-9s %s/s", M.bytes(f.count), M.bytes(f.rate)) end
    return string.format("%-9s %s/s", number(f.count), number(math.floor(f.rate * 100 + 0.5) / 100))
  elseif m.kind == "rate" then
    return string.format("%.2f%%   ✓ %-9d ✗ %d", f.rate * 100, f.passes, f.fails)
  end
  return string.format("%-9s min=%s max=%s", f.value and number(f.value) or "-", f.min and number(f.min) or "-", f.max and number(f.max) or "-")
end

local function dotted(name, width)
  return name .. string.rep(".", math.max(3, width - #name)) .. ":"
end

--- The summary text. run: { registry, elapsed, checks = list of { name, passes, fails },
--- verdicts = { [metric key] = true (all passed) | false }, trend_stats }.
function M.text(run)
  local lines = {}
  for _, c in ipairs(run.checks or {}) do
    local mark = c.fails == 0 and "✓" or "✗"
    lines[#lines + 1] = string.format("     %s %s", mark, c.name)
    -- Its counts, a passing check's too: "✓ 12" says how often it held, which ✓ alone does not.
    local total = c.passes + c.fails
    lines[#lines + 1] = string.format("      ↳  %d%% — ✓ %d / ✗ %d", total > 0 and math.floor(c.passes * 100 / total) or 0, c.passes, c.fails)
  end
  if #lines > 0 then lines[#lines + 1] = "" end
  -- Only metrics that got a sample, as k6 shows them, and those a threshold judged (one that
  -- got no sample says so: a threshold over nothing is no pass).
  local names = {}
  for name, m in pairs(run.registry.metrics) do
    if next(m.sinks) or (run.verdicts and run.verdicts[name] ~= nil) then names[#names + 1] = name end
  end
  table.sort(names)
  local subs = {}
  for key in pairs(run.verdicts or {}) do
    local name, tags = key:match("^([%w_]+)(%b{})$")
    if name then subs[name] = subs[name] or {}; table.insert(subs[name], key) end
  end
  local ps = M.percentiles(run.trend_stats)
  for _, name in ipairs(names) do
    local f, m = run.registry:figures(name, nil, run.elapsed, ps)
    local verdict = run.verdicts and run.verdicts[name]
    local mark = verdict == nil and "  " or (verdict and "✓ " or "✗ ")
    local text = next(m.sinks) and describe(m, f, run.trend_stats, run.elapsed) or "no samples"
    lines[#lines + 1] = "   " .. mark .. dotted(name, 31) .. " " .. text
    table.sort(subs[name] or {})
    for _, key in ipairs(subs[name] or {}) do
      local _, filter = require("lunet.load.thresholds").selector(key)
      local sf = run.registry:figures(name, filter, run.elapsed, ps)
      local inner = key:match("%b{}"):gsub("^{", "{ "):gsub("}$", " }")
      local v = run.verdicts[key]
      lines[#lines + 1] = "   " .. (v and "✓ " or "✗ ") .. "  " .. dotted(inner, 29) .. " " .. describe(m, sf, run.trend_stats, run.elapsed)
    end
  end
  return table.concat(lines, "\n")
end

--- k6's --summary-export shape: { metrics = { NAME = figures (and thresholds) }, root_group }.
function M.export(run)
  local metrics = {}
  local ps = M.percentiles(run.trend_stats)
  for name, m in pairs(run.registry.metrics) do
    local f = next(m.sinks) and run.registry:figures(name, nil, run.elapsed, ps)
    local out
    if not f then
      -- no sample: left out, as k6 leaves it out
    elseif m.kind == "trend" then
      out = { avg = f.avg or 0, min = f.min or 0, med = f.med or 0, max = f.max or 0 }
      for p, v in pairs(f.p or {}) do out[string.format("p(%s)", number(p))] = v end
    elseif m.kind == "counter" then
      out = { count = f.count, rate = f.rate }
    elseif m.kind == "rate" then
      out = { passes = f.passes, fails = f.fails, value = f.rate }
    else
      out = { value = f.value or 0, min = f.min or 0, max = f.max or 0 }
    end
    metrics[name] = out
  end
  for _, th in ipairs(run.thresholds or {}) do
    local target = metrics[th.key]
    if not target then
      -- a sub-metric (tags): its figures under its own key, as k6 writes them
      local f, m = run.registry:figures(th.metric, th.tags, run.elapsed, ps)
      if m then
        target = {}
        if m.kind == "trend" then
          target = { avg = f.avg or 0, min = f.min or 0, med = f.med or 0, max = f.max or 0 }
          for p, v in pairs(f.p or {}) do target[string.format("p(%s)", number(p))] = v end
        elseif m.kind == "counter" then target = { count = f.count, rate = f.rate }
        elseif m.kind == "rate" then target = { passes = f.passes, fails = f.fails, value = f.rate }
        else target = { value = f.value or 0 } end
        metrics[th.key] = target
      end
    end
    if target then
      target.thresholds = target.thresholds or {}
      target.thresholds[th.expression.source] = th.passed == false   -- k6: true when it failed
    end
  end
  local checks = {}
  for _, c in ipairs(run.checks or {}) do
    checks[c.name] = { name = c.name, path = "::" .. c.name, id = c.name, passes = c.passes, fails = c.fails }
  end
  return { metrics = metrics, root_group = { name = "", path = "", id = "", groups = {}, checks = checks } }
end

return M
