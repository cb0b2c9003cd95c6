-- What a command prints: one module over lunet.terminal_safe, so that every command shows a
-- server's or a document's text the same way, its control bytes escaped instead of obeyed by a
-- terminal. Part of the core floor: features that print (an OpenAPI check's report) and the
-- commands above them (the one-shot line, `api`, `grpc`) use it alike.
local M = {}

local core = select(2, ...)   -- lunet.core, from the module's loader
local function on_terminal(fd) return core.isatty(fd) end

--- A line on standard output; escaped when standard output is a terminal (a pipe gets the
--- bytes as they are).
function M.say(text)
  if on_terminal(1) then text = require("lunet.terminal_safe").text(text) end
  print(text)
end

--- A message on standard error after `prefix` ("lunet api: "); always escaped (plain text
--- passes unchanged, uncopied).
function M.complain(prefix, text)
  io.stderr:write(prefix, require("lunet.terminal_safe").text(text), "\n")
end

--- What text written to `fd` (1, 2) goes through: escaped when it is a terminal, else as it is
--- (for a command that writes to a file handle of its own choosing).
function M.for_fd(fd)
  if on_terminal(fd) then return require("lunet.terminal_safe").text end
  return function(s) return s end
end

--- A value as JSON on standard output: indented for a terminal, one line for a pipe.
function M.json(v)
  local json = require "lunet.json"
  if on_terminal(1) then print(json.encode(v, { pretty = true })) else print(json.encode(v)) end
end

return M
