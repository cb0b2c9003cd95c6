-- `lunet load`'s HTML report (lua/lunet/load/report.lua, report_svg.lua) and the terminal's
-- latency histogram (histogram_text.lua): pure, but for the last test, which renders the report
-- in headless Chromium (scripts/deps test installs it) and looks at its DOM and its pixels.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local report = require "lunet.load.report"
local svg = require "lunet.load.report_svg"
local histogram_text = require "lunet.load.histogram_text"
local hdr = require "lunet.load.hdr"

math.randomseed(20261128)

-- How many times `needle` (plain text) is in s.
local function count(s, needle)
  local n, at = 0, 1
  while true do
    local i = s:find(needle, at, true)
    if not i then return n end
    n, at = n + 1, i + #needle
  end
end

local HOSTILE = "/x?<script>alert(1)</script>&a='b\"</svg>"

-- A run of `seconds` seconds (a row for each), its names, checks and thresholds.
local function run(seconds, hostile)
  local series = {}
  for t = 0, seconds - 1 do
    series[#series + 1] = { t = t, reqs = 800 + t % 50, failed = t % 7 == 0 and 3 or 0, vus = 10 + t % 5,
                            p50 = 1.2 + t % 10 / 10, p95 = 3.4 + t % 3, p99 = 7.9 + t % 13 }
  end
  local x = hostile and HOSTILE or ""
  return {
    title = "checkout.lua" .. x, generated = "2026-11-28T06:30:00Z", shards = 4, elapsed = seconds + 0.2, passed = false,
    series = series,
    names = { { name = "http://127.0.0.1/a" .. x, method = "GET" .. x, count = 100, failed = 2, avg = 1.1, p50 = 1, p95 = 2, p99 = 3, max = 4 },
              { name = "http://127.0.0.1/b", method = "POST", count = 1000, failed = 0, avg = 2.25, p50 = 2, p95 = 3, p99 = 4, max = 50.5 },
              { name = "http://127.0.0.1/c", method = "PUT", count = 10, failed = 10, avg = 0.5, p50 = 0.4, p95 = 0.9, p99 = 1, max = 1.2 } },
    checks = { { name = "status is 200" .. x, passes = 99, fails = 1 }, { name = "has a body", passes = 5, fails = 0 } },
    thresholds = { { key = "http_req_duration" .. x, expression = "p(95) < 200" .. x, passed = true },
                   { key = "http_req_failed", expression = "rate < 0.01", passed = false } },
  }
end

-- The figures NaN and inf printed as words ("dominant-baseline" holds "nan": whole words only).
local function no_nonfinite(html, what)
  local lower = html:lower()
  for _, word in ipairs({ "nan", "inf", "infinity" }) do
    truthy(not lower:find("%f[%a]" .. word .. "%f[%A]"), what .. ": no '" .. word .. "' in the page")
  end
  for d in html:gmatch(' d="([^"]*)"') do
    truthy(d:match("^[MLh%d%.%s%-]+$"), what .. ": a path's data is commands and numbers: " .. d:sub(1, 80))
  end
  for attr, v in html:gmatch(' ([xy][12]?)="([^"]*)"') do
    truthy(tonumber(v), what .. ": " .. attr .. " is a number: " .. v)
  end
end

test("report: one document, four charts, the latency's three series with a legend, nothing fetched", function()
  local html = report.html(run(31))
  eq({ count(html, "<html"), count(html, "</html>"), count(html, "<body>"), count(html, "</body>") }, { 1, 1, 1, 1 }, "one document")
  eq({ count(html, "<svg"), count(html, "</svg>") }, { 4, 4 }, "four charts, each closed")
  for _, id in ipairs({ "reqs", "latency", "errors", "vus" }) do
    truthy(html:find('<figure id="chart-' .. id .. '">', 1, true), "the " .. id .. " chart")
  end
  eq(count(html, "data-series="), 6, "requests, p50, p95, p99, errors, VUs")
  for _, s in ipairs({ "p50", "p95", "p99" }) do
    eq(count(html, '<path class="series series-' .. s .. '" data-series="' .. s .. '"'), 1, "the " .. s .. " path")
    truthy(html:find('<i class="key-' .. s .. '"></i>' .. s, 1, true), "the legend names " .. s)
  end
  eq(count(html, "seconds since start"), 4, "each time axis is titled")
  for _, unit in ipairs({ ">req/s<", ">ms<", ">errors/s<", ">VUs<" }) do truthy(html:find(unit, 1, true), "the unit " .. unit) end
  truthy(html:find('class="xlabel" x="[%d.]+" y="%d+">30<') and html:find('class="ylabel" x="%d+" y="[%d.]+">1k<'), "tick labels on both axes")
  local lower = html:lower()
  for _, fetch in ipairs({ "<script", "<link", "<img", "<iframe", " src=", " href=", "url(", "@import" }) do
    truthy(not lower:find(fetch, 1, true), "nothing fetched or run: no " .. fetch)
  end
  truthy(html:find("default-src 'none'", 1, true), "a Content-Security-Policy forbids anything else")
  no_nonfinite(html, "a run")
end)

test("report: the header, the names by requests, the checks and thresholds with their marks", function()
  local html = report.html(run(31))
  truthy(html:find("<h1>checkout.lua</h1>", 1, true) and html:find("2026-11-28T06:30:00Z", 1, true), "title and when")
  truthy(html:find("4 shards · ran 31.2 s", 1, true), "shards and duration")
  truthy(html:find("✗ failed</span> 1 of 2 thresholds crossed", 1, true), "the verdict")
  local passed = run(31); passed.passed = true; passed.thresholds[2].passed = true
  truthy(report.html(passed):find("✓ passed</span> all 2 thresholds held", 1, true), "a passed run")
  local b, a, c = html:find("127.0.0.1/b", 1, true), html:find("127.0.0.1/a", 1, true), html:find("127.0.0.1/c", 1, true)
  truthy(b < a and a < c, "sorted by requests, the most first")
  truthy(html:find("<td>http://127.0.0.1/a</td><td>GET</td><td>100</td><td class=\"bad\">2.00%</td><td>1.10</td><td>1</td><td>2</td><td>3</td><td>4</td>", 1, true),
    "a name's row: method, requests, failed %, avg, p50, p95, p99, max (ms)")
  truthy(html:find('<td>status is 200</td><td>99</td><td>1</td><td class="bad">✗ 99.00%</td>', 1, true), "a failing check")
  truthy(html:find('<td>has a body</td><td>5</td><td>0</td><td class="ok">✓ 100.00%</td>', 1, true), "a passing check")
  truthy(html:find('<td>http_req_duration</td><td>p(95) &lt; 200</td><td class="ok">✓ held</td>', 1, true), "a held threshold")
  truthy(html:find('<td>http_req_failed</td><td>rate &lt; 0.01</td><td class="bad">✗ crossed</td>', 1, true), "a crossed one")
end)

test("report: hostile strings are text, never markup", function()
  local m = run(5, true)
  m.names[2].name = "</table></svg><svg onload=alert(1)>\1\127"
  local html = report.html(m)
  truthy(not html:lower():find("<script", 1, true), "no <script> anywhere")
  truthy(not html:find("<svg onload", 1, true) and not html:find("</table></svg>", 1, true), "no element made of a name")
  eq({ count(html, "<svg"), count(html, "</svg>"), count(html, "<table"), count(html, "</table>") }, { 4, 4, 3, 3 }, "the document's own elements only")
  local escaped = "/x?&lt;script&gt;alert(1)&lt;/script&gt;&amp;a=&#39;b&quot;&lt;/svg&gt;"
  eq(count(html, escaped), 7, "the title (and the page's <title>), a name, a method, a check, a threshold's key and expression, escaped")
  truthy(html:find("&lt;svg onload=alert(1)&gt;\239\191\189\239\191\189", 1, true), "controls become U+FFFD")
  eq(report.escape([[<a href="x">&'</a>]]), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;", "escape")
end)

test("report: an empty model (or none of its lists) has notes instead of charts and tables", function()
  for what, m in pairs({ empty = { title = "empty.lua", series = {}, names = {}, checks = {}, thresholds = {}, passed = true },
                         bare = {} }) do
    local html = report.html(m)
    eq({ count(html, "<svg"), count(html, "<table"), count(html, "no samples") }, { 0, 0, 4 }, what .. ": no chart, a note each")
    for _, note in ipairs({ "no requests", "no checks", "no thresholds" }) do truthy(html:find(note, 1, true), what .. ": " .. note) end
    no_nonfinite(html, what)
  end
  local quiet = report.html({ series = { { t = 0, reqs = 0, failed = 0, vus = 2 }, { t = 1, reqs = 0, failed = 0, vus = 2 } } })
  eq({ count(quiet, "<svg"), count(quiet, "no samples"), count(quiet, "data-series=") }, { 3, 1, 3 },
     "no request at all: requests, errors and VUs drawn (at 0), latency has no samples")
end)

test("report: one second, gaps, NaN and inf, and very large values", function()
  local one = report.html({ series = { { t = 0, reqs = 5, failed = 0, vus = 1, p50 = 1, p95 = 2, p99 = 3 } } })
  eq({ count(one, "<svg"), count(one, "data-series=") }, { 4, 6 }, "one second: four charts")
  eq(count(one, " h0\"/>"), 6, "each a dot (a zero-length line, drawn by its round cap)")
  local rows = { { t = 0, reqs = 5, p99 = 3 }, { t = 1, reqs = 6, p99 = 0 / 0 }, { t = 5, reqs = 7, p99 = 4 }, { t = 2 }, { t = 0 / 0, reqs = 1 } }
  eq(svg.points(rows, "reqs", true), { { 0, 5 }, { 1, 6 }, { 2, 0 }, { 4, 0 }, { 5, 7 } }, "a count's missing seconds are 0; rows out of order left out")
  eq(svg.points(rows, "p99", false), { { 0, 3 }, false, false, { 5, 4 } }, "a latency's NaN and missing seconds are gaps")
  local wild = { series = { { t = 0, reqs = 1e12, failed = 1 / 0, vus = -1 / 0, p50 = 0 / 0, p95 = 1e308, p99 = 5 },
                            { t = 1, reqs = 2.5e12, failed = 2, vus = 3, p50 = 1, p95 = 2, p99 = 3e6 } },
                 names = { { name = "n", method = "GET", count = 1 / 0, failed = 0 / 0, avg = -1 / 0, p50 = 0 / 0, p95 = 1e300, p99 = 1, max = 2 } },
                 elapsed = 0 / 0, shards = 1 / 0 }
  local html = report.html(wild)
  no_nonfinite(html, "NaN, inf and 1e308")
  truthy(html:find(">2T<", 1, true) and html:find(">3M<", 1, true), "large ticks in T and M")
  eq({ svg.ticks(7, 4) }, { { 0, 2, 4, 6, 8 }, 8 }, "nice ticks: 2s")
  eq({ svg.ticks(2.5e12, 4) }, { { 0, 1e12, 2e12, 3e12 }, 3e12 }, "nice ticks: 1×10^12")
  eq({ svg.ticks(0, 4) }, { { 0, 0.5, 1 }, 1 }, "nothing but 0: up to 1")
  eq({ svg.ticks(5e-324, 4) }, { { 0, 0.5, 1 }, 1 }, "a denormal (10^-324 is 0): as 0")
  eq(svg.label(svg.ticks(0.3, 4)[4]), "0.3", "0.1 × 3 is labelled 0.3")
  eq({ svg.nice_step(1000, 1), svg.nice_step(0.7, 1), svg.nice_step(3, 1), svg.nice_step(1.5e6, 1) }, { 1000, 1, 5, 2e6 }, "1, 2, 5 × 10^k")
end)

test("report: 600 seconds stay small, a point a second", function()
  local html = report.html(run(600))
  truthy(#html < 200 * 1024, "under 200 KB, got " .. #html)
  eq(count(html, "<svg"), 4, "four charts")
  local d = html:match('data%-series="p99" d="([^"]*)"')
  eq({ count(d, "M"), count(d, "L") }, { 1, 599 }, "one line through 600 points")
  no_nonfinite(html, "600 seconds")
end)

-- The display columns of a line: its characters once any colour is taken out.
local function columns(line) return utf8.len((line:gsub("\27%[[%d;]*m", ""))) end

-- Whether line is `head` then a bar of one or more ■.
local function bars(line, head)
  local bar = line:sub(1, #head) == head and line:sub(#head + 1)
  return bar and bar ~= "" and bar:gsub("■", "") == ""
end

local function histogram(values)
  local hist = hdr.new()
  for _, v in ipairs(values) do hist:record(v) end
  return hist
end

local function row_counts(lines)
  local list, sum = {}, 0
  for _, line in ipairs(lines) do
    local n = tonumber(line:match("%[%s*(%d+)%]"))
    list[#list + 1] = n
    sum = sum + n
  end
  return list, sum
end

test("histogram_text: linear rows hold exact counts, labelled by their upper edge in ms", function()
  local values = {}
  for v = 100, 1099 do values[#values + 1] = v end   -- within 100× of each other: linear
  local lines = histogram_text.lines(histogram(values), { width = 80 })
  eq(#lines, 10, "ten rows")
  eq(row_counts(lines), { 100, 100, 100, 100, 100, 100, 100, 100, 100, 100 }, "100 values in each tenth")
  truthy(bars(lines[1], "  0.200ms [100] ") and bars(lines[10], "  1.099ms [100] "), "rows: " .. lines[1] .. " / " .. lines[10])
end)

test("histogram_text: rows add up to the count; no line wider than 60 or 80 columns; colour only when asked", function()
  local spread = {}   -- 1 µs to ~1.2 s, log-uniform (log rows), and some zeros
  for _ = 1, 5000 do spread[#spread + 1] = math.exp(math.random() * 14) end
  for _ = 1, 7 do spread[#spread + 1] = 0 end
  local narrow = {}   -- 10 ms ± 2: linear rows
  for _ = 1, 3000 do narrow[#narrow + 1] = 10000 + math.random(-2000, 2000) end
  for what, values in pairs({ spread = spread, narrow = narrow }) do
    local hist = histogram(values)
    for _, width in ipairs({ 60, 80 }) do
      for _, color in ipairs({ false, true }) do
        local lines = histogram_text.lines(hist, { width = width, color = color })
        local _, sum = row_counts(lines)
        eq(sum, hist.count, what .. ": the rows add up to the count")
        local widest = 0
        for _, line in ipairs(lines) do widest = math.max(widest, columns(line)) end
        eq(widest, width, what .. ": the fullest row fills " .. width .. " columns, none is wider")
        eq(table.concat(lines):find("\27", 1, true) ~= nil, color, what .. ": escape codes only with color")
      end
    end
  end
  eq(#histogram_text.lines(histogram(narrow), { buckets = 5 }), 5, "buckets rows")
end)

test("histogram_text: one value is one row; no value, no rows", function()
  eq(histogram_text.lines(hdr.new(), {}), {}, "empty")
  local one = histogram_text.lines(histogram({ 1234 }), { width = 60 })
  eq(#one, 1, "one row")
  truthy(bars(one[1], "  1.234ms [1] ") and columns(one[1]) == 60, "one value: " .. one[1])
  local same = histogram_text.lines(histogram({ 5000, 5000, 5000 }))
  eq({ #same, (row_counts(same)) }, { 1, { 3 } }, "one value thrice")
  local two = histogram_text.lines(histogram({ 3000, 3001 }))
  eq(select(2, row_counts(two)), 2, "two values a microsecond apart")
end)

-- Headless Chromium. The DOM it dumps shows the page parsed as meant (four charts, six series,
-- no element made of a hostile name); its log shows the page logged nothing (a script error, a
-- fetch or a script the Content-Security-Policy blocked: each logs a CONSOLE line); screenshots
-- show it painted. PNG's compression tells pixels from none: a blank page is ~7 KB at
-- 1000×1400, the report with its charts hidden (same layout, same text) ~45 KB, the report
-- ~110 KB; the ratios asserted leave room for other fonts and anti-aliasing, to which pixel
-- counts would be fragile, and need no PNG decoder. Four runs, under a second each.
local has_chromium = h.run("command -v chromium >/dev/null") == 0
test("report: headless Chromium draws it, logs nothing, and makes no element of hostile names",
  { skip = not has_chromium and "chromium is not installed (scripts/deps test installs it)" }, function()
  local dir = h.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -m 700 " .. dir))
  local function page(name, html)
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(html)
    f:close()
    return "file://" .. dir .. "/" .. name
  end
  local html = report.html(run(60, true))
  local full = page("full.html", html)
  -- the same page, laid out the same, but for its charts' pixels
  local hidden = page("hidden.html", (html:gsub("</style>", ".chart-svg{visibility:hidden}</style>", 1)))
  local blank = page("blank.html", "<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>")
  -- As root (CI containers) Chromium needs --no-sandbox; its log goes to a file of its own.
  local function chromium(args, url)
    return h.run(string.format("{ timeout 60 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage " ..
      "--no-first-run --user-data-dir=%s/profile --enable-logging=stderr --v=0 %s %s 2>%s/log; }", dir, args, url, dir))
  end
  local function quiet(what)
    local log = h.read_file(dir .. "/log") or ""
    truthy(not log:find("CONSOLE", 1, true), what .. ": the page logged nothing: " .. (log:match("[^\n]*CONSOLE[^\n]*") or ""))
  end
  local code, dom = chromium("--dump-dom", full)
  eq(code, 0, "chromium --dump-dom")
  quiet("the DOM's")
  eq({ count(dom, "<svg"), count(dom, "</svg>"), count(dom, "data-series=") }, { 4, 4, 6 }, "the DOM: charts and series")
  for _, s in ipairs({ "p50", "p95", "p99" }) do eq(count(dom, 'class="series series-' .. s .. '"'), 1, "the DOM's " .. s) end
  truthy(not dom:lower():find("<script", 1, true) and dom:find("&lt;script&gt;", 1, true), "hostile names stayed text")
  local sizes = {}
  for what, url in pairs({ full = full, hidden = hidden, blank = blank }) do
    eq((chromium("--window-size=1000,1400 --screenshot=" .. dir .. "/" .. what .. ".png", url)), 0, "a screenshot of " .. what)
    quiet(what)
    local png = h.read_file(dir .. "/" .. what .. ".png") or ""
    eq(png:sub(1, 8), "\137PNG\r\n\26\n", what .. ": a PNG")
    eq({ string.unpack(">I4I4", png, 17) }, { 1000, 1400, 25 }, what .. ": 1000×1400")
    sizes[what] = #png
  end
  truthy(sizes.hidden > 3 * sizes.blank, "text painted: " .. h.show(sizes))
  truthy(sizes.full > 1.5 * sizes.hidden, "charts painted: " .. h.show(sizes))
  os.execute("rm -rf " .. dir .. "/profile")
end)

h.done()
