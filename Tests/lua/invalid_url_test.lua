-- An invalid URL without a session of the user's: the message names the problem and never talks
-- of a base_url the user did not set (from Lua and from the one-shot command line).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

test("http.get, http.download and http.websocket with a relative URL: not absolute, no base_url", function()
  for _, call in ipairs({
    function() return http.get("notaurl") end,
    function() return http.post("/get", { json = {} }) end,
    function() return http.download("notaurl/file", h.tmpname()) end,
    function() return http.websocket("notaurl") end,
  }) do
    local e = h.fails("argument", call)
    truthy(e.message:find("not absolute (it needs a scheme: ", 1, true), e.message)
    truthy(not e.message:find("base_url", 1, true), "no base_url: " .. e.message)
  end
  local e = h.fails("argument", function() return http.get("not a url") end)
  truthy(e.message:find("contains spaces", 1, true) and not e.message:find("base_url", 1, true), e.message)
end)

test("a session the user made without base_url still says that it has none", function()
  local e = h.fails("argument", function() return http.session{}:get("notaurl") end)
  truthy(e.message:find("the session has no base_url", 1, true), e.message)
end)

test("lunet GET with an invalid URL names the problem, without base_url", function()
  for _, u in ipairs({ "http://exa mple", "exa mple/x" }) do
    local code, out = h.run(LUNET .. " GET " .. q(u) .. " </dev/null")
    truthy(code ~= 0, u .. ": fails")
    truthy(out:find("invalid URL", 1, true) and out:find("contains spaces", 1, true), u .. ": " .. out)
    truthy(not out:find("base_url", 1, true), u .. ": no base_url: " .. out)
  end
end)

h.done()
