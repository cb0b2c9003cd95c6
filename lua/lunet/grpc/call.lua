--- One gRPC call on HTTP/2 (gRPC over HTTP/2, as grpc/grpc's PROTOCOL-HTTP2.md says): a POST to
--- /package.Service/Method with `content-type: application/grpc`, `te: trailers`, the
--- deadline as `grpc-timeout`, metadata as headers (`-bin` ones in base64), the request
--- messages framed as the body; the answer's messages are read as they arrive, and its status
--- comes from the trailers (or the head, for a trailers-only answer).
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"
local frames = require "lunet.grpc.frames"
local status = require "lunet.grpc.status"
local pipeline = require "lunet.http.pipeline"
local task = require "lunet.task"

local M = {}

local function b64(s) return (require("lunet.base64").encode(s):gsub("=+$", "")) end

-- The request's headers: the protocol's, the client's metadata, the call's.
local function headers(client, opts)
  -- gzip either way: lunet reads gzip'ed replies, and sends gzip'ed messages when asked
  local h = { ["Content-Type"] = "application/grpc", TE = "trailers", ["User-Agent"] = "grpc-lunet/0.1",
              ["grpc-accept-encoding"] = "gzip" }
  local compression = opts.compression or client.compression
  if compression ~= nil and compression ~= "gzip" and compression ~= "identity" then
    errors.raise("argument", "compression must be \"gzip\" or \"identity\", got " .. tostring(compression))
  end
  if compression == "gzip" then h["grpc-encoding"] = "gzip" end
  for _, md in ipairs({ client.metadata or {}, opts.metadata or {} }) do
    for k, v in pairs(md) do
      local name = tostring(k):lower()
      if name:match("^grpc%-") or name == "content-type" or name == "te" then
        errors.raise("argument", "metadata '" .. name .. "' is the protocol's own")
      end
      h[name] = name:match("%-bin$") and b64(tostring(v)) or tostring(v)
    end
  end
  local deadline = opts.deadline or client.deadline
  if deadline then
    if type(deadline) ~= "number" or deadline <= 0 then errors.raise("argument", "deadline must be a number of seconds above 0") end
    h["grpc-timeout"] = math.max(1, math.ceil(deadline * 1000)) .. "m"
  end
  return h
end

local function deadline_error(what, deadline, when)
  return errors.new("grpc", string.format("%s: DEADLINE_EXCEEDED: %s within %s s", what, when, deadline), { code = "DEADLINE_EXCEEDED", status = 4 })
end

-- Whether a failed h2c call may go once more: only when the connection failed before any answer
-- (kind connect; the connection closed, reset or silent: err.connection_lost) or the answer was
-- not HTTP at all (an h2c-only server refusing the HTTP/1.1 that libcurl 7.88 falls back to on a
-- connection gone). A stream the server reset, or any other broken answer, may come from a
-- server that has run the call: never sent twice.
local function retryable(r)
  if not errors.is(r) then return false end
  if r.kind == "connect" or r.connection_lost then return true end
  return r.kind == "protocol" and tostring(r.message):find("the reply is not HTTP/1.x or HTTP/2", 1, true) ~= nil
end

--- Starts `method` (descriptors' method) with request messages `bodies` (encoded bytes) and
--- waits for the answer's head: a call whose messages M.next reads. Raises kind protocol for a
--- server that does not answer as gRPC, and the transport's kinds (a deadline passed: kind
--- grpc, code DEADLINE_EXCEEDED, as gRPC clients report it).
-- The answer's head, checked: the call `c` ready to read its messages (c.r), or the
-- request's failure raised as gRPC clients report it.
local function take_head(c, ok, r)
  if not ok then
    if errors.is(r) and r.kind == "timeout" and c.deadline then error(deadline_error(c.what, c.deadline, "no answer"), 0) end
    if errors.is(r) and r.kind == "protocol" then
      error(errors.new("protocol", string.format("%s: the server did not answer as gRPC over HTTP/2 (%s)", c.what, r.message), { url = r.url }), 0)
    end
    error(r, 0)
  end
  local ctype = status.field(r, "content-type") or ""
  if r.status ~= 200 or not ctype:match("^application/grpc") then
    pcall(r.close, r)
    error(errors.new("protocol", string.format("%s: the server did not answer as gRPC (HTTP %d, %s)", c.what, r.status, ctype ~= "" and ctype or "no content-type"), { response = r }), 0)
  end
  c.r = r
end

--- What a streaming call's messages may hold waiting to be sent, by default (send_buffer).
M.SEND_BUFFER = 1024 * 1024

local function new_call(client, method, opts)
  local max = opts.max_message or client.max_message
  local send_buffer = opts.send_buffer or client.send_buffer or M.SEND_BUFFER
  if type(send_buffer) ~= "number" or send_buffer < 1 then errors.raise("argument", "send_buffer must be a number of bytes above 0") end
  return { what = method.service .. "/" .. method.name, deadline = opts.deadline or client.deadline, max = max, send_buffer = send_buffer,
           ready = {}, at = 1, done = false, gzip = (opts.compression or client.compression) == "gzip" }
end

local function framed(c, bytes) return c.gzip and frames.frame(core.gzip(bytes), true) or frames.frame(bytes) end

-- The request options of a call: the protocol's head, the deadline, every status let through.
local function request_of(client, method, opts, c)
  return { method = "POST", url = method.path:sub(2), headers = headers(client, opts), content_type = "application/grpc",
           timeout = c.deadline, cancel = opts.cancel, accept_status = false }   -- a non-200 is said by take_head
end

-- Sends `request` and waits for its answer (whole, or its head for a stream). A whole answer
-- of a session with no stage (the client's own session, unless HAR recording is on) goes
-- built as it is (pipeline.send_built); otherwise through session:request.
local function send(session, request)
  if request.stream or pipeline.pipeline_of(session) ~= nil then return session:request(request) end
  local t = pipeline.send_built(session, {
    method = "POST", url = request.url, headers = request.headers, body = request.body,
    timeout = request.timeout, max_body = request.max_body, _grpc_max_message = request._grpc_max_message,
  })
  if request.cancel then request.cancel:_add(t) end
  return t:await()
end

--- Starts `method` (descriptors' method) with request messages `bodies` (encoded bytes), all
--- sent as one body, and waits for the answer's head: a call whose messages M.next reads.
--- Raises kind protocol for a server that does not answer as gRPC, and the transport's kinds
--- (a deadline passed: kind grpc, code DEADLINE_EXCEEDED, as gRPC clients report it).
function M.open(client, method, bodies, opts)
  opts = opts or {}
  local c = new_call(client, method, opts)
  local parts = {}
  for i, b in ipairs(bodies) do parts[i] = framed(c, b) end
  local request = request_of(client, method, opts, c)
  request.body = table.concat(parts)
  -- A streamed answer is read as it arrives; a single one whole (cheaper), never over max_message.
  request.stream = method.server_streaming == true
  if request.stream then c.reader = frames.reader(c.max) end
  request.max_body = not request.stream and c.max + 5 or nil
  -- A unary answer is read whole, but a length prefix over max_message is refused as it comes.
  request._grpc_max_message = not request.stream and c.max or nil
  local ok, r = pcall(send, client.session, request)
  if not ok and client.h2c and retryable(r) then
    -- A shared h2c connection that the server closed meanwhile (a restart, an idle limit): on
    -- libcurl before 8.0 the request then went out as HTTP/1.1 and was refused unread (H2CReuse
    -- in the core). Once more, on a connection of its own, as gRPC retries a call never sent.
    ok, r = pcall(send, client.session, request)
  end
  take_head(c, ok, r)
  if not request.stream then   -- the whole answer is in: its messages now
    c.ready = frames.messages(r.body or "", c.max)
    c.done = true
  end
  return c
end

--- Starts `method` with a body sent message by message while the call runs (client streaming,
--- bidirectional): M.send, M.close_send; the answer is read with M.next, which first waits for
--- its head. Messages sent before the transfer has its number wait in the call.
function M.start(client, method, opts)
  opts = opts or {}
  local c = new_call(client, method, opts)
  c.pending, c.pending_bytes = {}, 0
  c.reader = frames.reader(c.max)
  local request = request_of(client, method, opts, c)
  request.stream, request._send_stream = true, true
  request._on_transfer = function(id)
    c.id = id
    for _, f in ipairs(c.pending) do core.transfer_send(id, f) end
    c.pending = nil
    if c.closed then core.transfer_close_send(id) end
  end
  c.task = client.session:request_async(request)
  return c
end

-- How often a sender that waits for the network looks again (seconds).
local SEND_WAIT = 0.002

--- Sends one message of a started call. A sender that outruns the network (a server that reads
--- slowly, or not at all) waits, as a task sleep, while more than send_buffer bytes are queued:
--- what a call holds stays bounded. The wait ends when the call ends.
function M.send(c, bytes)
  if c.closed then errors.raise("argument", c.what .. ": the call was closed for sending") end
  if c.stopped then errors.raise("cancelled", c.what .. ": the call was stopped") end
  local f = framed(c, bytes)
  if not c.id then   -- the transfer has no number yet: its messages wait in the call
    c.pending[#c.pending + 1] = f
    c.pending_bytes = c.pending_bytes + #f
    while not c.id and c.pending_bytes > c.send_buffer and c.task.state == "pending" do task.sleep(SEND_WAIT) end
    return
  end
  local queued = core.transfer_send(c.id, f)
  while queued and queued > c.send_buffer do
    task.sleep(SEND_WAIT)
    queued = core.transfer_send(c.id, "")
  end
end

--- No more messages from this side (the server sees the end of the request).
function M.close_send(c)
  if c.closed then return end
  c.closed = true
  if c.id then core.transfer_close_send(c.id) end
end

--- A reply message's bytes: a compressed one un-gzip'ed (the reply says grpc-encoding gzip),
--- never to more than max_message bytes (kind too_large: a small bomb stays small).
function M.message(c, m)
  if not m.compressed then return m.bytes end
  local encoding = status.field(c.r, "grpc-encoding")
  if encoding ~= "gzip" then
    errors.raise("protocol", string.format("%s: a compressed message in %s encoding, which lunet did not offer", c.what, tostring(encoding or "no")))
  end
  return core.gunzip(m.bytes, c.max)
end

--- The call's next answer message (bytes), or nil once the answer ended with status OK; a
--- non-OK status is raised (kind grpc) when the messages before it have been read.
function M.next(c)
  if not c.r then take_head(c, pcall(c.task.await, c.task)) end
  -- c.ready: the messages of the last piece (as frames gives them), c.at the next one to hand
  -- out: taking each from the front of a list moved the rest every time.
  while c.at > #c.ready do
    if c.done then
      local problem = status.error_of(c.r, c.what)
      if problem then error(problem, 0) end
      return nil
    end
    c.chunks = c.chunks or c.r:chunks()   -- a streamed answer's pieces (a whole one is split in M.open)
    local ok, piece = pcall(c.chunks)
    if not ok then
      pcall(c.r.close, c.r)
      if errors.is(piece) and piece.kind == "timeout" and c.deadline then error(deadline_error(c.what, c.deadline, "the answer did not end"), 0) end
      error(piece, 0)
    end
    if piece == nil then
      c.reader:finish()
      c.done = true
    else
      c.ready, c.at = c.reader:feed(piece), 1
    end
  end
  local m = c.ready[c.at]
  c.ready[c.at] = false   -- the bytes go with the caller, not with the list
  c.at = c.at + 1
  return M.message(c, m)
end

--- Stops a call whose answer is not read to its end (RST_STREAM to the server).
function M.close(c)
  c.stopped = true
  if c.r then pcall(c.r.close, c.r) elseif c.task then c.task:cancel("the call was closed") end
end

return M
