-- http.openapi and lunet api against ../shared/HOSTILE.md's classes that apply to a document a
-- server hands over: a $ref that would read this machine's files, a server that never sends
-- the document, control bytes in its text printed to a terminal, a header value that would
-- split the request, a schema that requires itself (for --check's generator), and a YAML
-- alias bomb.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy, fails = h.eq, h.truthy, h.fails
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end
local BIN = h.env("LUNET_HTTPBIN")
local HOSTILE = h.env("LUNET_HOSTILE")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- httpbin's /base64/ serves what it decodes: a document from a server
local function served(doc) return h.served_by_httpbin(BIN, json.encode(doc)) end

local function doc_with(op)
  return { openapi = "3.0.3", info = { title = "t", version = "1" }, servers = { { url = BIN .. "/anything" } },
           paths = { ["/x"] = { get = op } } }
end

test("a document from a server may not $ref this machine's files", function()
  local url = served(doc_with({ operationId = "x", parameters = { { ["$ref"] = "file:///etc/hostname#/p" } },
    responses = { ["200"] = { description = "ok" } } }))
  local e = fails("openapi", function() http.openapi(url) end)
  truthy(tostring(e):find("only URLs", 1, true) and tostring(e):find("file:///etc/hostname", 1, true), tostring(e))
  -- a relative $ref resolves against the URL: another URL, which is allowed (and names nothing here)
  url = served(doc_with({ operationId = "x", parameters = { { ["$ref"] = "other.json#/p" } }, responses = { ["200"] = { description = "ok" } } }))
  e = fails("openapi", function() http.openapi(url) end)
  truthy(not tostring(e):find("only URLs", 1, true), "a URL $ref is followed: " .. tostring(e))
end)

test("a server that never sends the document: the load ends at its timeout", function()
  local t0 = os.time()
  local e = fails("openapi", function() http.openapi(HOSTILE .. "/stall", { timeout = 1 }) end)
  truthy(os.time() - t0 <= 4, "bounded: " .. (os.time() - t0) .. " s")
  truthy(tostring(e):find("timeout", 1, true), tostring(e))
end)

test("a header parameter with CR or LF is refused before anything is sent", function()
  local api = http.openapi(served(doc_with({ operationId = "x",
    parameters = { { name = "X-Trace", ["in"] = "header", schema = { type = "string" } } },
    responses = { ["200"] = { description = "ok" } } })))
  local e = fails("argument", function() api.x{ ["X-Trace"] = "a\r\nX-Injected: 1" } end)
  truthy(tostring(e):find("X-Trace", 1, true), tostring(e))
end)

test("a schema that requires itself: --check skips the operation with the reason, never recurses for ever", function()
  local doc = doc_with({ operationId = "x", responses = { ["200"] = { description = "ok" } },
    requestBody = { required = true, content = { ["application/json"] = { schema = { ["$ref"] = "#/components/schemas/Node" } } } } })
  doc.paths["/x"].post, doc.paths["/x"].get = doc.paths["/x"].get, nil
  doc.components = { schemas = { Node = { type = "object", required = { "child" }, properties = { child = { ["$ref"] = "#/components/schemas/Node" } } } } }
  local report = http.openapi(served(doc)):check{ seed = 1, max_examples = 3 }
  eq(#report.failures, 0)
  truthy(report.skipped[1] and report.skipped[1].reason:find("requires itself", 1, true), "skipped, with why: " .. tostring(report.skipped[1] and report.skipped[1].reason))
end)

test("a YAML alias bomb is refused at load time", function()
  local lines = { "openapi: 3.0.3", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]" }
  for i = 1, 9 do lines[#lines + 1] = string.format("a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1) end
  local e = fails("openapi", function() http.openapi(h.temp_file(table.concat(lines, "\n") .. "\n")) end)
  truthy(tostring(e):find("alias", 1, true), tostring(e))
end)

test("a document's text is shown escaped on a terminal: lunet api lists what a server wrote", function()
  local url = served(doc_with({ operationId = "x", summary = "\27]2;pwned\7 and \27[31mred", responses = { ["200"] = { description = "ok" } } }))
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local terminals = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "terminal.lua").new(h, dir)
  local t = terminals:open(q(LUNET) .. " api " .. q(url) .. "; echo __exit=$?; sleep 60")
  t:wait_for("__exit=", 20)
  local screen = t:screen(true)
  t:close()
  terminals:stop()
  truthy(screen:find("\\x1b]2;pwned\\x07", 1, true), "the title sequence shown, not obeyed:\n" .. screen)
  truthy(not screen:find("\27[31mred", 1, true), "no colour from the document:\n" .. screen)
end)

h.done()
