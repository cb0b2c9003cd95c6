-- Server faults are kind `protocol`, never `argument` (which names the caller's mistakes) nor a
-- success: a header block cut off, a reply that is not HTTP, a status that is not three digits.
-- A redirect to a scheme lunet refuses to follow is kind `redirects`.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq, truthy = h.eq, h.truthy
local HOSTILE = h.env("LUNET_HOSTILE")

local function fails_with(kind, url, what)
  local ok, err = pcall(http.get, url)
  truthy(not ok, what .. ": should fail, got a response " .. (ok and tostring(err.status) or ""))
  truthy(type(err) == "table" and err.kind == kind, what .. ": kind " .. kind .. ", got " .. tostring(err))
  eq(err.url, url, what .. ": the URL")
  return err
end

test("a response cut off inside its header block fails with kind protocol", function()
  local e = fails_with("protocol", HOSTILE .. "/cut-in-headers", "cut in a header line")
  truthy(e.message:find("header", 1, true), "the message says where: " .. e.message)
  fails_with("protocol", HOSTILE .. "/cut-after-status", "cut after the status line")
end)

test("a reply that is not HTTP, a seven-digit status and a status line without a code are protocol faults", function()
  fails_with("protocol", HOSTILE .. "/http09", "an HTTP/0.9 reply")
  fails_with("protocol", HOSTILE .. "/huge-status", "status 2000000")
  fails_with("protocol", HOSTILE .. "/no-status-code", "no status code")
end)

test("a redirect to file:, ftp: or dict: is refused with kind redirects", function()
  for _, target in ipairs({ "file:///etc/passwd", "ftp://127.0.0.1/x", "dict://127.0.0.1/x" }) do
    local e = fails_with("redirects", HOSTILE .. "/redirect-to?url=" .. target:gsub(":", "%%3A"):gsub("/", "%%2F"), "a redirect to " .. target)
    truthy(e.message:find(target:match("^%a+"), 1, true), "the message names the scheme: " .. e.message)
  end
end)

test("the caller's own non-http URL stays kind argument, and the host stays healthy", function()
  local ok, err = pcall(http.get, "file:///etc/passwd")
  truthy(not ok and err.kind == "argument", tostring(err))
  eq(http.get(HOSTILE .. "/").status, 200, "a normal request after all of them")
  eq(http.stats().transfers, 0, "no transfer left")
end)

if h.done then h.done() end
