-- Programs on a real terminal for tests: tmux sessions (send-keys, capture-pane) on a tmux
-- server of the test file's own. Loaded with dofile next to harness.lua:
--   local terminals = dofile(dir .. "terminal.lua").new(h, dir_for_the_socket)
--   local t = terminals:open("env X=1 /path/to/lunet", "lunet>")
--   t:type("1 + 1"); t:keys("Enter"); t:wait_for("2", 3); t:close()
--   h.cleanup(after_all, function() terminals:stop() end)
local M = {}

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
M.quote = shell_quote

local Terminals = {}
Terminals.__index = Terminals

--- A tmux server with its socket in `dir` (other tmux users on the machine, and sessions a failed
--- run left behind, cannot get in the way); `stop` kills it.
function M.new(h, dir)
  local self = setmetatable({ h = h, count = 0 }, Terminals)
  self.tmux = "tmux -S " .. shell_quote(dir .. "/tmux.sock")
  -- An idle session holds the server up from test to test: a server exits with its last
  -- session, and a test starting just then could reach the exiting server ("tmux could not
  -- start", seen under load).
  assert(os.execute(self.tmux .. " new-session -d -s holder 'sleep 3600'"), "tmux could not start its holder session")
  return self
end

local Term = {}
Term.__index = Term

--- Runs shell `command` on a 150x50 terminal of its own; waits (bounded) for `ready` on it.
function Terminals:open(command, ready)
  self.count = self.count + 1
  local name = "lunet-test-" .. self.count .. "-" .. tostring(os.time())
  local code = self.h.run(self.tmux .. " new-session -d -s " .. name .. " -x 150 -y 50 " .. shell_quote(command))
  assert(code == 0, "tmux could not start")
  local t = setmetatable({ name = name, tmux = self.tmux, h = self.h }, Term)
  if ready then t:wait_for(ready, 10) end
  return t
end

function Terminals:stop() os.execute(self.tmux .. " kill-server 2>/dev/null") end

function Term:keys(...)
  for _, k in ipairs({ ... }) do os.execute(self.tmux .. " send-keys -t " .. self.name .. " " .. k) end
end
function Term:type(text) os.execute(self.tmux .. " send-keys -t " .. self.name .. " -l " .. shell_quote(text)) end
--- What the terminal shows; with `escapes`, its colour codes too.
function Term:screen(escapes)
  local _, out = self.h.run(self.tmux .. " capture-pane -p " .. (escapes and "-e " or "") .. "-t " .. self.name)
  return out
end
--- Polls the screen until `text` (plain) appears; the seconds it took, or fails.
function Term:wait_for(text, seconds, escapes)
  local waited = 0
  while waited < seconds do
    if self:screen(escapes):find(text, 1, true) then return waited end
    task.sleep(0.05)
    waited = waited + 0.05
  end
  error("waited " .. seconds .. " s for " .. string.format("%q", text) .. "; the screen:\n" .. self:screen())
end
function Term:close() os.execute(self.tmux .. " kill-session -t " .. self.name .. " 2>/dev/null") end

return M
