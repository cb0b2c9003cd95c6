-- http: one-shot requests and sessions (the session manager of API.md).
local core = require "lunet.core"
-- A script that names http is about to send a request, most likely: libcurl starts opening on
-- another thread now, while the script builds it (only in the lunet program; see curl_loader.c).
core.curl_preload()
local errors = require "lunet.errors"
local runtime = require "lunet.runtime"
local setmetatable, getmetatable = runtime.setmetatable, runtime.getmetatable   -- the C ones (runtime.lua)
local task = require "lunet.task"
local url = require "lunet.url"
local json = require "lunet.json"
local response = require "lunet.response"
local serializers = require "lunet.serializers"
-- lunet.cache and lunet.auth load when a session first asks for them: a plain GET needs neither.
local function cache() return require "lunet.cache" end

local http = {}
http.serializers = serializers

local Session = {}
Session.__index = Session
Session.__name = "lunet.Session"

local VERBS = { "get", "post", "put", "patch", "delete", "head", "options" }

-- Options ------------------------------------------------------------------------------------

-- What a session takes, and what each request may override.
local SESSION_OPTIONS = {
  base_url = "string", headers = "table", timeout = "number", connect_timeout = "number",
  request = "any", response = "any", accept_status = "any", accept_types = "table",
  cookies = "any", cache = "any", auth = "table", proxy = "string", insecure = "boolean", ca_file = "string",
  http_version = "string", max_body = "any", follow = "boolean", max_redirects = "number",
  decompress = "boolean", max_concurrent = "number", retry = "any", wait_for_network = "boolean",
  name = "string", read_only = "boolean", host = "string",   -- a named session (lunet.session_store)
  cert = "string", cert_key = "string", cert_password = "string", netrc = "any",
}
local REQUEST_OPTIONS = {
  method = "string", url = "string", query = "any", headers = "table", json = "any", form = "table",
  multipart = "table",
  body = "string", content_type = "string", params = "any", timeout = "number",
  connect_timeout = "number", follow = "boolean", max_redirects = "number", max_body = "any",
  insecure = "boolean", ca_file = "string", proxy = "string", http_version = "string",
  response = "any", accept_status = "any", accept_types = "any", cancel = "table",
  decompress = "boolean", request = "any", retry = "any", wait_for_network = "boolean", cache = "string",
  offline_miss = "string", on_chunk = "function", stream = "boolean",
  cert = "string", cert_key = "string", cert_password = "string", netrc = "any",
  -- used by lunet.download: a file target, progress and chunk events, an upload from a file
  _download = "table", _progress = "boolean", _stream = "boolean", _on_events = "function", _upload_file = "string",
  -- used by lunet.sse: a connection that lives long (the stream pool, no connection caps)
  _long_lived = "boolean",
  -- used by the command line (-v): keep the head libcurl sent
  _record_head = "boolean",
  -- used by lunet.auth: a token request is not recorded (its answer is the token)
  _unrecorded = "boolean",
}
local HTTP_VERSIONS = { ["1.0"] = true, ["1.1"] = true, ["2"] = true, ["2-prior-knowledge"] = true, ["3"] = true }

local function closest(name, known) return require("lunet.suggest").closest(name, known) end

local function check_options(opts, known, where)
  for k, v in pairs(opts) do
    local want = known[k]
    if not want then
      local hint = type(k) == "string" and closest(k, known)
      errors.raise("argument", string.format("unknown option '%s' in %s%s", tostring(k), where,
        hint and (" (did you mean '" .. hint .. "'?)") or ""))
    end
    if want ~= "any" and type(v) ~= want then
      errors.raise("argument", string.format("option '%s' in %s must be a %s, got %s", k, where, want, type(v)))
    end
  end
  if opts.http_version and not HTTP_VERSIONS[opts.http_version] then
    errors.raise("argument", "option 'http_version' must be \"1.0\", \"1.1\", \"2\", \"2-prior-knowledge\" or \"3\", got \"" .. opts.http_version .. "\"")
  end
end

local UNITS = { b = 1, k = 1024, kb = 1024, kib = 1024, m = 1024^2, mb = 1024^2, mib = 1024^2, g = 1024^3, gb = 1024^3, gib = 1024^3 }

--- "100MB" -> bytes (1 KB = 1024 bytes); numbers pass; false means no limit.
function http.parse_size(v, name)
  if v == false or v == nil then return v end
  if type(v) == "number" and v >= 0 then return math.floor(v) end
  if type(v) == "string" then
    local n, unit = string.match(string.lower(v), "^%s*([%d%.]+)%s*(%a*)%s*$")
    local mult = UNITS[unit == "" and "b" or unit]
    if n and tonumber(n) and mult then return math.floor(tonumber(n) * mult) end
  end
  errors.raise("argument", string.format("option '%s' must be a size like 100MB or a number of bytes, got %s", name, tostring(v)))
end

-- Validation ---------------------------------------------------------------------------------

--- accept_status: "2xx", a list of codes {200, 204}, ranges {{200, 299}} (a flat list is
--- always codes: guessing ranges from the numbers would accept codes nobody listed), or false.
local function status_accepted(rule, status)
  if rule == nil or rule == false then return true end
  if type(rule) == "string" then
    local class = string.match(rule, "^(%d)xx$")
    if class then return math.floor(status / 100) == tonumber(class) end
    return tostring(status) == rule
  end
  if type(rule) == "number" then return status == rule end
  for _, item in ipairs(rule) do
    if type(item) == "table" then
      if status >= item[1] and status <= item[2] then return true end
    elseif status_accepted(item, status) then
      return true
    end
  end
  return false
end

local function type_accepted(accept, content_type)
  if not accept then return true end
  local mime = string.lower(string.match(content_type or "", "^%s*([^;%s]+)") or "")
  for _, want in ipairs(accept) do
    want = string.lower(want)
    if want == mime or want == "*/*" then return true end
    local major = string.match(want, "^([^/]+)/%*$")
    if major and string.match(mime, "^([^/]+)/") == major then return true end
  end
  return false
end

-- Building a request ------------------------------------------------------------------------

local function has_header(hs, name)
  if not hs then return false end
  name = string.lower(name)
  for k in pairs(hs) do if type(k) == "string" and string.lower(k) == name then return true end end
  return false
end

local QUERY_METHODS = { GET = true, HEAD = true, DELETE = true }

-- An events handler that hands each chunk of a 2xx body to on_chunk, in order (see
-- events_consumer for how it may wait).
local function chunks_to(on_chunk)
  return function(_, _, _, _, chunks)
    if chunks then for i = 1, #chunks do on_chunk(chunks[i]) end end
  end
end

-- offline_miss = "error" (the default: only_if_cached with nothing stored fails with kind
-- offline) or "504" (a synthesized 504 response instead, RFC 9111 §5.2.1.7).
local function offline_miss_504(v)
  if v == nil or v == "error" then return nil end
  if v == "504" then return true end
  errors.raise("argument", "option 'offline_miss' must be \"error\" or \"504\", got \"" .. tostring(v) .. "\"")
end

-- The request table core.send reads, from a session and a user's options.
local function build(session, opts)
  local method = string.upper(opts.method or "GET")
  local target = opts.url
  if opts.query ~= nil then target = url.with_query(target, opts.query) end

  local headers = {}
  if opts.headers then for k, v in pairs(opts.headers) do headers[k] = v end end
  local body, content_type = opts.body, opts.content_type

  local bodies = (opts.json ~= nil and 1 or 0) + (opts.form ~= nil and 1 or 0) + (opts.body ~= nil and 1 or 0)
    + (opts.params ~= nil and 1 or 0) + (opts.multipart ~= nil and 1 or 0)
  if bodies > 1 then errors.raise("argument", "give one of json, form, body, multipart or params, not several") end
  local multipart

  if opts.json ~= nil then
    body = json.encode(opts.json)
    content_type = content_type or "application/json"
  elseif opts.form ~= nil then
    body = url.query(opts.form)
    content_type = content_type or "application/x-www-form-urlencoded"
  elseif opts.multipart ~= nil then
    multipart = serializers.multipart_parts(opts.multipart)
  elseif opts.params ~= nil then
    if QUERY_METHODS[method] then
      target = url.with_query(target, opts.params)
    else
      local ser = (opts.request ~= nil and serializers.find("request", opts.request, "the request"))
        or session._request_serializer or serializers.request.form
      if ser.multipart then
        multipart = serializers.multipart_parts(opts.params)
      else
        body = ser.encode(opts.params)
        content_type = content_type or ser.content_type
      end
    end
  end
  if content_type and not has_header(headers, "Content-Type") then headers["Content-Type"] = content_type end

  return {
    method = method, url = target, headers = headers, session_headers = session.headers, body = body,
    multipart = multipart,
    timeout = opts.timeout, connect_timeout = opts.connect_timeout, follow = opts.follow,
    max_redirects = opts.max_redirects, max_body = http.parse_size(opts.max_body, "max_body"),
    insecure = opts.insecure, ca_file = opts.ca_file, proxy = opts.proxy,
    http_version = opts.http_version, decompress = opts.decompress,
    cert = opts.cert, cert_key = opts.cert_key, cert_password = opts.cert_password,
    netrc_file = opts.netrc ~= nil and http._netrc_file(opts.netrc) or nil,
    download = opts._download, progress = opts._progress, stream = opts._stream or opts.on_chunk ~= nil,
    events_handler = opts._on_events or (opts.on_chunk and chunks_to(opts.on_chunk)),
    upload_file = opts._upload_file, cache_policy = opts.cache, record_head = opts._record_head,
    offline_miss_504 = offline_miss_504(opts.offline_miss), long_lived = opts._long_lived,
  }
end

-- What a finished response goes through: validation, then the response serializer.
local function finish(session, opts, r)
  local rule = opts.accept_status
  if rule == nil then rule = session._accept_status end
  if not status_accepted(rule, r.status) then
    errors.raise("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r, status = r.status })
  end
  local accept = opts.accept_types
  if accept == nil then accept = session._accept_types end
  if accept and not type_accepted(accept, r.headers["content-type"]) then
    errors.raise("content_type", string.format("the server sent %s, not %s", r.headers["content-type"] or "no Content-Type", table.concat(accept, " or ")), { url = r.url, response = r })
  end
  local ser = opts.response ~= nil and serializers.find("response", opts.response, "the request") or session._response_serializer
  -- A 2xx body given to on_chunk is not here to decode.
  if ser and not (opts.on_chunk and r.status >= 200 and r.status < 300) then
    local ok, value = pcall(ser.decode, r.body, r)
    if not ok then
      local e = value
      if not errors.is(e) then e = errors.new("decode", errors.describe(e)) end
      e.kind = e.kind == "argument" and "decode" or e.kind
      e.url = e.url or r.url
      e.response = e.response or r
      error(e, 0)
    end
    rawset(r, "data", value)
  end
  return r
end

-- URLs requested in this program, for the prompt's completion (bounded).
local seen_urls, seen_count = {}, 0
http._seen_urls = seen_urls
local function remember_url(u)
  if seen_urls[u] or seen_count >= 1000 then return end
  seen_urls[u] = true
  seen_count = seen_count + 1
end

-- Requests --------------------------------------------------------------------------------

-- HAR recorders (http.record): every request's outcome is added to each. `recording_epoch`
-- moves when the list changes, so that sessions rebuild their pipelines (see pipeline_of).
local recorders = {}
local recording_epoch = 0

local function record(r_or_err, started, req)
  for _, entry in ipairs(recorders) do
    entry.recorder:add(r_or_err, started, { method = req.method, url = req.url, headers = req.headers, body = req.body })
  end
end

-- The options of a request made without any (s:get(url)): nothing but the session's own.
local PLAIN = setmetatable({}, { __newindex = function() error("PLAIN is read-only", 2) end })

-- The plain path: a session without stages, a request without options, nothing recorded. No
-- request table and no closure are made: core.send is given the request's task itself, and its
-- completion goes to plain_completed, one function for every plain request. With `at_once`, a
-- response the cache can give now comes back from the call itself (nil and the response): the
-- task made for it is then dropped. The completion (task, response, status, small body or nil)
-- or (task, nil, error) never runs during core.send; the rest of the response's head is fetched
-- when asked for (below).
local Task, core_send, core_cancel = task.Task, core.send, core.cancel
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
  -- task.new's table (task.lua says how a task is laid out), with the URL and the cancel hook
  -- (OCFN: core.cancel, of the transfer's number in OCARG) in place.
  local t = setmetatable({ false, false, false, false, core_cancel, false, false, state = "pending", url = target, result = nil }, Task)
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
local function transport(validates, recording)
  local function attempt(session, opts, req)
    local t = task.new()
    t.url = req.url
    -- A recorded request keeps the head libcurl sent (with the jar's Cookie) for the HAR.
    if recording then req.record_head = true end
    -- Each attempt (retries send `req` again) gets a consumer for its own task.
    if req.events_handler then req.on_events = events_consumer(req.events_handler, t) end
    local started = recording and not opts._unrecorded and require("lunet.har").now() or nil
    local id = core.send(session._core, function(_, raw, status, reason, u, version, elapsed)
      if t.state ~= "pending" then return end
      if raw == nil then
        if started then record(status, started, req) end
        task._reject(t, status)
        return
      end
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
    return t
  end
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
  local validates = opts ~= PLAIN or session._response_serializer ~= nil
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
  if session._pipeline_epoch ~= recording_epoch then
    session._pipeline, session._stages = compose(session, PLAIN)
    session._pipeline_epoch = recording_epoch
  end
  return session._pipeline
end
http._stages_of = function(session) pipeline_of(session); return session._stages or {} end

-- Sends a built request with options of its own through the stages they and the session's
-- make (a request with options always has one: its options are validated), with its cancel token.
local function start(self, opts, req)
  remember_url(req.url)
  local outer = compose(self, opts)(self, opts, req)
  if opts.cancel then opts.cancel:_add(outer) end
  return outer
end

--- Starts a request; a task of its response. With a retry policy (the session's or the
--- request's), failed attempts are tried again as retry_policy decides.
function Session:request_async(opts)
  if type(opts) ~= "table" then errors.argument(1, "request", "options table expected, got " .. type(opts)) end
  check_options(opts, REQUEST_OPTIONS, "the request")
  if type(opts.url) ~= "string" then errors.argument(1, "request", "a url string is needed, got " .. type(opts.url)) end
  -- { stream = true }: the response as soon as its head is in, its body through r:chunks().
  if opts.stream then return require("lunet.body_stream").start(self, opts, Session.request_async) end
  return start(self, opts, build(self, opts))
end

function Session:request(opts)
  return self:request_async(opts):await()
end

for _, verb in ipairs(VERBS) do
  local METHOD = string.upper(verb)
  local fname = verb
  Session[verb .. "_async"] = function(self, target, opts)
    if getmetatable(self) ~= Session then errors.argument(1, fname, "session expected (call it as session:" .. fname .. "(...))") end
    -- A URL requested before is a string (seen_urls holds only those): no type() call for it.
    local seen = seen_urls[target]
    if not seen and type(target) ~= "string" then errors.argument(1, fname, "URL string expected, got " .. type(target)) end
    if opts == nil then
      -- A request without options: the session's stages, or the plain path when it has none
      -- (pipeline_of and remember_url with their common case inline: calls less a request).
      local send
      if self._pipeline_epoch == recording_epoch then send = self._pipeline else send = pipeline_of(self) end
      if not seen then remember_url(target) end
      if not send then
        -- attempt_plain(self, METHOD, target), inline: a Lua call less a request.
        local t = setmetatable({ false, false, false, false, core_cancel, false, false, state = "pending", url = target, result = nil }, Task)
        t[OCARG] = core_send(self._core, t, METHOD, target, self.headers)
        return t
      end
      return send(self, PLAIN, { method = METHOD, url = target, session_headers = self.headers })
    end
    if type(opts) ~= "table" then errors.argument(2, fname, "options table expected, got " .. type(opts)) end
    local o = {}
    if opts then for k, v in pairs(opts) do o[k] = v end end
    o.method, o.url = METHOD, target
    return self:request_async(o)
  end
  local at_once = METHOD == "GET" or METHOD == "HEAD"
  local async = Session[verb .. "_async"]
  Session[verb] = function(self, target, opts)
    -- A plain GET or HEAD on the plain path may be answered from the session's cache in the
    -- call that sends it: no task, no transfer, no turn of the loop. Anything else (a miss, a
    -- stale entry) is on its way in the same call, prepared and looked up once.
    if at_once and opts == nil and (seen_urls[target] or type(target) == "string") and getmetatable(self) == Session then
      local send   -- pipeline_of(self), its common case inline
      if self._pipeline_epoch == recording_epoch then send = self._pipeline else send = pipeline_of(self) end
      if not send then
        if not seen_urls[target] then remember_url(target) end
        -- attempt_plain(self, METHOD, target, true), inline: a Lua call less a request.
        local t = setmetatable({ false, false, false, false, core_cancel, false, false, state = "pending", url = target, result = nil }, Task)
        local id, raw, status, reason, u, version, elapsed = core_send(self._core, t, METHOD, target, self.headers, true)
        if not id then return new_response(raw, status, reason, u, version, elapsed) end
        t[OCARG] = id
        return t:await()
      end
    end
    return async(self, target, opts):await()
  end
end

-- Sessions ----------------------------------------------------------------------------------

local function copy(t)
  local c = {}
  if t then for k, v in pairs(t) do c[k] = v end end
  return c
end

-- `implicit`: the session http.get and the like use; the user made none, so messages about a
-- URL do not talk of its base_url.
local function make_session(opts, parent, implicit)
  check_options(opts, SESSION_OPTIONS, "the session")
  local cfg = copy(opts)
  cfg.headers = nil
  if opts.cache == nil or opts.cache == false then cfg.cache = nil
  elseif opts.cache == true then cfg.cache = cache().default(http.parse_size)._core
  elseif cache().is(opts.cache) then cfg.cache = opts.cache._core
  else errors.raise("argument", "option 'cache' of a session takes true, false or a cache made by http.cache{}") end
  cfg.max_body = http.parse_size(opts.max_body, "max_body")
  local auth_flow
  if opts.auth ~= nil then cfg.auth, auth_flow = require("lunet.auth").check(opts.auth) end
  cfg.netrc = nil
  if opts.netrc ~= nil then cfg.netrc_file = http._netrc_file(opts.netrc) end
  if opts.cookies ~= nil and type(opts.cookies) ~= "boolean" and type(opts.cookies) ~= "string" then
    errors.raise("argument", "option 'cookies' takes true, false or a cookie file path")
  end
  local s = setmetatable({}, Session)
  s._options = opts
  s.headers = copy(opts.headers)
  s.base_url = opts.base_url
  cfg._implicit = implicit
  s._core = parent and core.session_derive(parent._core, cfg) or core.session_new(cfg)
  if auth_flow then s._auth_flow = require("lunet.auth").flow(s, auth_flow, parent) end
  s._request_serializer = serializers.find("request", opts.request, "the session")
  if type(opts.response) == "table" and not opts.response.decode and #opts.response > 0 then
    -- a compound serializer: the first that decodes wins
    local list = {}
    for i, spec in ipairs(opts.response) do list[i] = serializers.find("response", spec, "the session") end
    s._response_serializer = { decode = function(body, r)
      local first_err
      for _, ser in ipairs(list) do
        local ok, v = pcall(ser.decode, body, r)
        if ok then return v end
        first_err = first_err or v
      end
      error(first_err, 0)
    end }
  else
    s._response_serializer = serializers.find("response", opts.response, "the session")
  end
  s._accept_status = opts.accept_status
  s._accept_types = opts.accept_types
  s._retry = opts.retry
  s._wait_for_network = opts.wait_for_network
  pipeline_of(s)
  return s
end

--- The .netrc file a `netrc` option names: true means $NETRC, else ~/.netrc (as curl -n and
--- HTTPie read it); a string is a path. false: none (nil).
function http._netrc_file(v)
  if v == false then return "" end   -- none (also over a session that has one)
  if v == true then
    local home = os.getenv("HOME")
    return os.getenv("NETRC") or (home and home .. "/.netrc") or ".netrc"
  end
  if type(v) ~= "string" then errors.raise("argument", "option 'netrc' takes true, false or a file path, got " .. type(v)) end
  return v
end

--- A session manager (see API.md): shared configuration, connections and cookies.
function http.session(opts)
  if opts ~= nil and type(opts) ~= "table" then errors.argument(1, "session", "options table expected, got " .. type(opts)) end
  if opts and opts.host ~= nil and opts.name == nil then
    errors.raise("argument", "option 'host' of a session names the host a named session is kept for: give name too")
  end
  if opts and opts.name ~= nil then
    check_options(opts, SESSION_OPTIONS, "the session")
    return require("lunet.session_store").open(make_session, opts)
  end
  return make_session(opts or {})
end

--- Writes the session's headers, auth and cookies to its named file (or to `name_or_path`),
--- so that `http.session{ name = ... }` and `lunet --session` find them. Refused for a session
--- opened read_only. Returns the path.
function Session:save(name_or_path)
  local store = require "lunet.session_store"
  local st = self._store
  if name_or_path == nil then
    if not st then errors.raise("argument", "this session has no name: give s:save(name) one") end
    if st.read_only then errors.raise("argument", "session " .. st.path .. " was opened read_only") end
    return store.write(st.path, self)
  end
  return store.write(store.path(name_or_path, (st and st.host) or self.base_url), self)
end

--- A derived session: these options over this one's, sharing connections and cookies.
function Session:with(opts)
  if type(opts) ~= "table" then errors.argument(1, "with", "options table expected, got " .. type(opts)) end
  local merged = copy(self._options)
  for k, v in pairs(opts) do merged[k] = v end
  local h = copy(self.headers)
  for k, v in pairs(opts.headers or {}) do h[k] = v end
  merged.headers = h
  merged.cookies = nil   -- the jar is shared, not made again
  return make_session(merged, self)
end

--- The session's cookies, one Netscape cookie-file line each.
function Session:cookies() return core.session_cookies(self._core) end
--- Writes the session's cookie file now (0600, atomically); raises kind io when it cannot
--- (the old file then stays as it was).
function Session:save_cookies() return core.session_save_cookies(self._core) end

function Session:__tostring()
  return "session (" .. (self.base_url or "no base_url") .. ")"
end

-- One-shot requests: a default session without cookies.
local default
local function default_session()
  if not default then default = make_session({}, nil, true) end
  return default
end

for _, verb in ipairs(VERBS) do
  http[verb .. "_async"] = function(target, opts)
    local s = default_session()
    return s[verb .. "_async"](s, target, opts)
  end
  http[verb] = function(target, opts)
    return http[verb .. "_async"](target, opts):await()
  end
end

function http.request_async(opts)
  return default_session():request_async(opts)
end

function http.request(opts)
  return http.request_async(opts):await()
end

-- Queues, batches, downloads and uploads load on first use: most programs need none of them,
-- and every program pays for what the prelude loads.
local function queue() return require "lunet.queue" end
local function download() return require "lunet.download" end

--- An HTTP cache (RFC 9111, private): http.cache{ dir =, memory = "32MB", disk = "512MB" }.
function http.cache(opts) return cache().new(opts, http.parse_size) end

--- An identifier queue over a session (the default one when none is given).
function http.queue(opts)
  opts = opts or {}
  if type(opts) ~= "table" then errors.argument(1, "queue", "options table expected, got " .. type(opts)) end
  return queue().new(opts.session or default_session(), opts.max_concurrent)
end

--- Runs a list of requests (URL strings or request tables), `concurrency` at a time.
function http.batch_async(requests, opts)
  return queue().batch_async((opts and opts.session) or default_session(), requests, opts)
end

function http.batch(requests, opts)
  return http.batch_async(requests, opts):await()
end

--- Downloads url to path (see docs/downloads.md); a table describing the result.
function http.download_async(target, path, opts)
  return download().download_async((opts and opts.session) or default_session(), target, path, opts)
end
function http.download(target, path, opts) return http.download_async(target, path, opts):await() end

--- Uploads a file (raw, or as a multipart part); the response.
function http.upload_async(target, path, opts)
  return download().upload_async((opts and opts.session) or default_session(), target, path, opts)
end
function http.upload(target, path, opts) return http.upload_async(target, path, opts):await() end

--- Records every request and response of the run as a HAR 1.2 file, written when the script
--- ends (or by rec:save()). Secrets are masked unless { mask_secrets = false }.
function http.record(path, opts)
  if type(path) ~= "string" then errors.argument(1, "record", "a file path expected, got " .. type(path)) end
  local entry = { recorder = require("lunet.har").new(), path = path, opts = opts or {} }
  recorders[#recorders + 1] = entry
  recording_epoch = recording_epoch + 1
  return {
    save = function() return entry.recorder:write(entry.path, entry.opts) end,
    stop = function()
      for i, e in ipairs(recorders) do if e == entry then table.remove(recorders, i) break end end
      recording_epoch = recording_epoch + 1
      return entry.recorder:write(entry.path, entry.opts)
    end,
  }
end

--- Writes every recording (the host calls this when a script ends).
function http._save_records()
  for _, e in ipairs(recorders) do
    local ok, problem = e.recorder:write(e.path, e.opts)
    if not ok then io.stderr:write("lunet: could not write ", e.path, ": ", tostring(problem), "\n") end
  end
end

-- The session a one-shot stream runs on (opts.session, else the default one), and its options
-- without `session`.
local function stream_session(opts)
  if type(opts) == "table" and opts.session then
    local o = copy(opts)
    o.session = nil
    return opts.session, o
  end
  return default_session(), opts
end

--- Server-Sent Events (see lua/lunet/sse.lua and docs/streams.md): a stream object.
function http.sse(target, opts)
  local session, o = stream_session(opts)
  return require("lunet.sse").open(session, target, o)
end
function Session:sse(target, opts) return require("lunet.sse").open(self, target, opts) end

--- WebSockets (see lua/lunet/websocket.lua and docs/streams.md): an open websocket.
function http.websocket_async(target, opts)
  local session, o = stream_session(opts)
  return require("lunet.websocket").open_async(session, target, o)
end
function http.websocket(target, opts) return http.websocket_async(target, opts):await() end
function Session:websocket_async(target, opts) return require("lunet.websocket").open_async(self, target, opts) end
function Session:websocket(target, opts) return self:websocket_async(target, opts):await() end

--- http.limits{ per_host = N, total = N }: connections open at once to one host and in all,
--- for every session (they share connections); requests past them wait for a connection.
--- Returns the limits in force before: { per_host =, total = }. http.limits() only reads them.
function http.limits(opts)
  if opts ~= nil and type(opts) ~= "table" then errors.argument(1, "limits", "options table expected, got " .. type(opts)) end
  opts = opts or {}
  for k, v in pairs(opts) do
    if k ~= "per_host" and k ~= "total" then errors.raise("argument", "unknown option '" .. tostring(k) .. "' in http.limits (per_host, total)") end
    if math.type(v) ~= "integer" or v < 1 then errors.raise("argument", "http.limits: " .. k .. " must be an integer of at least 1") end
  end
  local per_host, total = core.limits(opts.per_host, opts.total)
  return { per_host = per_host, total = total }
end

--- Diagnostics: { transfers = transfers in flight now }.
function http.stats()
  return { transfers = core.live_transfers() }
end

http.Session = Session
return http
