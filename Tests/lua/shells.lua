-- The installed completions, run as each shell runs them (for install_test and
-- completions_commands_test). Loaded with dofile next to harness.lua:
--   local shells = dofile(dir .. "shells.lua").new(h, { prefix =, xdg =, cwd =, work = })
--   shells:bash("lunet --he")      -- COMPREPLY, sorted
--   shells:fish("lunet --he")      -- `complete -C`'s words, sorted
--   local t = shells:zsh()         -- an interactive zsh on a terminal (tmux), compinit done
local M = {}

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local Shells = {}
Shells.__index = Shells

--- opts: prefix (where scripts/install put lunet), xdg (XDG_CONFIG_HOME), cwd (where the
--- shells run), work (a folder for zsh's dot files and the terminals' socket).
function M.new(h, opts)
  return setmetatable({ h = h, prefix = opts.prefix, xdg = opts.xdg, cwd = opts.cwd, work = opts.work }, Shells)
end

local function lines(out)
  local list = {}
  for w in out:gmatch("[^\n]+") do list[#list + 1] = w end
  table.sort(list)
  return list
end

--- Completes `line` (the cursor at its end) as bash would: COMP_WORDS split at blanks and at
--- runs of word-break characters, COMP_LINE and COMP_POINT; or only COMP_WORDS and COMP_CWORD
--- when `words_only`. Returns COMPREPLY, sorted. The installed lunet is first on PATH.
function Shells:bash(line, words_only)
  local words = {}
  for blank_word in line:gmatch("%S+") do
    local rest = blank_word
    while rest ~= "" do
      local piece = rest:match("^[\"'@><=;|&(:]+") or rest:match("^[^\"'@><=;|&(:]+")
      words[#words + 1] = piece
      rest = rest:sub(#piece + 1)
    end
  end
  if line:find("%s$") then words[#words + 1] = "" end
  local quoted = {}
  for i, w in ipairs(words) do quoted[i] = q(w) end
  local setup = "COMP_WORDS=(" .. table.concat(quoted, " ") .. "); COMP_CWORD=" .. (#words - 1) .. "; "
  if not words_only then setup = setup .. "COMP_LINE=" .. q(line) .. "; COMP_POINT=" .. #line .. "; " end
  local script = "source " .. q(self.prefix .. "/share/bash-completion/completions/lunet") .. "; " .. setup ..
    "_lunet; printf '%s\\n' \"${COMPREPLY[@]}\""
  local code, out = self.h.run("cd " .. q(self.cwd) .. " && PATH=" .. q(self.prefix .. "/bin") .. ":$PATH XDG_CONFIG_HOME=" ..
    q(self.xdg) .. " bash -c " .. q(script))
  assert(code == 0, "bash: " .. out)
  return lines(out)
end

--- What fish offers for `line` (complete -C), the words alone, sorted.
function Shells:fish(line)
  local file = self.prefix .. "/share/fish/vendor_completions.d/lunet.fish"
  local code, out = self.h.run("cd " .. q(self.cwd) .. " && PATH=" .. q(self.prefix .. "/bin") .. ":$PATH XDG_CONFIG_HOME=" ..
    q(self.xdg) .. " fish -c " .. q("source " .. q(file) .. "; complete -C " .. q(line)))
  assert(code == 0, "fish: " .. out)
  local words = {}
  for _, l in ipairs(lines(out)) do words[#words + 1] = l:match("^[^\t]*") end
  return words
end

--- An interactive zsh on a terminal of its own, as a user's: compinit, the installed _lunet in
--- $fpath, the installed lunet first on PATH; its prompt is "zsh> ".
function Shells:zsh()
  local h = self.h
  self.terminals = self.terminals or dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "terminal.lua").new(h, self.work)
  local zdot = self.work .. "/zdot"
  os.execute("mkdir -p " .. q(zdot))
  local rc = assert(io.open(zdot .. "/.zshrc", "w"))
  rc:write("fpath=(" .. q(self.prefix .. "/share/zsh/site-functions") .. " $fpath)\n",
    "autoload -U compinit && compinit -u -d " .. q(zdot .. "/.zcompdump") .. "\n",
    "zstyle ':completion:*' list-rows-first true\nPS1='zsh> '\ncd " .. q(self.cwd) .. "\n")
  rc:close()
  return self.terminals:open("env -i TERM=screen HOME=" .. q(zdot) .. " ZDOTDIR=" .. q(zdot) .. " XDG_CONFIG_HOME=" .. q(self.xdg) ..
    " PATH=" .. q(self.prefix .. "/bin:/usr/bin:/bin") .. " zsh -i", "zsh>")
end

function Shells:stop() if self.terminals then self.terminals:stop() end end

return M
