--- What may follow the words of `lunet grpc [options] HOST:PORT [VERB]`, for the shells'
--- completions (`--complete`): after HOST, the verbs and every method as a call names it
--- (pkg.Service/Method); after `list`, the services; after `describe`, the services and their
--- methods as grpcurl names them (pkg.Service.Method). One a line; a server that cannot be
--- asked gives nothing, and the exit status 1, with no message (a shell shows none).
local describe = require "lunet.grpc.describe"

local M = {}

local function methods(g, service, sep)
  local ok, names = pcall(describe.methods, g, service)
  local out = {}
  for _, full in ipairs(ok and names or {}) do out[#out + 1] = (full:gsub("%.([^.]+)$", sep .. "%1")) end
  return out
end

local function candidates(g, words)
  local services = g:services()
  local out = {}
  local function add(list) for _, w in ipairs(list) do out[#out + 1] = w end end
  if #words == 1 then
    add({ "list", "describe" })
    for _, s in ipairs(services) do add(methods(g, s, "/")) end
  elseif #words == 2 and words[2] == "list" then
    add(services)
  elseif #words == 2 and words[2] == "describe" then
    for _, s in ipairs(services) do add({ s }); add(methods(g, s, ".")) end
  end
  return out
end

function M.words(g, words)
  local ok, out = pcall(candidates, g, words)
  if not ok then return 1 end
  for _, w in ipairs(out) do
    -- A name with a control byte or a blank is no word a shell could take: left out.
    if not w:find("[%c%s]") then io.stdout:write(w, "\n") end
  end
  return 0
end

return M
