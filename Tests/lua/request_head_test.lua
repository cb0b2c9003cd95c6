-- What lunet puts on the wire as a request's head, read back from a server that answers with it
-- (Tests/servers/echo_head_server.py): the Accept-Encoding line lunet writes into a request's header
-- list itself (Transfer.configureHeaderList), where curl would have made the same line.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
local eq = h.eq

local pipe, pid, port = h.start_server("echo_head_server.py")
local BASE = "http://127.0.0.1:" .. port
h.cleanup(after_all, function() h.stop_server(pipe, pid) end)

local function head(opts, session)
  local r = (session or http.session{}):get(BASE .. "/p", opts)
  eq(r.status, 200, "status")
  return r.body
end

-- The codings lunet removes here (its own decoders, through the system's libraries).
local function codings() return table.concat(http.libcurl().codings, ", ") end

test("a plain GET sends Accept-Encoding once, with every coding lunet removes, right after Accept", function()
  eq(head(), "GET /p HTTP/1.1\nHost: 127.0.0.1:" .. port .. "\nAccept: */*\nAccept-Encoding: "
    .. codings() .. "\nUser-Agent: lunet/" .. require("lunet.core").version(false) .. "\n", "the head")
end)

test("a request's own Accept-Encoding replaces it; removing it sends none", function()
  local body = head({ headers = { ["Accept-Encoding"] = "gzip" } })
  eq(select(2, body:gsub("Accept%-Encoding", "")), 1, "one line: " .. body)
  eq(body:match("Accept%-Encoding: ([^\n]*)"), "gzip", "the request's value")
  body = head({ headers = { ["Accept-Encoding"] = false } })
  eq(body:find("Accept-Encoding", 1, true), nil, "removed: " .. body)
end)

test("decompress = false sends no Accept-Encoding, and the body is left as sent", function()
  local body = head({ decompress = false })
  eq(body:find("Accept-Encoding", 1, true), nil, "the head: " .. body)
end)

test("a gzip body is still decoded (curl decodes what the line offers)", function()
  local r = http.get(h.env("LUNET_HTTPBIN") .. "/gzip")
  eq({ r.status, r.json.gzipped }, { 200, true }, "status and decoded JSON")
  r = http.get(h.env("LUNET_HTTPBIN") .. "/brotli")
  eq({ r.status, r.json.brotli }, { 200, true }, "brotli")
end)

h.done()
