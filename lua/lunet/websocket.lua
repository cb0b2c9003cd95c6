-- WebSocket clients: http.websocket(url, opts) / session:websocket(path, opts) (RFC 6455 over a
-- connection libcurl makes; see Sources/LunetCore/WebSocket/).
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"

local M = {}

local WebSocket = {}
WebSocket.__index = WebSocket
WebSocket.__name = "lunet.WebSocket"

local OPTIONS = { headers = "table", protocols = "table", max_message = "number", connect_timeout = "number", timeout = "number",
                  insecure = "boolean", ca_file = "string", proxy = "string", on_message = "function",
                  buffer = "number", buffer_bytes = "number", cancel = "table" }

-- Messages, and bytes of them, the reader may fall behind by before the socket is no longer
-- read (TCP then holds the server back). Both bounds hold: 256 messages of up to max_message
-- each would be 4 GiB at the defaults.
local DEFAULT_BUFFER = 256
local DEFAULT_BUFFER_BYTES = 16 * 1024 * 1024

local function check(opts)
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if not want then errors.raise("argument", string.format("unknown option '%s' in the websocket", tostring(k))) end
    if type(v) ~= want then
      errors.raise("argument", string.format("option '%s' in the websocket must be a %s, got %s", k, want, type(v)))
    end
  end
end

-- Wakes whoever waits in receive() or for the close.
local function wake(ws)
  local waiters = ws._waiters
  ws._waiters = {}
  for _, src in ipairs(waiters) do src:resolve(true) end
end

function WebSocket:_event(kind, a, b)
  if kind == "open" then
    self.state, self.protocol = "open", a
    self._opened:resolve(self)
  elseif kind == "text" or kind == "binary" then
    if self.on_message then
      local ok, err = pcall(self.on_message, a, kind)
      if not ok then io.stderr:write("lunet: websocket on_message failed: ", errors.describe(err), "\n") end
    elseif self._at_prompt then
      -- At the prompt, messages show as they arrive (print keeps the line being typed intact).
      print("<< " .. (kind == "text" and a or string.format("[%d bytes of binary]", #a)))
    end
    local q = self._queue
    q[#q + 1] = { a, kind }
    self._queued_bytes = self._queued_bytes + #a
    if (#q > self._buffer or self._queued_bytes > self._buffer_bytes) and not self._paused then
      self._paused = true
      core.websocket_pause(self._id, true)
    end
    wake(self)
  elseif kind == "pong" then
    local src = table.remove(self._pings, 1)
    if src then src:resolve(a) end
  elseif kind == "closing" then
    self.state = "closing"
  elseif kind == "closed" or kind == "failed" then
    self.state = "closed"
    if kind == "closed" then
      self.close_code, self.close_reason = a, b
    else
      self.error, self.close_code = a, b
      if self._opened.task.state == "pending" then self._opened:reject(a) end
    end
    for _, src in ipairs(self._pings) do src:reject(self.error or errors.new("closed", "the websocket closed before the pong", { url = self.url })) end
    self._pings = {}
    self._done:resolve(true)
    wake(self)
  end
end

--- Sends a text message, or bytes with { binary = true }.
function WebSocket:send(data, opts)
  if type(data) ~= "string" then errors.argument(1, "send", "string expected, got " .. type(data)) end
  if self.state ~= "open" then errors.raise("closed", "the websocket is " .. self.state .. ": nothing can be sent", { url = self.url }) end
  local binary = type(opts) == "table" and opts.binary
  if not binary and not utf8.len(data) then
    errors.raise("argument", "a text message must be UTF-8 (send bytes with { binary = true })")
  end
  core.websocket_send(self._id, binary and "binary" or "text", data)
end

--- A task of the next message: await gives its data and kind ("text" or "binary"), or nil
--- once the websocket closed cleanly; a failure raises.
function WebSocket:receive()
  return task.spawn(function()
    while true do
      local m = table.remove(self._queue, 1)
      if m then
        self._queued_bytes = self._queued_bytes - #m[1]
        if self._paused and #self._queue <= self._buffer // 2 and self._queued_bytes <= self._buffer_bytes // 2 then
          self._paused = false
          core.websocket_pause(self._id, false)
        end
        return m[1], m[2]
      end
      if self.state == "closed" then
        if self.error then error(self.error, 0) end
        return nil
      end
      local src = task.source()
      self._waiters[#self._waiters + 1] = src
      src.task:await()
    end
  end)
end

--- for data, kind in ws:messages() do ... end: until the websocket closes (a failure raises).
function WebSocket:messages()
  return function()
    local t = self:receive()
    t:await()
    local r = t.results
    if r then return r[1], r[2] end
    return t.result
  end
end

--- Sends a ping; a task of the pong's payload.
function WebSocket:ping(data)
  data = data or ""
  if self.state ~= "open" then errors.raise("closed", "the websocket is " .. self.state, { url = self.url }) end
  if #data > 125 then errors.argument(1, "ping", "at most 125 bytes") end
  local src = task.source()
  self._pings[#self._pings + 1] = src
  core.websocket_send(self._id, "ping", data)
  return src.task
end

--- The closing handshake: sends a close frame (code 1000 unless given) and waits for the
--- server's; returns the code and reason the server answered with.
function WebSocket:close(code, reason)
  if code ~= nil and math.type(code) ~= "integer" then errors.argument(1, "close", "an integer close code expected") end
  if self.state == "open" or self.state == "connecting" then core.websocket_close(self._id, code or 1000, reason or "") end
  self._done.task:await()
  return self.close_code, self.close_reason
end

function WebSocket:__tostring()
  return string.format("websocket (%s, %s%s)", self.url, self.state, self.protocol and (", " .. self.protocol) or "")
end

--- A task of an open websocket over `session`.
function M.open_async(session, target, opts)
  if type(target) ~= "string" then errors.argument(1, "websocket", "URL string expected, got " .. type(target)) end
  opts = opts or {}
  if type(opts) ~= "table" then errors.argument(2, "websocket", "options table expected, got " .. type(opts)) end
  check(opts)
  local ws = setmetatable({
    url = target, state = "connecting", _queue = {}, _waiters = {}, _pings = {},
    _opened = task.source(), _done = task.source(), _buffer = opts.buffer or DEFAULT_BUFFER,
    _buffer_bytes = opts.buffer_bytes or DEFAULT_BUFFER_BYTES, _queued_bytes = 0,
    on_message = opts.on_message, _at_prompt = debug.getregistry()["lunet.prompt"] == true,
  }, WebSocket)
  -- The session's own header fields (kept in Lua, as each request sends them) under these.
  local headers = {}
  for k, v in pairs(session.headers or {}) do headers[k] = v end
  for k, v in pairs(opts.headers or {}) do headers[k] = v end
  ws._id = core.websocket_open(session._core, target, headers, opts.protocols, {
    connect_timeout = opts.connect_timeout, timeout = opts.timeout, insecure = opts.insecure, ca_file = opts.ca_file, proxy = opts.proxy,
    max_message = opts.max_message,
  }, function(kind, a, b) ws:_event(kind, a, b) end)
  local t = ws._opened.task
  t:_on_cancel_do(function() if ws.state ~= "closed" then core.websocket_close(ws._id, 1000, "") end end)
  if opts.cancel then opts.cancel:_add(t) end
  return t
end

return M
