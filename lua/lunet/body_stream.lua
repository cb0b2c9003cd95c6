-- A response read as its body arrives: http.get(url, { stream = true }) returns as soon as the
-- head is in (status, headers), and r:chunks() gives the pieces of a 2xx body in order, once,
-- waiting for each. While the reader is behind by LIMIT pieces the transfer waits for it (the
-- events consumer does not return, so libcurl's body is paused): memory stays bounded.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local response = require "lunet.response"

local M = {}

-- A stream's state carries its reader's methods, so that the response it belongs to reads it
-- without requiring this module (which requires lunet.response: no cycle, scripts/check-layers).
local Stream = {}
Stream.__index = Stream

local LIMIT = 64

local function wake(st)
  local w = st.waiter
  st.waiter = nil
  if w then w:resolve(true) end
end

local function make_room(st)
  local r = st.room
  st.room = nil
  if r then r:resolve(true) end
end

--- Starts `opts` (a request's options, `stream` left out) on `session`: a task of the response
--- as soon as its head is in. `request_async` is the session's own method.
function M.start(session, opts, request_async)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.stream = nil
  o._stream = true
  local head = task.new()
  head.url = o.url
  local st = setmetatable({ pieces = {}, head = 1, tail = 0, done = false }, Stream)
  local r
  o._on_events = function(_, _, _, _, chunks, id)
    if not chunks or st.closed then return end
    if not r then
      local status, flat = core.transfer_head(id, true)
      r = response.streaming(status, flat, o.url, st)
      task._resolve(head, r)
    end
    for i = 1, #chunks do
      st.tail = st.tail + 1
      st.pieces[st.tail] = chunks[i]
    end
    wake(st)
    while st.tail - st.head + 1 > LIMIT and not st.closed do
      st.room = task.source()
      st.room.task:await()
    end
  end
  local t = request_async(session, o)
  st.transfer = t
  t:continue(function(done)
    st.done = true
    if done.state == "done" then
      if r then rawset(r, "_raw", done.result._raw) else task._resolve(head, done.result) end
    elseif r then
      if not st.closed then st.err = done.error end
    elseif head.state == "pending" then
      if done.state == "failed" then task._reject(head, done.error, done.traceback) else task._cancel(head) end
    end
    wake(st)
  end)
  head:_on_cancel_do(function() t:cancel() end)
  return head
end

--- The next piece, waiting for it; nil at the end; raises the transfer's failure.
function M.next_piece(st)
  while true do
    if st.head <= st.tail then
      local piece = st.pieces[st.head]
      st.pieces[st.head] = nil
      st.head = st.head + 1
      if st.tail - st.head + 1 <= LIMIT // 2 then make_room(st) end
      return piece
    end
    if st.done or st.closed then
      if st.err then error(st.err, 0) end
      return nil
    end
    st.waiter = task.source()
    st.waiter.task:await()
  end
end

--- Stops the transfer (a reader that is done early).
function M.close(st)
  if st.done or st.closed then return end
  st.closed = true
  make_room(st)
  if st.transfer then st.transfer:cancel("the response was closed") end
  wake(st)
end

function Stream:next_piece() return M.next_piece(self) end
function Stream:close() return M.close(self) end

return M
