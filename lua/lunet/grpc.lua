--- `grpc.client(target, opts)`: gRPC from scripts (docs/grpc.md). Calls go as HTTP/2 streams
--- on one connection per target, over TLS or h2c (HTTP/2 with prior knowledge); messages are
--- encoded and decoded with the service's schema, which comes from server reflection, a
--- descriptor set, or .proto files through protoc.
---   local g = grpc.client("127.0.0.1:50051", { reflection = true })
---   g:call("greet.Greeter/SayHello", { name = "lunet" }, { metadata = { ["x-id"] = "1" }, deadline = 2 })
---   for msg in g:stream("greet.Greeter/Count", { n = 5 }) do print(msg.i) end
local errors = require "lunet.errors"
local descriptors = require "lunet.grpc.descriptors"
local call = require "lunet.grpc.call"
local frames = require "lunet.grpc.frames"

local M = {}
local Client = {}
Client.__index = Client

M.status = require("lunet.grpc.status").NAMES

local OPTIONS = { reflection = "boolean", descriptor = "string", proto = "any", import_paths = "table", tls = "boolean",
                  ca_file = "string", insecure = "boolean", cert = "string", cert_key = "string", metadata = "table",
                  deadline = "number", max_message = "number", connect_timeout = "number", compression = "string",
                  send_buffer = "number" }

-- "host:port" (h2c), "http://host:port" (h2c), "https://host:port" or tls = true (TLS, h2 by ALPN).
local function base_url(target, opts)
  if type(target) ~= "string" or target == "" then errors.raise("argument", "grpc.client takes the server as \"host:port\"") end
  local scheme, rest = target:match("^(https?)://(.+)$")
  local hostport = (rest or target):gsub("/+$", "")
  if not hostport:match("^[%w%.%-]+:%d+$") and not hostport:match("^%[[%x:]+%]:%d+$") then
    errors.raise("argument", "grpc.client: '" .. target .. "' is not host:port")
  end
  local tls = scheme == "https" or (scheme == nil and (opts.tls or opts.ca_file ~= nil))
  return (tls and "https://" or "http://") .. hostport .. "/", tls
end

-- .proto files through protoc, into a descriptor set's bytes.
local function from_proto(protos, import_paths)
  if type(protos) == "string" then protos = { protos } end
  local set = os.tmpname()
  local q = function(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local args = { "protoc", "--include_imports", "--descriptor_set_out=" .. q(set) }
  for _, dir in ipairs(import_paths or {}) do args[#args + 1] = "-I" .. q(dir) end
  for _, p in ipairs(protos) do
    if not import_paths then args[#args + 1] = "-I" .. q(p:match("^(.*)/") or ".") end
    args[#args + 1] = q(p)
  end
  local pipe = io.popen(table.concat(args, " ") .. " 2>&1", "r")
  local out = pipe:read("a")
  local ok = pipe:close()
  local f = io.open(set, "rb")
  local bytes = f and f:read("a")
  if f then f:close() end
  os.remove(set)
  if not ok or not bytes or bytes == "" then
    errors.raise("argument", "protoc could not read " .. table.concat(protos, ", ") .. ": " .. (out ~= "" and out or "is protoc installed? (Debian: protobuf-compiler)"))
  end
  return bytes
end

--- A client of the server at `target`. opts: reflection, descriptor (a descriptor set's path),
--- proto (a .proto path or a list; import_paths), tls, ca_file, insecure, cert, cert_key,
--- metadata (sent with every call), deadline (seconds, every call), max_message (bytes a
--- received message may have: 4 MiB), send_buffer (bytes a streaming call's messages may wait
--- to be sent before :send waits: 1 MiB), connect_timeout.
function M.client(target, opts)
  opts = opts or {}
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if not want then errors.raise("argument", "grpc.client: unknown option '" .. tostring(k) .. "'") end
    if want ~= "any" and type(v) ~= want then errors.raise("argument", "grpc.client: option '" .. k .. "' must be a " .. want) end
  end
  local url, tls = base_url(target, opts)
  local session = require("lunet.http").session({
    base_url = url, http_version = tls and "2" or "2-prior-knowledge", ca_file = opts.ca_file, insecure = opts.insecure,
    cert = opts.cert, cert_key = opts.cert_key, connect_timeout = opts.connect_timeout,
    max_body = false,   -- messages are bounded one by one (max_message), a stream may be long
    follow = false,     -- gRPC has no redirects: a 30x is an answer that is not gRPC, never a hop with the metadata
  })
  local c = setmetatable({ target = target, session = session, descriptors = descriptors.new(), reflection = opts.reflection, h2c = not tls, compression = opts.compression,
    metadata = opts.metadata, deadline = opts.deadline, max_message = opts.max_message or frames.DEFAULT_MAX, send_buffer = opts.send_buffer }, Client)
  if opts.descriptor then
    local f, err = io.open(opts.descriptor, "rb")
    if not f then errors.raise("argument", "grpc.client: descriptor " .. opts.descriptor .. ": " .. tostring(err)) end
    c.descriptors:add_set(f:read("a"))
    f:close()
  end
  if opts.proto then c.descriptors:add_set(from_proto(opts.proto, opts.import_paths)) end
  return c
end

--- The method `name` ("pkg.Service/Method"): from the descriptors, else (reflection) asked of
--- the server. Unknown: kind argument, listing the service's methods.
function Client:method(name)
  local m, why = self.descriptors:method(name)
  if not m and self.reflection then
    local service = name:match("^/?(.+)/[^/]+$") or name:match("^(.+)%.[^.]+$") or name
    local ok, err = pcall(require("lunet.grpc.reflection").load_symbol, self, self.descriptors, service)
    m, why = self.descriptors:method(name)
    -- The server could not be asked (TLS, connection, not gRPC): that is the error, not "no service".
    if not m and not ok and errors.is(err) and err.kind ~= "argument" and not (err.cause and err.cause.code == "UNIMPLEMENTED") then
      error(err, 0)
    end
    if not m and not ok then why = why .. " (" .. errors.describe(err) .. ")" end
  end
  if not m then errors.raise("argument", "grpc: " .. why) end
  return m
end

-- A request message's bytes, checked against the schema first (kind argument naming the field).
function Client:encode(m, message)
  if type(message) ~= "table" then errors.raise("argument", m.service .. "/" .. m.name .. " takes a table, the " .. m.input .. " message") end
  return self.descriptors:messages():encode(message, m.input)
end

function Client:decode(m, bytes) return self.descriptors:messages():decode(bytes, m.output) end

--- A unary call (a client-streaming method takes a list of messages): the reply message.
--- opts: metadata, deadline, cancel (a cancellation token), max_message.
function Client:call(name, message, opts)
  local m = self:method(name)
  if m.server_streaming then errors.raise("argument", name .. " streams its answer: use g:stream") end
  local bodies = {}
  if m.client_streaming then
    for i, msg in ipairs(message) do bodies[i] = self:encode(m, msg) end
  else bodies[1] = self:encode(m, message) end
  local c = call.open(self, m, bodies, opts)
  local first = call.next(c)
  local extra = call.next(c)
  if first == nil or extra ~= nil then
    call.close(c)
    errors.raise("protocol", string.format("%s: a unary answer holds %s messages", name, first == nil and "no" or "several"))
  end
  return self:decode(m, first), c.r
end

--- The same as a task; cancelling the task (t:cancel()) stops the call's transfer too.
function Client:call_async(name, message, opts)
  local task = require "lunet.task"
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  local own = task.cancel_token()
  local theirs = o.cancel
  o.cancel = own
  local t = task.spawn(function() return self:call(name, message, o) end)
  t:_on_cancel_do(function() own:cancel() end)
  if theirs then theirs:_add(t) end
  return t
end

--- A server-streaming call: an iterator over the reply messages as they arrive (a non-OK
--- status is raised after the messages before it). `messages` is a list for a bidirectional
--- method (sent first, then the replies are read).
function Client:stream(name, message, opts)
  local m = self:method(name)
  local bodies = {}
  if m.client_streaming then
    for i, msg in ipairs(message or {}) do bodies[i] = self:encode(m, msg) end
  else bodies[1] = self:encode(m, message or {}) end
  local c = call.open(self, m, bodies, opts)
  return function()
    local bytes = call.next(c)
    if bytes == nil then return nil end
    return self:decode(m, bytes)
  end, c
end

--- A client-streaming call: up:send(msg) as often as needed (each goes out at once), then
--- up:close_and_receive() for the reply.
function Client:client_stream(name, opts)
  local m = self:method(name)
  local c = call.start(self, m, opts)
  local client = self
  return {
    send = function(_, msg) call.send(c, client:encode(m, msg)) end,
    close_and_receive = function()
      call.close_send(c)
      local reply = call.next(c)
      if reply == nil or call.next(c) ~= nil then errors.raise("protocol", name .. ": a client-streaming answer holds one message") end
      return client:decode(m, reply)
    end,
    cancel = function() call.close(c) end,
  }
end

--- A bidirectional call: chat:send(msg) goes out at once, chat:receive() waits for the next
--- reply (nil at the end), chat:close_send() ends this side, chat:close() stops the call.
function Client:bidi(name, opts)
  local m = self:method(name)
  local c = call.start(self, m, opts)
  local client = self
  local chat = {}
  function chat.send(_, msg) call.send(c, client:encode(m, msg)) end
  function chat.close_send() call.close_send(c) end
  function chat.receive()
    local bytes = call.next(c)
    return bytes and client:decode(m, bytes) or nil
  end
  function chat.close() call.close(c) end
  return chat
end

--- The services the server offers (reflection), else those of the descriptors.
function Client:services()
  if self.reflection then return require("lunet.grpc.reflection").services(self) end
  local names = {}
  for n in pairs(self.descriptors.services) do names[#names + 1] = n end
  table.sort(names)
  return names
end

--- A service's methods, or a method's or message's shape, as text (grpcurl's describe).
function Client:describe(symbol)
  return require("lunet.grpc.describe").symbol(self, symbol)
end

return M
