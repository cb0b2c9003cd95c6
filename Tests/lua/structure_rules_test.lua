-- The size rules see every language the project is written in (issue 48, item 5):
-- scripts/long-functions measures Swift, Lua (exactly, from luac5.4's listing, wrappers like
-- `return function(M) ... end` included), C, Python and bash (in *.sh files and in extensionless
-- scripts), and scripts/check-structure counts the lines of extensionless scripts too. Each
-- language gets a function of 81 lines (over) and one of 80 (not).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq = h.eq

local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or "./")
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function body(n, line) return string.rep(line .. "\n", n - 2) end

-- A function of `n` lines in each language, as (file name, text).
local function each_language(n, tag)
  return {
    { tag .. ".swift", "func f" .. tag .. "() {\n" .. body(n, "    _ = 1") .. "}\n" },
    { tag .. ".lua", "return function(M)\n" .. body(n, "  M.x = 1") .. "end\n" },
    { tag .. ".c", "int f" .. tag .. "(void) {\n" .. body(n, "    (void)0;") .. "}\n" },
    { tag .. ".py", "def f" .. tag .. "():\n" .. body(n + 1, "    x = 1") },
    { tag .. ".sh", "f" .. tag .. "() {\n" .. body(n, "  :") .. "}\n" },
    { tag .. "-script", "#!/usr/bin/env bash\nf" .. tag .. "() {\n" .. body(n, "  :") .. "}\n" },
  }
end

test("a function over the limit is found in Swift, Lua, C, Python, bash and extensionless scripts", function()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local files = {}
  for _, list in ipairs({ each_language(81, "long"), each_language(80, "fine") }) do
    for _, f in ipairs(list) do
      local fh = assert(io.open(dir .. "/" .. f[1], "w"))
      fh:write(f[2])
      fh:close()
      files[#files + 1] = f[1]
    end
  end
  local code, out = h.run(q(ROOT .. "scripts/long-functions") .. " --check 80 " .. q(dir))
  eq(code, 1, out)
  local found = {}
  for n, path in out:gmatch("(%d+) [^\n]*/([^/:\n]+):%d+") do found[#found + 1] = path .. "=" .. n end
  table.sort(found)
  eq(found, { "long-script=81", "long.c=81", "long.lua=81", "long.py=81", "long.sh=81", "long.swift=81" }, "the long ones, none of the others:\n" .. out)
  os.execute("rm -rf " .. q(dir))
end)

test("check-structure counts an extensionless script's lines", function()
  -- (The tree itself is scripts/test's "structure" step, before any test has run: files the
  -- tests leave behind while they run must not decide this one.)
  -- Its file list: what it measures for size must include scripts/test-servers (no extension).
  local listed = select(2, h.run("cd " .. q(ROOT) .. " && scripts/check-structure --list"))
  h.truthy(listed:find("scripts/test%-servers\n"), "scripts/test-servers is measured:\n" .. listed:sub(1, 400))
end)
