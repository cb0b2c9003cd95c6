-- The download progress bar at every rate a body can arrive at (issue 46, item 12): a body
-- under 1 KB/s once crashed the bar ("number has no integer representation"), failing the
-- download and leaving its .part file. The bar's text is pure (lunet.download_progress); the
-- last test draws it for a real slow body (httpbin's /drip).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local BIN = h.env("LUNET_HTTPBIN")
local text = require "lunet.download_progress"

test("sizes for a person at every scale, fractions and nonsense included", function()
  eq({ text.human(0), text.human(0.4), text.human(999.9), text.human(1024), text.human(1536), text.human(5 * 2 ^ 30) },
    { "0 B", "0 B", "999 B", "1.0 KB", "1.5 KB", "5.0 GB" })
  eq({ text.human(-1), text.human(0 / 0), text.human(math.huge) }, { "0 B", "0 B", "inf TB" })
end)

test("the ETA: seconds, '?' when nothing arrives or the wait is past 99 hours", function()
  eq({ text.eta(100, 10), text.eta(0, 10), text.eta(-5, 10), text.eta(100, 0), text.eta(1e18, 1), text.eta(100, 0.5) },
    { "10s", "0s", "0s", "?", "?", "200s" })
end)

test("a line at rates of 0, fractions of a byte a second, and more bytes than announced", function()
  for _, case in ipairs({ { 0, 100, 5 }, { 1, 100, 3 }, { 7, 100, 30 }, { 100, 100, 0 }, { 250, 100, 1 }, { 5, nil, 0 }, { 5, 0, 2 } }) do
    local ok, line = pcall(text.line, case[1], case[2], case[3])
    truthy(ok and type(line) == "string" and line:sub(1, 1) == "\r", "done=" .. case[1] .. " total=" .. tostring(case[2]) .. ": " .. tostring(line))
  end
  truthy(text.line(1, 100, 3):find("ETA 297s", 1, true), text.line(1, 100, 3))
  truthy(text.line(250, 100, 1):find("[########################]", 1, true), "clamped when the server sends more")
end)

test("a body that drips in under 1 KB/s downloads whole with the bar drawn", function()
  local out = h.tmpname()
  local script = h.temp_file(string.format([[
local r = http.download(%q, %q, { progress = "always" })
print(r.status)
]], BIN .. "/drip?numbytes=40&duration=2&delay=0", out), ".lua")
  local code, printed = h.run(h.lunet() .. " " .. script .. " 2>&1")
  eq(code, 0, printed)
  truthy(printed:find("B/s", 1, true), "the bar was drawn: " .. printed)
  eq(h.file_size(out), 40, "the file, whole")
  eq(io.open(out .. ".part"), nil, "no .part left")
end)
