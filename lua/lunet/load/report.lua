--- `lunet load`'s HTML report (issue 37): one self-contained file people open in a browser
--- after a run: the verdict, four charts over time, the per-name table, checks and thresholds.
--- No script, font, image or stylesheet from anywhere (a Content-Security-Policy forbids them
--- too): it opens offline, from a CI artifact, years later. Charts are report_svg.lua's.
---
--- Everything in the model that came from the script or the server (the title, names, URLs,
--- check names, expressions) is HTML-escaped: a URL holding `<script>` is text, never markup.
--- Numbers that are NaN or infinite are shown as absent ("–"), never printed.
---
--- The model (a plain table; the merge of the shards' results builds it):
---   {
---     title = "checkout.lua", generated = "2026-11-28T06:30:00Z", shards = 4, elapsed = 30.2,  -- seconds
---     passed = true,                                      -- all thresholds held
---     series = {                                          -- one per second, ascending t (seconds since the run's start, integers from 0);
---                                                         -- a long run's rows may span `span` seconds (reqs, failed: per second)
---       { t = 0, reqs = 812, failed = 3, vus = 10, p50 = 1.2, p95 = 3.4, p99 = 7.9 },   -- ms; p* may be nil when reqs == 0
---       ...
---     },
---     names = { { name = "http://127.0.0.1/x", method = "GET", count = 100, failed = 2, avg = 1.1, p50 = 1, p95 = 2, p99 = 3, max = 4 }, ... },
---     checks = { { name = "status is 200", passes = 99, fails = 1 }, ... },
---     thresholds = { { key = "http_req_duration", expression = "p(95) < 200", passed = true }, ... },
---   }
--- Any of series, names, checks, thresholds may be empty (or absent).
local svg = require "lunet.load.report_svg"

local M = {}

local ENTITIES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

--- Text safe in HTML content and in a quoted attribute. C0 controls (but tab and newline) and
--- DEL become U+FFFD: a name may hold anything a server or a script put in it.
function M.escape(s)
  if s == nil then return "" end
  s = tostring(s):gsub("[&<>\"']", ENTITIES)
  return (s:gsub("[%z\1-\8\11-\31\127]", "\239\191\189"))
end
local esc = M.escape

local finite = svg.finite

--- A figure for a table cell: "–" when absent or not finite; a few significant digits.
function M.number(v)
  if not finite(v) then return "–" end
  local a = math.abs(v)
  if a >= 1e15 then return string.format("%.6g", v) end
  if v == math.floor(v) or a >= 100 then return string.format("%.0f", v) end
  if a >= 10 then return string.format("%.1f", v) end
  if a >= 1 then return string.format("%.2f", v) end
  return string.format("%.3f", v)
end
local num = M.number

-- A percentage of part in whole, "–" when whole is 0.
local function percent(part, whole)
  if not finite(part) or not finite(whole) or whole <= 0 then return "–" end
  return string.format("%.2f%%", part / whole * 100)
end

-- A light theme that reads at 800 px: the charts scale with the page (their viewBox), the
-- tables scroll sideways rather than squeeze when a URL is long.
local CSS = [[
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI","DejaVu Sans",sans-serif;color:#1d2330;background:#fff;margin:0 auto;padding:16px 20px;max-width:1000px}
h1{font-size:22px;margin:0 0 4px;overflow-wrap:anywhere}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.meta{color:#5a6372;margin:0 0 10px}.verdict{display:inline-block;font-weight:600;padding:4px 10px;border-radius:4px}
.pass{color:#17632a;background:#e4f4e8}.fail{color:#9b1c1c;background:#fbe6e6}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}.card{border:1px solid #dde2ea;border-radius:6px;padding:6px 12px;min-width:120px}
.card b{display:block;font-size:18px}.card span{color:#5a6372;font-size:12px}
figure{margin:0 0 18px}figcaption{font-weight:600;margin-bottom:2px}.note{color:#5a6372;font-style:italic;margin:4px 0}
.chart-svg{width:100%;height:auto;display:block}
.chart-svg text{font-size:11px;fill:#5a6372}.ylabel{text-anchor:end;dominant-baseline:middle}.xlabel{text-anchor:middle}.xtitle{text-anchor:end}
.grid line{stroke:#e6e9ef;stroke-width:1}.grid .axis,.grid .xtick{stroke:#8a93a3}
.series{fill:none;stroke-width:1.8;stroke-linejoin:round;stroke-linecap:round}
.series-reqs{stroke:#2563b0}.series-failed{stroke:#c0392b}.series-vus{stroke:#2e8b57}
.series-p50{stroke:#2563b0}.series-p95{stroke:#e08a00}.series-p99{stroke:#c0392b}
.legend{font-size:12px;color:#5a6372}.legend span{margin-right:14px;white-space:nowrap}.legend i{display:inline-block;width:14px;height:3px;margin-right:5px;vertical-align:middle}
.key-p50{background:#2563b0}.key-p95{background:#e08a00}.key-p99{background:#c0392b}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid #e6e9ef;text-align:right;white-space:nowrap}
th{background:#f4f6f9;font-weight:600}th:first-child,td:first-child{text-align:left;white-space:normal;overflow-wrap:anywhere}
td.ok{color:#17632a}td.bad{color:#9b1c1c;font-weight:600}.left2 th:nth-child(2),.left2 td:nth-child(2){text-align:left}
]]

-- Totals over the series: requests, failed requests, the most VUs.
local function totals(series)
  local reqs, failed, vus = 0, 0, nil
  for _, row in ipairs(series) do
    -- a row of a long run may stand for `span` seconds, its counts per second of them
    local span = finite(row.span) and row.span or 1
    if finite(row.reqs) then reqs = reqs + row.reqs * span end
    if finite(row.failed) then failed = failed + row.failed * span end
    if finite(row.vus) and (vus == nil or row.vus > vus) then vus = row.vus end
  end
  return reqs, failed, vus
end

local function card(value, what)
  return string.format('<div class="card"><b>%s</b><span>%s</span></div>', value, what)
end

-- The title, when and how the run was made, the verdict, the totals.
local function header(model)
  local held, crossed = 0, 0
  for _, th in ipairs(model.thresholds) do
    if th.passed then held = held + 1 else crossed = crossed + 1 end
  end
  local verdict
  if model.passed then
    verdict = '<span class="verdict pass">✓ passed</span> ' .. (#model.thresholds > 0
      and string.format("all %d thresholds held", held) or "no thresholds")
  else
    verdict = string.format('<span class="verdict fail">✗ failed</span> %d of %d thresholds crossed', crossed, #model.thresholds)
  end
  local reqs, failed, vus = totals(model.series)
  local elapsed = finite(model.elapsed) and model.elapsed or nil
  local rate = elapsed and elapsed > 0 and reqs / elapsed or nil
  return table.concat({
    "<header>",
    "<h1>" .. esc(model.title or "lunet load") .. "</h1>",
    string.format('<p class="meta">generated %s · %s shard%s · ran %s s</p>', esc(model.generated or "–"),
      num(model.shards), model.shards == 1 and "" or "s", num(elapsed)),
    "<p>" .. verdict .. "</p>",
    '<div class="cards">',
    card(num(reqs), "requests"), card(num(rate), "requests/s"),
    card(percent(failed, reqs), "failed (" .. num(failed) .. ")"), card(num(vus), "most VUs"),
    "</div>",
    "</header>",
  }, "\n")
end

-- The four charts, each a <figure>: its SVG, or a note when it has no samples.
local CHARTS = {
  { id = "reqs", caption = "Requests per second", unit = "req/s", series = { { "reqs", true } } },
  { id = "latency", caption = "Latency (ms)", unit = "ms", legend = true,
    series = { { "p50", false }, { "p95", false }, { "p99", false } } },
  { id = "errors", caption = "Errors per second (failed requests)", unit = "errors/s", series = { { "failed", true } } },
  { id = "vus", caption = "Active VUs", unit = "VUs", series = { { "vus", false } } },
}

local function charts(model)
  local out = { "<section><h2>Over time</h2>" }
  for _, c in ipairs(CHARTS) do
    local chart, tmax = { label = c.caption, unit = c.unit, series = {} }, 0
    for _, s in ipairs(c.series) do
      local points, last = svg.points(model.series, s[1], s[2])
      if last > tmax then tmax = last end
      chart.series[#chart.series + 1] = { name = s[1], points = points }
    end
    chart.tmax = tmax
    local drawn = svg.chart(chart)
    out[#out + 1] = string.format('<figure id="chart-%s"><figcaption>%s</figcaption>', c.id, c.caption)
    if drawn then
      out[#out + 1] = drawn
      if c.legend then
        out[#out + 1] = '<div class="legend"><span><i class="key-p50"></i>p50</span>' ..
          '<span><i class="key-p95"></i>p95</span><span><i class="key-p99"></i>p99</span></div>'
      end
    else
      out[#out + 1] = '<p class="note">no samples</p>'
    end
    out[#out + 1] = "</figure>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out, "\n")
end

-- A table: a heading, the column names, the rows (cells already escaped), or the note when
-- there are none. A cell is a string, or { text, class }. `class`: the table's, if any.
local function table_html(title, columns, rows, empty, class)
  local out = { "<section><h2>" .. title .. "</h2>" }
  if #rows == 0 then
    out[#out + 1] = '<p class="note">' .. empty .. "</p></section>"
    return table.concat(out, "\n")
  end
  out[#out + 1] = '<div class="scroll"><table' .. (class and ' class="' .. class .. '"' or "") .. "><thead><tr><th>" ..
    table.concat(columns, "</th><th>") .. "</th></tr></thead><tbody>"
  for _, row in ipairs(rows) do
    local cells = {}
    for i, cell in ipairs(row) do
      if type(cell) == "table" then
        cells[i] = string.format('<td class="%s">%s</td>', cell[2], cell[1])
      else
        cells[i] = "<td>" .. cell .. "</td>"
      end
    end
    out[#out + 1] = "<tr>" .. table.concat(cells) .. "</tr>"
  end
  out[#out + 1] = "</tbody></table></div></section>"
  return table.concat(out, "\n")
end

-- The requests by name, the most requested first (then by name and method: a stable order).
local function names_table(names)
  local list = {}
  for i, n in ipairs(names) do list[i] = n end
  local function count(n) return finite(n.count) and n.count or 0 end
  table.sort(list, function(a, b)
    if count(a) ~= count(b) then return count(a) > count(b) end
    if tostring(a.name) ~= tostring(b.name) then return tostring(a.name) < tostring(b.name) end
    return tostring(a.method) < tostring(b.method)
  end)
  local rows = {}
  for i, n in ipairs(list) do
    local failed = finite(n.failed) and n.failed > 0
    rows[i] = { esc(n.name), esc(n.method), num(n.count), { percent(n.failed, n.count), failed and "bad" or "" },
                num(n.avg), num(n.p50), num(n.p95), num(n.p99), num(n.max) }
  end
  return table_html("Requests by name",
    { "name", "method", "requests", "failed", "avg ms", "p50 ms", "p95 ms", "p99 ms", "max ms" }, rows, "no requests")
end

local function checks_table(checks)
  local rows = {}
  for i, c in ipairs(checks) do
    local passes = finite(c.passes) and c.passes or 0
    local fails = finite(c.fails) and c.fails or 0
    local mark = fails == 0 and { "✓", "ok" } or { "✗", "bad" }
    rows[i] = { esc(c.name), num(passes), num(fails), { mark[1] .. " " .. percent(passes, passes + fails), mark[2] } }
  end
  return table_html("Checks", { "check", "passes", "fails", "passed" }, rows, "no checks")
end

local function thresholds_table(thresholds)
  local rows = {}
  for i, th in ipairs(thresholds) do
    rows[i] = { esc(th.key), esc(th.expression), th.passed and { "✓ held", "ok" } or { "✗ crossed", "bad" } }
  end
  return table_html("Thresholds", { "metric", "threshold", "verdict" }, rows, "no thresholds", "left2")
end

--- The report: one HTML document, as a string.
function M.html(model)
  model = {
    title = model.title, generated = model.generated, shards = model.shards, elapsed = model.elapsed,
    passed = model.passed, series = model.series or {}, names = model.names or {},
    checks = model.checks or {}, thresholds = model.thresholds or {},
  }
  return table.concat({
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    -- Nothing may be fetched or run, whatever a name smuggled in: a second wall behind escaping.
    [[<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">]],
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>" .. esc(model.title or "lunet load") .. " · lunet load report</title>",
    "<style>" .. CSS .. "</style></head><body>",
    header(model),
    charts(model),
    names_table(model.names),
    checks_table(model.checks),
    thresholds_table(model.thresholds),
    '<footer class="meta"><p>lunet load · latencies in milliseconds · each point is one second</p></footer>',
    "</body></html>",
    "",
  }, "\n")
end

return M
