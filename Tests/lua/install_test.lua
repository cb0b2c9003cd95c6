-- scripts/install and scripts/uninstall into temporary prefixes: every file in its place, the
-- installed lunet and lunet.so run, the manual renders without warnings, the bash completion
-- completes options, methods and session names, and uninstall removes exactly what install put
-- there. The binary and module installed are this build's (LUNET_INSTALL_BINARY/_MODULE): a
-- release build here would take minutes.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local args = require "lunet.cli.args"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function sh(cmd)
  local code, out = h.run(cmd)
  assert(code == 0, cmd .. ": " .. out)
  return out
end
local function absolute(path) return (sh("realpath " .. q(path)):gsub("%s+$", "")) end
local function has(cmd) return h.run("command -v " .. cmd .. " >/dev/null") == 0 end

local ROOT = absolute(debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or ".")
local LUNET = absolute(h.lunet())
local ENV = "LUNET_INSTALL_BINARY=" .. q(LUNET) ..
  " LUNET_INSTALL_MODULE=" .. q(LUNET:match("^(.*)/[^/]*$") .. "/libLunetLuaModule.so") .. " "

local work = h.tmpname()
os.remove(work)
sh("mkdir -p " .. work)
h.cleanup(after_all, function() os.execute("rm -rf " .. q(work)) end)

local function install(prefix) return h.run(ENV .. q(ROOT .. "/scripts/install") .. " " .. q(prefix)) end
local function uninstall(prefix) return h.run(q(ROOT .. "/scripts/uninstall") .. " " .. q(prefix)) end
local function exists(path) return h.run("test -e " .. q(path)) == 0 end
-- Every path under `dir` with the sha256 of each file: what "as it was" means.
local function snapshot(dir)
  return sh("cd " .. q(dir) .. " && find . -printf '%y %p\\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort")
end

local INSTALLED = {
  "bin/lunet",
  "share/man/man1/lunet.1",
  "share/bash-completion/completions/lunet",
  "share/zsh/site-functions/_lunet",
  "share/fish/vendor_completions.d/lunet.fish",
  "lib/lua/5.4/lunet.so",
  "share/lunet/install-manifest",
}

-- One prefix installed once, for the tests that look at what was installed.
local prefix = work .. "/installed"
local install_code, install_out = install(prefix)

test("install puts every file in its place", function()
  eq(install_code, 0, "install's status: " .. install_out)
  for _, rel in ipairs(INSTALLED) do truthy(exists(prefix .. "/" .. rel), rel .. " installed") end
  eq(sh("stat -c %a " .. q(prefix .. "/bin/lunet")), "755\n", "bin/lunet's mode")
end)

test("the installed lunet runs", function()
  eq({ h.run(q(prefix .. "/bin/lunet") .. " -e 'print(1)'") }, { 0, "1\n" }, "status and output")
end)

test("the installed lunet.so loads in lua5.4", function()
  -- Under scripts/sanitize lunet.so needs the sanitizer's runtime preloaded (as embedding_test).
  local preload = os.getenv("LUNET_SANITIZER_PRELOAD")
  local code, out = h.run((preload and ("LD_PRELOAD=" .. q(preload) .. " ") or "") ..
    "LUA_CPATH=" .. q(prefix .. "/lib/lua/5.4/?.so") .. " lua5.4 -e 'print(type(require(\"lunet\").http.get))'")
  eq({ code, out }, { 0, "function\n" }, "status and output")
end)

test("the manual renders without warnings and lists every option", function()
  local page = prefix .. "/share/man/man1/lunet.1"
  local text
  if has("man") then
    local code, err = h.run("MANWIDTH=200 man --warnings -l " .. q(page) .. " 2>&1 >" .. q(work .. "/man.txt"))
    eq({ code, err }, { 0, "" }, "man -l: status and warnings")
    text = h.read_file(work .. "/man.txt")
  end
  if has("groff") then
    eq({ h.run("groff -man -ww -z -Tutf8 " .. q(page)) }, { 0, "" }, "groff -ww: status and warnings")
  end
  if has("mandoc") then
    eq({ h.run("mandoc -Tlint -Wwarning " .. q(page)) }, { 0, "" }, "mandoc -Tlint: status and warnings")
  end
  if not text then return end
  for _, section in ipairs({ "SYNOPSIS", "ONE REQUEST", "SCRIPTS", "TESTS", "THE PROMPT", "EXIT STATUS",
                             "ENVIRONMENT", "FILES", "lunet/sessions/HOST/NAME.json", "XDG_CONFIG_HOME", "NO_COLOR" }) do
    truthy(text:find(section, 1, true), "the manual has " .. section)
  end
  for _, name in ipairs(args.option_names()) do
    truthy(text:find("\n +" .. name:gsub("%-", "%%-") .. "[ ,\n]"), "the manual lists " .. name)
  end
  truthy(text:find("\n +%-%-jobs N, %-j N\n"), "the manual lists lunet test's options")
end)

-- bash completion ---------------------------------------------------------------------------------

local xdg, cwd = work .. "/config", work .. "/cwd"
-- Named sessions are kept per host (sessions/HOST/NAME.json): every host's names, each once.
sh("mkdir -p " .. q(xdg .. "/lunet/sessions/api.test") .. " " .. q(xdg .. "/lunet/sessions/127.0.0.1_8080") .. " " .. q(cwd .. "/data"))
sh("touch " .. q(xdg .. "/lunet/sessions/api.test/work.json") .. " " .. q(xdg .. "/lunet/sessions/127.0.0.1_8080/staging.json") ..
  " " .. q(xdg .. "/lunet/sessions/127.0.0.1_8080/work.json") .. " " .. q(cwd .. "/notes.txt"))

local shells = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "shells.lua").new(h,
  { prefix = prefix, xdg = xdg, cwd = cwd, work = work })
h.cleanup(after_all, function() shells:stop() end)
local function complete(line, words_only) return shells:bash(line, words_only) end

test("bash completes options", function()
  eq(complete("lunet --hel"), { "--help" }, "lunet --hel")
  eq(complete("lunet --he"), { "--headers", "--help" }, "lunet --he")
  local offered = {}
  for _, w in ipairs(complete("lunet --")) do offered[w] = true end
  for _, name in ipairs(args.option_names()) do truthy(offered[name], "lunet --<TAB> offers " .. name) end
  eq(complete("lunet test --j"), { "--jobs", "--json", "--junit" }, "lunet test --j")
  eq(complete("lunet --pretty "), { "all", "colors", "format", "none" }, "lunet --pretty")
end)

test("bash completes a method, test and scripts first", function()
  eq(complete("lunet PO"), { "POST" }, "lunet PO")
  eq(complete("lunet pa"), { "patch" }, "lunet pa")
  eq(complete("lunet te"), { "test" }, "lunet te")
  eq(complete("lunet no"), { "notes.txt" }, "lunet no (a script)")
  eq(complete("lunet -v DE"), { "DELETE" }, "after an option")
end)

test("bash completes session names from XDG_CONFIG_HOME", function()
  eq(complete("lunet --session "), { "staging", "work" }, "lunet --session <TAB>")
  eq(complete("lunet --session ", true), { "staging", "work" }, "the same from COMP_WORDS and COMP_CWORD only")
  eq(complete("lunet --session-read-only w"), { "work" }, "lunet --session-read-only w")
  -- bash splits `--session=w` at '=', and readline replaces what follows it.
  eq(complete("lunet --session=w"), { "work" }, "lunet --session=w")
end)

test("bash completes files after @ in request items", function()
  eq(complete("lunet POST :8080/post doc@no"), { "@notes.txt" }, "field@file ('@' starts the word readline replaces)")
  eq(complete("lunet POST :8080/post a=@da"), { "@data/" }, "name=@folder")
end)

test("bash completes the auth types after -A and --auth-type (issue 35)", function()
  local TYPES = { "api-key", "aws-sigv4", "basic", "bearer", "digest", "negotiate", "ntlm", "oauth2" }
  eq(complete("lunet -A "), TYPES, "lunet -A <TAB>")
  eq(complete("lunet --auth-type "), TYPES, "lunet --auth-type <TAB>")
  eq(complete("lunet -A d"), { "digest" }, "lunet -A d")
  eq(complete("lunet --auth-type=aw"), { "aws-sigv4" }, "lunet --auth-type=aw")
end)

-- zsh and fish: scripts/deps test installs both, so CI runs these. zsh's completion runs in a
-- real zsh on a terminal (tmux), as a user's would: compinit, the installed _lunet in $fpath.
local function zsh_term() return shells:zsh() end

test("zsh loads the completion", { skip = not has("zsh") and "zsh is not installed" }, function()
  eq({ h.run("zsh -n " .. q(prefix .. "/share/zsh/site-functions/_lunet")) }, { 0, "" }, "zsh -n")
end)

test("zsh completes options, auth types and session names", { skip = not has("zsh") and "zsh is not installed" }, function()
  local t = zsh_term()
  t:type("lunet --pret"); t:keys("Tab")
  t:wait_for("lunet --pretty", 5)
  t:keys("C-u")
  t:type("lunet -A "); t:keys("Tab")
  for _, word in ipairs({ "aws-sigv4", "digest", "oauth2", "api-key" }) do t:wait_for(word, 5) end
  t:keys("C-c")
  t:type("lunet -A dig"); t:keys("Tab")
  t:wait_for("lunet -A digest", 5)
  t:keys("C-u")
  t:type("lunet --session st"); t:keys("Tab")
  t:wait_for("lunet --session staging", 5)
  t:close()
end)

test("fish completes options and session names", { skip = not has("fish") and "fish is not installed" }, function()
  local function fish(line) return shells:fish(line) end
  eq(fish("lunet --hel"), { "--help" }, "lunet --hel")
  truthy(table.concat(fish("lunet --session "), " "):find("work"), "lunet --session <TAB>")
  local offered = {}
  for _, w in ipairs(fish("lunet -A ")) do offered[w] = true end
  for _, word in ipairs({ "basic", "bearer", "digest", "ntlm", "negotiate", "aws-sigv4", "api-key", "oauth2" }) do
    truthy(offered[word], "lunet -A <TAB> offers " .. word)
  end
  eq(fish("lunet --auth-type aw"), { "aws-sigv4" }, "lunet --auth-type aw")
end)

-- uninstall -------------------------------------------------------------------------------------

test("install twice then uninstall leaves the prefix as it was, and what it did not install", function()
  local p = work .. "/used"
  sh("mkdir -p " .. q(p .. "/bin") .. " " .. q(p .. "/share/man/man1") ..
    " && echo mine > " .. q(p .. "/bin/mytool") .. " && echo page > " .. q(p .. "/share/man/man1/other.1"))
  local before = snapshot(p)
  eq(install(p), 0, "first install")
  eq(install(p), 0, "second install")
  local code, out = uninstall(p)
  eq(code, 0, "uninstall: " .. out)
  eq(snapshot(p), before, "the prefix afterwards")
end)

test("uninstall of a prefix install made removes the prefix too", function()
  local p = work .. "/fresh/prefix"
  eq(install(p), 0, "install")
  eq(uninstall(p), 0, "uninstall")
  eq({ exists(p), exists(work .. "/fresh") }, { false, true }, "the prefix gone, its parent (not made by install) kept")
end)

test("uninstall keeps a file put beside lunet's and one changed since it was installed", function()
  local p = work .. "/changed"
  eq(install(p), 0, "install")
  sh("echo note > " .. q(p .. "/share/lunet/notes.txt") .. " && echo '# mine' >> " .. q(p .. "/share/zsh/site-functions/_lunet"))
  local code, out = uninstall(p)
  eq(code, 0, "uninstall: " .. out)
  truthy(out:find("kept " .. p .. "/share/zsh/site-functions/_lunet", 1, true), "it names the file it kept: " .. out)
  eq(sh("cd " .. q(p) .. " && find . -type f | LC_ALL=C sort"), "./share/lunet/notes.txt\n./share/zsh/site-functions/_lunet\n",
    "the files left")
  eq(exists(p .. "/bin"), false, "bin/, made by install and empty, removed")
end)

test("uninstall without a manifest removes nothing and says so", function()
  local p = work .. "/foreign"
  sh("mkdir -p " .. q(p .. "/bin") .. " && echo x > " .. q(p .. "/bin/lunet"))
  local code, out = uninstall(p)
  eq(code, 1, "status")
  truthy(out:find("install-manifest", 1, true), "it says what it looked for: " .. out)
  truthy(exists(p .. "/bin/lunet"), "bin/lunet kept")
end)

if h.done then h.done() end
