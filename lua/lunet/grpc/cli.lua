--- `lunet grpc HOST:PORT ...`, as grpcurl users expect it:
---   lunet grpc [options] HOST:PORT list [SERVICE]
---   lunet grpc [options] HOST:PORT describe SYMBOL
---   lunet grpc [options] HOST:PORT SERVICE/METHOD ['{"json":"request"}' | -d @ (requests from stdin)]
--- JSON in, JSON out (one reply a line, pretty on a terminal). TLS unless --plaintext; schemas
--- by reflection unless --protoset or --proto. Exit status: 0; 64 + the gRPC status code of a
--- non-OK answer (grpcurl's); 2 a usage error; 1 anything else (connection, protocol).
local json = require "lunet.json"
local errors = require "lunet.errors"

local M = {}

--- Seconds a connection (TLS included) may take unless --connect-timeout says: grpcurl's.
M.CONNECT_TIMEOUT = 10

M.USAGE = [[
usage: lunet grpc [options] HOST:PORT list [SERVICE]
       lunet grpc [options] HOST:PORT describe SYMBOL
       lunet grpc [options] HOST:PORT SERVICE/METHOD [JSON | -d JSON | -d @]
  --plaintext          HTTP/2 without TLS (h2c); TLS otherwise
                       (grpcurl's one-dash spellings work too: -plaintext, -import-path DIR)
  --insecure           TLS without checking the server's certificate
  --cacert FILE        check the server's certificate against FILE
  -H 'name: value'     metadata (again for more; -bin names take the raw value)
  --deadline SECONDS   the call's deadline (sent as grpc-timeout, enforced here)
  --connect-timeout S  seconds for connecting, TLS included (10)
  --protoset FILE      schemas from a descriptor set instead of reflection
  --proto FILE         schemas from a .proto file (protoc)
  --import-path DIR    where --proto's imports are (again for more)
  -d JSON, -d @        the request (a JSON object), or requests from standard input
  --max-msg-sz BYTES   the largest reply message (4 MiB)
  --complete           print what may follow the words given (verbs, services, methods):
                       what the shells' completions ask
  --help               this text
Exit status: 0; 64 + the gRPC status code; 2 usage; 1 other failures.]]

local TAKES = { ["-H"] = "header", ["--deadline"] = "deadline", ["--protoset"] = "protoset", ["--proto"] = "proto",
                ["--import-path"] = "import_path", ["-d"] = "data", ["--cacert"] = "cacert", ["--max-msg-sz"] = "max",
                ["--connect-timeout"] = "connect_timeout" }
local FLAGS = { ["--plaintext"] = "plaintext", ["--insecure"] = "insecure", ["--help"] = "help", ["-h"] = "help",
                ["--complete"] = "complete" }

local function usage(message) error({ usage = message }, 0) end

-- A message on standard error: what a server put in it (grpc-message, a reflection error) shows
-- its control bytes escaped, never obeyed by a terminal (lunet.output).
local output = require "lunet.output"
local function complain(text) output.complain("lunet grpc: ", text) end

-- grpcurl's flags are Go's: one dash (-plaintext, -d, -import-path=DIR) or two. A word of one
-- dash that names a long option of lunet grpc is read as that option.
local function go_flags(argv)
  local out = {}
  for i, a in ipairs(argv) do
    local name, rest = a:match("^%-(%a[%w-]+)(=?.*)$")
    local long = name and #name > 1 and ("--" .. name)
    if long and (TAKES[long] or FLAGS[long]) then out[i] = long .. rest else out[i] = a end
  end
  return out
end

local function parse(argv)
  argv = go_flags(argv)
  local c = require("lunet.cli.argv").read(argv, { takes = TAKES, flags = FLAGS, lists = { header = true, import_path = true },
    help = "lunet grpc --help" }, usage, function(c, w) c.words = c.words or {}; c.words[#c.words + 1] = w end)
  c.words = c.words or {}
  if c.help or c.complete and #c.words >= 1 then return c end
  if #c.words < 2 then usage("which server and what? " .. M.USAGE) end
  local metadata = {}
  for _, h in ipairs(c.header) do
    local k, v = h:match("^%s*([^:]+):%s*(.*)$")
    if not k then usage("-H takes 'name: value', got '" .. h .. "'") end
    metadata[k:lower()] = v
  end
  c.metadata = metadata
  for _, o in ipairs({ "deadline", "connect_timeout" }) do
    if c[o] and not (tonumber(c[o]) and tonumber(c[o]) > 0) then usage("--" .. o:gsub("_", "-") .. " takes seconds, got '" .. c[o] .. "'") end
  end
  return c
end

-- The requests: the JSON word, -d JSON, or -d @ (JSON objects one after another on stdin).
local function requests(c, json_word)
  local text = json_word or c.data
  if text == "@" then text = io.stdin:read("a") end
  if text == nil or text:match("^%s*$") then return { {} } end
  local list, pos = {}, 1
  while true do
    local start = text:find("%S", pos)
    if not start then break end
    local depth, i, in_string = 0, start, false
    repeat   -- one JSON value: to its matching close (strings skipped)
      local ch = text:sub(i, i)
      if in_string then
        if ch == "\\" then i = i + 1 elseif ch == '"' then in_string = false end
      elseif ch == '"' then in_string = true
      elseif ch == "{" or ch == "[" then depth = depth + 1
      elseif ch == "}" or ch == "]" then depth = depth - 1 end
      i = i + 1
    until (depth == 0 and not in_string) or i > #text
    local ok, v = pcall(json.decode, text:sub(start, i - 1))
    if not ok then usage("the request is not JSON: " .. errors.describe(v)) end
    list[#list + 1] = v
    pos = i
  end
  return list
end

-- Names from a server's descriptors, printed to a terminal: control bytes escaped, never obeyed.
local say, show = output.say, output.json

local function run(argv)
  local ok, c = pcall(parse, argv)
  if not ok then
    if type(c) == "table" and c.usage then complain(c.usage) return 2 end
    error(c, 0)
  end
  if c.help then print(M.USAGE) return 0 end
  local target, verb = c.words[1], c.words[2]
  if c.complete then   -- a shell waits on this: short limits unless the user set them
    c.connect_timeout = c.connect_timeout or "2"
    c.deadline = c.deadline or "3"
  end
  local g = require("lunet.grpc").client((c.plaintext and "http://" or "https://") .. target, {
    reflection = not (c.protoset or c.proto), descriptor = c.protoset, proto = c.proto,
    import_paths = #c.import_path > 0 and c.import_path or nil, insecure = c.insecure, ca_file = c.cacert,
    metadata = c.metadata, deadline = tonumber(c.deadline), max_message = tonumber(c.max),
    connect_timeout = tonumber(c.connect_timeout) or M.CONNECT_TIMEOUT,
  })
  if c.complete then return require("lunet.grpc.complete").words(g, c.words) end
  if verb == "list" then
    if c.words[3] then
      for _, name in ipairs(require("lunet.grpc.describe").methods(g, c.words[3])) do say(name) end
      return 0
    end
    for _, name in ipairs(g:services()) do say(name) end
    return 0
  end
  if verb == "describe" then
    if not c.words[3] then usage("describe which symbol?") end
    say(g:describe(c.words[3]))
    return 0
  end
  local m = g:method(verb)
  local list = requests(c, c.words[3])
  if m.server_streaming then
    for reply in g:stream(verb, m.client_streaming and list or list[1]) do show(reply) end
  else
    show((g:call(verb, m.client_streaming and list or list[1])))
  end
  return 0
end

--- Runs `lunet grpc` with the words after `grpc`; the exit status.
function M.main(argv)
  local ok, status = pcall(run, argv)
  if ok then return status end
  if type(status) == "table" and status.usage then complain(status.usage) return 2 end
  complain(errors.describe(status))
  if errors.is(status) and status.kind == "grpc" and status.status then return 64 + status.status end
  if errors.is(status) and status.kind == "argument" then return 2 end
  return 1
end

return M
