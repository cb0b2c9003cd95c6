-- How a request is sent: the stages a session's requests go through (retry, auth, waiting for
-- the network, the transport that records, validates and decodes), composed once per session,
-- and the plain path for a session without any: no request table, no closure, the request's
-- task handed to core.send and completed by one function for all (plain_completed). HAR
-- recorders (http.record) are kept here: every request's outcome is added to each.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local runtime = require "lunet.runtime"
local setmetatable = runtime.setmetatable   -- the C one (runtime.lua)
local task = require "lunet.task"
local response = require "lunet.response"
local request = require "lunet.http.request"
local finish, has_header = request.finish, request.has_header

local M = {}

-- URLs requested in this program, for the prompt's completion (bounded).
local seen_urls, seen_count = {}, 0
M.seen_urls = seen_urls
local function remember_url(u)
  if seen_urls[u] or seen_count >= 1000 then return end
  seen_urls[u] = true
  seen_count = seen_count + 1
end

M.remember_url = remember_url

-- HAR recorders (http.record): every request's outcome is added to each (see M.state).
local recorders = {}
-- Its field `epoch` moves when the list changes, so that sessions rebuild their pipelines.
M.state = { recorders = recorders, epoch = 0 }

local function record(r_or_err, started, req)
  for _, entry in ipairs(recorders) do
    entry.recorder:add(r_or_err, started, { method = req.method, url = req.url, headers = req.headers, body = req.body })
  end
end

-- The options of a request made without any (s:get(url)): nothing but the session's own.
M.PLAIN = setmetatable({}, { __newindex = function() error("PLAIN is read-only", 2) end })

-- The plain path: a session without stages, a request without options, nothing recorded. No
-- request table and no closure are made: core.send is given the request's task itself, and its
-- completion goes to plain_completed, one function for every plain request. With `at_once`, a
-- response the cache can give now comes back from the call itself (nil and the response): the
-- task made for it is then dropped. The completion (task, response, status, small body or nil)
-- or (task, nil, error) never runs during core.send; the rest of the response's head is fetched
-- when asked for (below).
local new_task, core_send, core_cancel = task.new, core.send, core.cancel
-- task.lua's slots, as literals: a constant index is an instruction's operand, a local's value
-- one more register read (task.lua says what each slot holds).
local CB <const>, CBS <const>, OCFN <const>, OCARG <const> = 1, 7, 5, 6
assert(task._CB == CB and task._CBS == CBS and task._OCFN == OCFN and task._OCARG == OCARG, "task.lua's slots moved")
local resolve, reject = task._resolve, task._reject
local new_response, Response = response.new, response.Response
-- resolve and reject leave a settled (cancelled) task as it is. A plain response starts with
-- the core's response, its status and its body when that is small (nil else: fetched when
-- read); reason, url, http_version and elapsed are fetched at the first use of one of them
-- (response.lua). headers is named (nil) to size the table for it: read, it goes in without
-- the table growing.
local function plain_completed(t, raw, status, body, first)
  if raw == nil then reject(t, status); return end
  local r = setmetatable({ _raw = raw, status = status, body = body, headers = nil }, Response)
  -- Resolved here rather than by task._resolve (a Lua call less a request): with nothing
  -- queued before it and one callback on the task, that callback is handed back to run next
  -- (runtime.delivering) instead of being queued. The cancel hook (core.cancel of the
  -- transfer) goes with the pending state.
  local cb = t[CB]
  if first and cb and not t[CBS] and t.state == "pending" then
    t.state, t.result, t[CB], t[OCFN], t[OCARG] = "done", r, false, false, nil
    return cb, t
  end
  resolve(t, r)
end
-- Its own delivery (runtime.delivering): the loop calls it straight, not through runtime.deliver.
core.set_plain_completion(runtime.delivering(plain_completed))

local function attempt_plain(session, method, target, at_once)
  -- The cancel hook (core.cancel) in place; its argument, the transfer's number, below.
  local t = new_task(target, core_cancel)
  local id, raw, status, reason, u, version, elapsed = core_send(session._core, t, method, target, session.headers, at_once)
  if not id then return nil, new_response(raw, status, reason, u, version, elapsed) end
  t[OCARG] = id
  return t
end

-- A transfer's events (progress, chunks) reach `handler` in a host coroutine of their own, so
-- that it may wait (task.sleep, a request) without running the loop inside the loop. The
-- transfer hands over nothing more until core.events_done says the handler has returned (and
-- pauses the body once its buffer is full), so chunks arrive once and in order. A handler that
-- raises fails request task `t` with its error and stops the transfer.
local function events_consumer(handler, t)
  return function(dl, dltotal, ul, ultotal, chunks, id)
    task._start(handler, dl, dltotal, ul, ultotal, chunks, id):continue(function(run)
      if run.state == "failed" and t.state == "pending" then
        task._reject(t, run.error, run.traceback)
        core.cancel(id, "an events callback failed")
      end
      core.events_done(id)
    end)
  end
end

-- Stages ------------------------------------------------------------------------------------
-- A request goes through the stages its session (and its own options) need, outermost first:
-- retry, auth (a token the session fetches), wait (for the network), then the transport, which
-- records (HAR) and validates and decodes (finish) when asked. Each stage is made from the next
-- one: stage(next) -> function(session, opts, req) -> task. A session composes its pipeline
-- once, when it is made (and again when recording starts or stops); a request with options of
-- its own composes one for itself. No stage at all is the plain path (attempt_plain).

-- The transport: one attempt, a task of the response or of the error. With nothing to record,
-- validate or decode (only a session's own requests, behind retry, auth or wait stages), a request
-- goes the plain path, unless the auth stage gave it a header of its own.
-- One attempt of a built request, as the transport makes it.
local function attempt_of(validates, recording)
  return function(session, opts, req)
    local t = task.new()
    t.url = req.url
    -- A recorded request keeps the head libcurl sent (with the jar's Cookie) for the HAR.
    if recording then req.record_head = true end
    -- Each attempt (retries send `req` again) gets a consumer for its own task.
    if req.events_handler then req.on_events = events_consumer(req.events_handler, t) end
    local started = recording and not opts._unrecorded and require("lunet.har").now() or nil
    local id = core.send(session._core, function(_, raw, status, reason, u, version, elapsed)
      if raw == nil then
        -- Recorded even when the task was settled already: a request its task's :timeout() or
        -- a cancel ended is in the HAR, with the error that ended it.
        if started then record(status, started, req) end
        if t.state == "pending" then task._reject(t, status) end
        return
      end
      if t.state ~= "pending" then return end
      local r = response.new(raw, status, reason, u, version, elapsed)
      if started then record(r, started, req) end
      if not validates then
        task._resolve(t, r)   -- nothing to validate or decode: no protected call needed
        return
      end
      local ok, e = pcall(finish, session, opts, r)
      if ok then task._resolve(t, r) else task._reject(t, e) end
    end, req)
    t:_on_cancel_do(core.cancel, id)
    if opts._on_transfer and t.state == "pending" then opts._on_transfer(id) end   -- lunet.grpc's sender
    return t
  end
end

local function transport(validates, recording)
  local attempt = attempt_of(validates, recording)
  if validates or recording then return attempt end
  return function(session, opts, req)
    if req._authorized then return attempt(session, opts, req) end
    return attempt_plain(session, req.method, req.url)
  end
end

-- A token the session fetches itself (lunet.auth.token_flow), unless the request has its own.
local function auth_stage(next)
  return function(session, opts, req)
    if req._authorized or has_header(req.headers, "Authorization") then return next(session, opts, req) end
    return session._auth_flow:send_async(req, function(authorized) return next(session, opts, authorized) end)
  end
end

-- Waits for a route first when there is none (wait_for_network).
local function wait_stage(next)
  return function(session, opts, req)
    local net = require "lunet.net"
    if net.online() then return next(session, opts, req) end
    local waiting = net.wait_online()
    local inner
    local t = waiting:next(function() inner = next(session, opts, req); return inner end)
    t.url = req.url
    t:_on_cancel_do(function() waiting:cancel(); if inner then inner:cancel() end end)
    return t
  end
end

-- Failed attempts tried again as retry_policy decides; `r.attempts` (or `err.attempts`) lists
-- every attempt: { status =, error =, delay = }.
local function retry_stage(policy, next)
  if policy == true then policy = {} end
  return function(session, opts, req)
    local outer = task.new()
    outer.url = req.url
    local attempts, current = {}, nil
    local function try(n)
      current = next(session, opts, req)
      current:continue(function(t)
        if outer.state ~= "pending" then return end
        if t.state == "cancelled" then task._cancel(outer); return end
        local err = t.state == "failed" and t.error or nil
        local r = t.state == "done" and t.result or (type(err) == "table" and err.response or nil)
        local entry = { status = r and r.status, error = type(err) == "table" and err.kind or err }
        attempts[#attempts + 1] = entry
        local d = require("lunet.retry_policy").decide(policy, n, type(err) == "table" and err or nil, r, req.method)
        if d.retry then
          entry.delay = d.delay
          current = task.delay(d.delay):next(function() try(n + 1) end)
        elseif err then
          if type(err) == "table" then err.attempts = attempts end
          task._reject(outer, err, t.traceback)
        else
          rawset(r, "attempts", attempts)
          task._resolve(outer, r)
        end
      end)
    end
    outer:_on_cancel_do(function() if current then current:cancel() end end)
    try(1)
    return outer
  end
end

-- An option of the request's own, else the session's.
local function option(opts, session, name, session_field)
  local v = opts[name]
  if v == nil then v = session[session_field] end
  return v
end

-- The composed stages for `session` and a request's `opts` (PLAIN: none of its own), and the
-- names of the stages in order; nil when there is no stage (the plain path).
local function compose(session, opts)
  local validates = opts ~= M.PLAIN or session._response_serializer ~= nil
    or session._accept_status ~= nil or session._accept_types ~= nil
  local recording = #recorders > 0
  local retry = option(opts, session, "retry", "_retry")
  local wait = option(opts, session, "wait_for_network", "_wait_for_network")
  local auth = session._auth_flow ~= nil
  if not (validates or recording or retry or wait or auth) then return nil end
  local names = {}
  local send = transport(validates, recording)
  names[1] = (recording and "record+" or "") .. (validates and "validate+" or "") .. "transport"
  if wait then send = wait_stage(send); table.insert(names, 1, "wait") end
  if auth then send = auth_stage(send); table.insert(names, 1, "auth") end
  if retry then send = retry_stage(retry, send); table.insert(names, 1, "retry") end
  return send, names
end

-- The session's own pipeline (for requests without options), made again only when recording
-- starts or stops. nil: the plain path.
local function pipeline_of(session)
  local epoch = M.state.epoch
  if session._pipeline_epoch ~= epoch then
    session._pipeline, session._stages = compose(session, M.PLAIN)
    session._pipeline_epoch = epoch
  end
  return session._pipeline
end
M.pipeline_of = pipeline_of
function M.stages_of(session) pipeline_of(session); return session._stages or {} end

--- A request already built (the table request.lua's build makes, with its own headers and
--- body) sent as it is, with nothing to validate or decode: a task of its response. Only for a
--- session with no stage (pipeline_of(session) is nil: no retry, auth, waiting or recording).
--- lunet.grpc's unary calls go this way: building, composing and validating options they do
--- not use was about a tenth of a call's CPU one at a time (docs/benchmarks.md, (m)).
local attempt_as_built = attempt_of(false, false)
function M.send_built(session, req)
  req.session_headers = session.headers
  return attempt_as_built(session, M.PLAIN, req)
end

-- Sends a built request with options of its own through the stages they and the session's
-- make (a request with options always has one: its options are validated), with its cancel token.
function M.start(self, opts, req)
  remember_url(req.url)
  local outer = compose(self, opts)(self, opts, req)
  if opts.cancel then opts.cancel:_add(outer) end
  return outer
end

return M
