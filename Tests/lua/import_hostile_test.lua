-- What an imported file holds stays data (HOSTILE.md, "Bytes that become syntax"): a line end
-- (CR alone too, which ends a Lua comment) or an escape sequence in a script, a page title, a
-- name or a note cannot turn into code in the output, nor into terminal control when the output
-- is printed; the output always compiles, and runs nothing it was not meant to. A file over the
-- limit is refused before it is read whole; a collection with no request is an error.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local json = require "lunet.json"
local LUNET = h.lunet()

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local HOSTILE = "x\rINJECTED = true\n--[[\27]0;pwned\7\0y"

-- The output compiles; run in an environment of its own with describe/test stubbed, it never
-- sets INJECTED; no raw control byte but LF and TAB is in it.
local function harmless(text)
  truthy(not text:find("[%z\1-\8\11-\31\127]"), "no raw control byte: " .. text:gsub("%c", "?"))
  local env = setmetatable({ describe = function() end, test = function() end }, { __index = _G })
  local chunk, err = load(text, "=import", "t", env)
  truthy(chunk, "compiles: " .. tostring(err))
  pcall(chunk)
  eq(rawget(env, "INJECTED"), nil, "nothing injected ran")
end

test("a Postman collection: scripts, names, notes and values with CR, LF, ESC and NUL stay data", function()
  local collection = json.encode({
    info = { name = "Shop" .. HOSTILE, schema = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    variable = { { key = "k" .. HOSTILE, value = HOSTILE } },
    item = { { name = "folder" .. HOSTILE, event = { { listen = "test", script = { exec = { "pm.response.to.have.status(200);" .. HOSTILE } } } },
      item = { { name = "req" .. HOSTILE,
        event = { { listen = "prerequest", script = { exec = HOSTILE } } },
        request = { method = "POST", url = "http://127.0.0.1:1/x?" .. HOSTILE,
          header = { { key = "X-A", value = HOSTILE } }, auth = { type = "hawk" .. HOSTILE },
          body = { mode = "raw", raw = HOSTILE } } } } } } })
  local code, out = h.run(q(LUNET) .. " import postman " .. q(h.temp_file(collection, ".json")))
  eq(code, 0, out)
  harmless(out)
end)

test("a HAR file and a curl command line: the same", function()
  local har = json.encode({ log = { pages = { { id = "p", title = "t" .. HOSTILE } }, entries = { {
    pageref = "p", startedDateTime = "2026-12-01T09:00:00Z", time = 1,
    request = { method = "GET", url = "http://127.0.0.1:1/" .. HOSTILE:gsub("%c", ""), headers = { { name = "X" .. HOSTILE, value = HOSTILE } },
                postData = { mimeType = "multipart/form-data; " .. HOSTILE, text = HOSTILE } } } } } })
  local file = h.temp_file(har, ".har")
  for _, to in ipairs({ "test", "load" }) do
    local code, out = h.run(q(LUNET) .. " import har " .. q(file) .. " --to " .. to)
    eq(code, 0, out)
    harmless(out)
  end
  local cmd = h.temp_file("curl -H $'X: \\r\\x1b]0;t\\a' --bogus$'\\rINJECTED = true' $'http://127.0.0.1:1/\\x1b' -F $'f=@x;z=\\r\\x1b' -d $'a\\rINJECTED = true'")
  for _, to in ipairs({ "script", "test" }) do
    local code, out = h.run(q(LUNET) .. " import curl --to " .. to .. " < " .. q(cmd))
    eq(code, 0, out)
    harmless(out)
  end
  local code, out = h.run(q(LUNET) .. " import curl --to cli < " .. q(cmd))
  eq(code, 0, out)
  truthy(not out:find("[%z\1-\8\11-\31\127]"), "the cli form's notes and words hold no raw control byte: " .. out:gsub("%c", "?"))
end)

test("a file over the limit is refused before it is read whole; a collection with no request is an error", function()
  local big = h.tmpname()
  local f = assert(io.open(big, "wb"))
  f:write('{"log": {"entries": [')
  f:seek("set", 300 * 1024 * 1024)   -- a sparse 300 MiB file
  f:write("]}}")
  f:close()
  local code, out = h.run("/usr/bin/time -f 'rss=%M' " .. q(LUNET) .. " import har " .. q(big))
  eq(code, 2, out)
  truthy(out:find("is larger than 256 MiB", 1, true), out)
  local rss = tonumber(out:match("rss=(%d+)"))
  h.memory_bound(rss, 100 * 1024, "refused without reading it: " .. tostring(rss) .. " KiB")
  code, out = h.run(q(LUNET) .. " import postman " .. q(h.temp_file('{"info": {"name": "e", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"}, "item": [{"name": "empty folder", "item": []}]}', ".json")))
  eq(code, 2, out)
  truthy(out:find("no request to import", 1, true), out)
end)

h.done()
