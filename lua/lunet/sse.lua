-- Server-Sent Events: http.sse(url, opts) / session:sse(path, opts).
--
-- A stream connects with `Accept: text/event-stream`, hands each event to `on_event` and to
-- the `events()` iterator, and reconnects after a dropped connection (sending `Last-Event-ID`,
-- waiting the server's `retry`, doubling the wait after each failed try up to `max_delay`).
-- It stops for good on 204, on a status other than 200, on a Content-Type that is not
-- text/event-stream, on `close()`, or when its cancellation token is cancelled.
local task = require "lunet.task"
local errors = require "lunet.errors"
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local parser = require "lunet.sse_parser"

local M = {}

local Stream = {}
Stream.__index = Stream
Stream.__name = "lunet.EventStream"

local OPTIONS = { headers = "table", on_event = "function", retry = "number", max_delay = "number",
                  max_retries = "number", timeout = "number", connect_timeout = "number", cancel = "table",
                  insecure = "boolean", ca_file = "string", proxy = "string", query = "any", buffer = "number",
                  max_event = "number" }

-- Failures after which a stream connects again (a dropped or refused connection, a stall).
local RECONNECT_ON = { connect = true, dns = true, timeout = true, protocol = true }

-- Events waiting for the iterator: past this many, the stream waits (and its transfer pauses).
local DEFAULT_BUFFER = 256

-- The shortest wait before connecting again, whatever the server's `retry` says (0 included):
-- a server that answers at once and closes must not get thousands of connections a second.
-- A connection that delivers no event doubles the wait (up to max_delay).
local MIN_DELAY = 0.1

local function check(opts)
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if not want then errors.raise("argument", string.format("unknown option '%s' in the event stream", tostring(k))) end
    if want ~= "any" and type(v) ~= want then
      errors.raise("argument", string.format("option '%s' in the event stream must be a %s, got %s", k, want, type(v)))
    end
  end
end

local function is_event_stream(content_type)
  return (content_type or ""):lower():match("^%s*([^;%s]+)") == "text/event-stream"
end

-- Hands the `n` events of `evs` (the list the parser made for one piece of the body) to
-- on_event and to the iterator's queue; waits while the queue holds `buffer` events.
function Stream:_emit(evs, n)
  local on_event = self.on_event
  if on_event then
    for i = 1, n do
      self.count = self.count + 1
      on_event(evs[i])
      if self.closed then return end
    end
  else
    self.count = self.count + n
  end
  if not self._iterating then return end
  -- A queue with a head index: taking the first event must not shift the rest (table.remove(q, 1)
  -- did, once per event: 20x slower than a Python reader at 100,000 events). An empty queue with
  -- room for all of them is replaced by the parser's list as it is.
  local buffer = self._buffer
  if self._head > self._tail and n <= buffer then
    self._queue, self._head, self._tail = evs, 1, n
  else
    for i = 1, n do
      while self._tail - self._head + 1 >= buffer do
        self:_wake_iterator()
        self._room = task.source()
        self._room.task:await()
        if self.closed then return end
      end
      local tail = self._tail + 1
      self._queue[tail] = evs[i]
      self._tail = tail
    end
  end
  self:_wake_iterator()
end

function Stream:_wake_iterator()
  local w = self._waiter
  if w then self._waiter = nil; w:resolve(true) end
end

-- One connection: resolves when it ends; returns "again" (reconnect) or "stop".
function Stream:_connect()
  local p = self._parser
  local first = true
  local headers = {}
  for k, v in pairs(self._opts.headers or {}) do headers[k] = v end
  headers["Accept"] = "text/event-stream"
  headers["Cache-Control"] = "no-cache"
  if p.last_event_id ~= "" then headers["Last-Event-ID"] = p.last_event_id end
  local wrong_type
  local req = {
    method = "GET", url = self.url, headers = headers, query = self._opts.query,
    connect_timeout = self._opts.connect_timeout, timeout = self._opts.timeout,
    insecure = self._opts.insecure, ca_file = self._opts.ca_file, proxy = self._opts.proxy,
    _stream = true, _long_lived = true,
    _on_events = function(_, _, _, _, chunks, id)
      if not chunks or self.closed then return end
      if first then
        first = false
        local status, content_type = core.transfer_head(id)
        if status ~= 200 or not is_event_stream(content_type) then
          wrong_type = string.format("the server sent %s, not text/event-stream", content_type or "no Content-Type")
          self._current:cancel(wrong_type)
          return
        end
        self.connected = self.connected + 1
      end
      for i = 1, #chunks do
        local evs = p:feed(chunks[i])
        if #evs > 0 then
          self:_emit(evs, #evs)
          if self.closed then return end
        end
        -- The server's retry, within max_delay (a server may not park the client for a day).
        if p.retry then self.retry, self.delay, p.retry = math.min(p.retry / 1000, self.max_delay), math.min(p.retry / 1000, self.max_delay), nil end
      end
    end,
  }
  self._current = self.session:request_async(req)
  local ok, r = pcall(self._current.await, self._current)
  p:finish()
  if self.closed then return "stop" end
  if wrong_type then
    self.error = errors.new("protocol", wrong_type, { url = self.url })
    return "stop"
  end
  if not ok then
    if type(r) == "table" and r.kind == "cancelled" then return "stop" end
    -- Only the network's failures are worth another connection; anything else (an on_event
    -- that raised, a TLS or argument error) would fail the same way again: stop with it.
    if type(r) == "table" and RECONNECT_ON[r.kind] then
      self.last_error = r
      return "again"
    end
    self.error = r
    return "stop"
  end
  if r.status == 204 then return "stop" end
  if r.status ~= 200 then
    self.error = errors.new("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r })
    return "stop"
  end
  return "again"   -- the server closed the stream: reconnect, as EventSource does
end

function Stream:_run()
  local tries = 0
  while not self.closed do
    local before = self.count
    if self:_connect() == "stop" then break end
    -- A connection that delivered events resets the backoff; one that delivered none (an
    -- empty answer, a drop) keeps doubling it.
    if self.count > before then tries, self.delay = 0, self.retry end
    tries = tries + 1
    if self.max_retries and tries > self.max_retries then
      self.error = self.error or errors.new("connect", "the event stream gave up after " .. self.max_retries .. " reconnects", { url = self.url })
      break
    end
    self.reconnects = self.reconnects + 1
    local wait = math.min(math.max(self.delay, MIN_DELAY), math.max(self.max_delay, MIN_DELAY))
    self._sleep = task.delay(wait)
    pcall(self._sleep.await, self._sleep)
    self.delay = math.min(wait * 2, self.max_delay)
  end
  self.closed = true
  if self._waiter then local w = self._waiter; self._waiter = nil; w:resolve(false) end
  if self.error then error(self.error, 0) end
  return self.count
end

--- Stops the stream: no reconnect, the connection is closed, the iterator ends.
function Stream:close()
  if self.closed then return end
  self.closed = true
  if self._current then self._current:cancel("the event stream was closed") end
  if self._sleep then self._sleep:cancel() end
  if self._room then local r = self._room; self._room = nil; r:resolve(true) end
end

--- An iterator over events as they arrive: `for ev in stream:events() do ... end`. It ends when
--- the stream stops (close(), 204, a failure); a failure is raised after the last event.
function Stream:events()
  self._iterating = true
  return function()
    while true do
      local head = self._head
      if head <= self._tail then
        local q = self._queue
        local ev = q[head]
        q[head] = nil
        if head == self._tail then self._head, self._tail = 1, 0 else self._head = head + 1 end
        if self._room and self._tail - self._head + 1 <= self._buffer then local r = self._room; self._room = nil; r:resolve(true) end
        return ev
      end
      if self.closed then
        if self.task.state == "failed" then self.task:await() end
        return nil
      end
      self._waiter = task.source()
      self._waiter.task:await()
    end
  end
end

--- Waits until the stream stops; the number of events it delivered, or its error.
function Stream:await() return self.task:await() end

function Stream:__tostring()
  return string.format("event stream (%s, %d events, %s)", self.url, self.count, self.closed and "closed" or "open")
end

--- A stream over `session` (see the top of this file).
function M.open(session, url, opts)
  if type(url) ~= "string" then errors.argument(1, "sse", "URL string expected, got " .. type(url)) end
  opts = opts or {}
  if type(opts) ~= "table" then errors.argument(2, "sse", "options table expected, got " .. type(opts)) end
  check(opts)
  local retry = (opts.retry or 3000) / 1000
  local s = setmetatable({
    session = session, url = url, _opts = opts, _parser = parser.new(opts.max_event), _queue = {}, _head = 1, _tail = 0,
    _buffer = opts.buffer or DEFAULT_BUFFER, on_event = opts.on_event,
    retry = retry, delay = retry, max_delay = (opts.max_delay or 30000) / 1000, max_retries = opts.max_retries,
    count = 0, connected = 0, reconnects = 0, closed = false,
  }, Stream)
  s.task = task.spawn(Stream._run, s)
  -- Cancelling the stream's task (or its token) closes it.
  s.task:_on_cancel_do(function() s:close() end)
  if opts.cancel then opts.cancel:_add(s.task) end
  return s
end

return M
