--- The charts of `lunet load`'s HTML report (report.lua): inline SVG drawn here, no chart
--- library and no script, so the report opens anywhere with no network. A chart is a time axis
--- (seconds since the run's start) and a value axis from 0 with "nice" ticks (1, 2 or 5 × 10^k),
--- one <path> per series (class "series series-NAME", data-series="NAME", so a test can count
--- them). Only finite numbers reach the SVG: NaN, ±inf and absurd values are absent points.
local M = {}

-- The drawing's own units (the viewBox); CSS scales it to the page's width.
local W, H = 760, 220
local LEFT, RIGHT, TOP, BOTTOM = 64, 14, 24, 34
local PLOT_W, PLOT_H = W - LEFT - RIGHT, H - TOP - BOTTOM

-- Beyond this a value is not a measurement (and 2 × it, a nice top, could overflow to inf).
local LARGEST = 1e300

--- A number that may be drawn: finite and not absurd.
function M.finite(v)
  return type(v) == "number" and v == v and v > -LARGEST and v < LARGEST
end
local finite = M.finite

--- The nice step (1, 2 or 5 × 10^k) that cuts `range` (> 0) into about `n` parts.
function M.nice_step(range, n)
  local raw = range / n
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local f = raw / mag
  -- log10 of an exact power of ten can come out a hair under: f is then 10, a nice step too
  local nice = f <= 1 and 1 or f <= 2 and 2 or f <= 5 and 5 or 10
  return nice * mag
end

--- Ticks from 0 to the first multiple of a nice step at or above `hi`: { 0, step, ... }.
--- `least` is the smallest step allowed (1 for whole seconds).
function M.ticks(hi, n, least)
  -- Below 1e-200 a power of ten (10^-324) is 0 and the step with it: nothing to scale.
  if not finite(hi) or hi < 1e-200 then hi = 1 end
  local step = M.nice_step(hi, n)
  if least and step < least then step = least end
  local top = math.ceil(hi / step - 1e-9) * step
  local list, k = {}, 0
  repeat
    list[#list + 1] = k * step   -- k * step, not a running sum: no drift (0.1 + 0.2)
    k = k + 1
  until k * step > top + step / 2 or k > 4 * n   -- the fence: n steps reach top, at most 2.5 n
  return list, top
end

--- A tick's label: %.6g (which rounds 0.30000000000000004 to 0.3), thousands as k, M, G, T.
function M.label(v)
  local a = math.abs(v)
  for _, u in ipairs({ { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" } }) do
    if a >= u[1] and a < 1e15 then return string.format("%.6g", v / u[1]) .. u[2] end
  end
  return string.format("%.6g", v)
end

local function coord(v) return string.format("%.1f", v) end

-- The grid, the tick labels and the axes' titles.
local function axes(xticks, xtop, yticks, ytop, unit)
  local out = { '<g class="grid">' }
  for _, v in ipairs(yticks) do
    local y = coord(TOP + PLOT_H - v / ytop * PLOT_H)
    out[#out + 1] = string.format('<line x1="%d" x2="%d" y1="%s" y2="%s"/>', LEFT, LEFT + PLOT_W, y, y)
    out[#out + 1] = string.format('<text class="ylabel" x="%d" y="%s">%s</text>', LEFT - 6, y, M.label(v))
  end
  for _, v in ipairs(xticks) do
    local x = coord(LEFT + v / xtop * PLOT_W)
    out[#out + 1] = string.format('<line class="xtick" x1="%s" x2="%s" y1="%d" y2="%d"/>', x, x, TOP + PLOT_H, TOP + PLOT_H + 4)
    out[#out + 1] = string.format('<text class="xlabel" x="%s" y="%d">%s</text>', x, TOP + PLOT_H + 16, M.label(v))
  end
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', LEFT, LEFT, TOP, TOP + PLOT_H)
  out[#out + 1] = string.format('<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>', LEFT, LEFT + PLOT_W, TOP + PLOT_H, TOP + PLOT_H)
  out[#out + 1] = string.format('<text class="unit" x="%d" y="%d">%s</text>', 4, TOP - 12, unit)
  out[#out + 1] = string.format('<text class="xtitle" x="%d" y="%d">seconds since start</text>', LEFT + PLOT_W, H - 2)
  out[#out + 1] = "</g>"
  return table.concat(out, "\n")
end

-- A series' path: "M" starts each run of points, "L" continues it; a point alone is "M x y h0",
-- which the round line cap draws as a dot. points: { { t, v } or false (a gap), ... }.
local function path_data(points, xtop, ytop)
  local d, run = {}, 0
  for _, p in ipairs(points) do
    if p then
      local x = coord(LEFT + p[1] / xtop * PLOT_W)
      local y = coord(TOP + PLOT_H - p[2] / ytop * PLOT_H)
      d[#d + 1] = (run == 0 and "M" or "L") .. x .. " " .. y
      run = run + 1
    else
      if run == 1 then d[#d + 1] = "h0" end
      run = 0
    end
  end
  if run == 1 then d[#d + 1] = "h0" end
  return table.concat(d, " ")
end

--- One chart's SVG, or nil when no series has a point. chart = { label (for screen readers),
--- unit, tmax (seconds), series = { { name, points = { { t, v } | false, ... } }, ... } } with
--- every t and v finite and >= 0 (M.points makes them so).
function M.chart(chart)
  local ymax, any = 0, false
  for _, s in ipairs(chart.series) do
    for _, p in ipairs(s.points) do
      if p then any = true; if p[2] > ymax then ymax = p[2] end end
    end
  end
  if not any then return nil end
  local xticks, xtop = M.ticks(math.max(chart.tmax, 1), 8, 1)
  local yticks, ytop = M.ticks(ymax, 4)
  local out = { string.format('<svg class="chart-svg" viewBox="0 0 %d %d" role="img" aria-label="%s">', W, H, chart.label),
                axes(xticks, xtop, yticks, ytop, chart.unit) }
  for _, s in ipairs(chart.series) do
    local d = path_data(s.points, xtop, ytop)
    if d ~= "" then
      out[#out + 1] = string.format('<path class="series series-%s" data-series="%s" d="%s"/>', s.name, s.name, d)
    end
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

--- The points of one column of the model's series (rows of { t = second, [key] = value }, in
--- ascending t; a row with a bad t, not a number, negative or not after the last, is left out).
--- `zero_gaps`: a second with no row counts 0 (requests, errors: nothing happened); otherwise
--- it is a gap in the line (a latency, or VUs: not known). Walking the rows, never the seconds
--- between them, keeps a stray huge t cheap.
function M.points(rows, key, zero_gaps)
  local points, last = {}, nil
  for _, row in ipairs(rows) do
    local t, v = row.t, row[key]
    if finite(t) and t >= 0 and (last == nil or t > last) then
      if last and t - last > 1 then
        if zero_gaps then
          points[#points + 1] = { last + 1, 0 }
          if t - last > 2 then points[#points + 1] = { t - 1, 0 } end
        else
          points[#points + 1] = false
        end
      end
      if finite(v) and v >= 0 then
        points[#points + 1] = { t, v }
      elseif zero_gaps then
        points[#points + 1] = { t, 0 }
      else
        points[#points + 1] = false
      end
      last = t
    end
  end
  return points, last or 0
end

return M
