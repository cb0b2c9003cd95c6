-- What the prompt shows (issue 47, items 5 and 9): Tab on a response offers its fields and
-- methods, never internals; a JSON body prints in the server's order, indented by four as the
-- one-shot command prints it; .vars lists what the user made, not `arg`.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local NGINX = h.env("LUNET_NGINX")
local repl = require "lunet.repl"

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function has(list, word)
  for _, w in ipairs(list) do if w == word then return true end end
  return false
end

test("r.<Tab> offers a response's fields, r:<Tab> its methods, neither its internals", function()
  -- A body that is not JSON: completion must not decode it (r.json would raise).
  _G.completion_probe = http.get(NGINX .. "/utf8.txt")
  local fields = repl.complete("completion_probe.")
  for _, name in ipairs({ "headers", "json", "text", "reason", "timings", "status", "body", "url", "ok" }) do
    truthy(has(fields, "completion_probe." .. name), "r. offers " .. name .. ": " .. table.concat(fields, " "))
  end
  for _, w in ipairs(fields) do truthy(not w:find("%._"), "no internals: " .. w) end
  eq(repl.complete("completion_probe.he"), { "completion_probe.headers" }, "r.he")
  eq(repl.complete("completion_probe:"), { "completion_probe:chunks", "completion_probe:close", "completion_probe:curl" }, "r:")
  eq(repl.complete("completion_probe:cu"), { "completion_probe:curl" }, "r:cu")
  eq(repl.complete("completion_probe._r"), { "completion_probe._raw" }, "internals when asked for by name")
  eq(rawget(_G.completion_probe, "json"), nil, "completion decoded nothing")
  _G.completion_probe = nil
end)

test("a table's own fields that start with '_' are offered only once '_' is typed", function()
  _G.completion_table = { _hidden = 1, shown = 2 }
  eq(repl.complete("completion_table."), { "completion_table.shown" }, "t.")
  eq(repl.complete("completion_table._"), { "completion_table._hidden" }, "t._")
  _G.completion_table = nil
end)

test("the prompt prints a JSON body in the server's order, indented by four", function()
  -- nginx serves {"ok":true,"items":[1,2,3]}: "ok" first, as sent.
  local code, out = h.run("printf '%s\\n' " .. shell_quote('http.get("' .. NGINX .. '/index.json")') .. " | NO_COLOR=1 " .. LUNET)
  eq(code, 0, out)
  truthy(out:find('{\n    "ok": true,\n    "items": [\n        1,', 1, true), "order and indent as sent:\n" .. out)
end)

test(".vars lists the user's variables, not arg", function()
  local code, out = h.run("printf 'mine = 5\\n.vars\\n' | " .. LUNET)
  eq(code, 0, out)
  truthy(out:find("mine = 5", 1, true), out)
  truthy(not out:find("arg =", 1, true), ".vars without arg:\n" .. out)
  code, out = h.run("printf 'arg = 7\\n.vars\\n' | " .. LUNET)
  truthy(out:find("arg = 7", 1, true), "an arg the user set is theirs:\n" .. out)
end)
