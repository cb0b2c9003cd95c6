-- http: one-shot requests and sessions (the session manager of API.md).
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
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
local options = require "lunet.http.options"
local request = require "lunet.http.request"
local pipeline = require "lunet.http.pipeline"
-- lunet.cache and lunet.auth load when a session first asks for them: a plain GET needs neither.
-- Auth, a named session's store and OpenAPI are features, a floor above: reached through
-- lunet.features, never required from here (scripts/check-layers).
local function cache() return require "lunet.cache" end
local features = require "lunet.features"

local http = {}
http.serializers = serializers

local Session = {}
Session.__index = Session
Session.__name = "lunet.Session"

local VERBS = { "get", "post", "put", "patch", "delete", "head", "options" }


-- Options, the request table and the stages live in lunet.http.options, .request and
-- .pipeline; this file is the API: sessions, the verbs, and what loads on first use.
http.parse_size = options.parse_size
http._netrc_file = options.netrc_file
http._seen_urls = pipeline.seen_urls
http._stages_of = pipeline.stages_of
local check_options, build, start = options.check, request.build, pipeline.start
local seen_urls, remember_url, pipeline_of, PLAIN = pipeline.seen_urls, pipeline.remember_url, pipeline.pipeline_of, pipeline.PLAIN
local pipeline_state = pipeline.state   -- its `epoch` moves when HAR recording starts or stops
local new_task, core_send, core_cancel = task.new, core.send, core.cancel
local OCARG <const> = 6   -- task.lua's slot for the cancel hook's argument
assert(task._OCARG == OCARG, "task.lua's slots moved")
local new_response = response.new


--- Starts a request; a task of its response. With a retry policy (the session's or the
--- request's), failed attempts are tried again as retry_policy decides.
function Session:request_async(opts)
  if type(opts) ~= "table" then errors.argument(1, "request", "options table expected, got " .. type(opts)) end
  check_options(opts, options.REQUEST, "the request")
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
      if self._pipeline_epoch == pipeline_state.epoch then send = self._pipeline else send = pipeline_of(self) end
      if not seen then remember_url(target) end
      if not send then
        -- attempt_plain(self, METHOD, target), inline: a Lua call less a request.
        local t = new_task(target, core_cancel)
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
      if self._pipeline_epoch == pipeline_state.epoch then send = self._pipeline else send = pipeline_of(self) end
      if not send then
        if not seen_urls[target] then remember_url(target) end
        -- attempt_plain(self, METHOD, target, true), inline: a Lua call less a request.
        local t = new_task(target, core_cancel)
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
  check_options(opts, options.SESSION, "the session")
  local cfg = copy(opts)
  cfg.headers = nil
  if opts.cache == nil or opts.cache == false then cfg.cache = nil
  elseif opts.cache == true then cfg.cache = cache().default(http.parse_size)._core
  elseif cache().is(opts.cache) then cfg.cache = opts.cache._core
  else errors.raise("argument", "option 'cache' of a session takes true, false or a cache made by http.cache{}") end
  cfg.max_body = http.parse_size(opts.max_body, "max_body")
  -- Names of this API's credentials that no rule knows (X-My-Gateway-Key): secret for the rest
  -- of the process, in the cache, on redirects and in everything printed (lunet.secrets).
  if opts.secret_names ~= nil then
    for i, name in ipairs(opts.secret_names) do
      if type(name) ~= "string" or name == "" then
        errors.raise("argument", string.format("option 'secret_names' is a list of names; item %d is %s", i, type(name)))
      end
      require("lunet.secrets").declare_name(name)
    end
    cfg.secret_names = nil
  end
  local auth_flow
  if opts.auth ~= nil then cfg.auth, auth_flow = features.get("auth").check(opts.auth) end
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
  if auth_flow then s._auth_flow = features.get("auth").flow(s, auth_flow, parent) end
  s._request_serializer = serializers.find("request", opts.request, "the session")
  s._response_serializer = serializers.find("response", opts.response, "the session")   -- a list: compound
  s._accept_status = opts.accept_status
  s._accept_types = opts.accept_types
  s._retry = opts.retry
  s._wait_for_network = opts.wait_for_network
  pipeline_of(s)
  return s
end

--- A session manager (see API.md): shared configuration, connections and cookies.
function http.session(opts)
  if opts ~= nil and type(opts) ~= "table" then errors.argument(1, "session", "options table expected, got " .. type(opts)) end
  if opts and opts.host ~= nil and opts.name == nil then
    errors.raise("argument", "option 'host' of a session names the host a named session is kept for: give name too")
  end
  if opts and opts.name ~= nil then
    check_options(opts, options.SESSION, "the session")
    return features.get("session_store").open(make_session, opts)
  end
  return make_session(opts or {})
end

--- Writes the session's headers, auth and cookies to its named file (or to `name_or_path`),
--- so that `http.session{ name = ... }` and `lunet --session` find them. Refused for a session
--- opened read_only. Returns the path.
function Session:save(name_or_path)
  local store = features.get("session_store")
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
  local recorders = pipeline_state.recorders
  recorders[#recorders + 1] = entry
  pipeline_state.epoch = pipeline_state.epoch + 1
  return {
    save = function() return entry.recorder:write(entry.path, entry.opts) end,
    stop = function()
      for i, e in ipairs(recorders) do if e == entry then table.remove(recorders, i) break end end
      pipeline_state.epoch = pipeline_state.epoch + 1
      return entry.recorder:write(entry.path, entry.opts)
    end,
  }
end

--- Writes every recording (the host calls this when a script ends).
function http._save_records()
  for _, e in ipairs(pipeline_state.recorders) do
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

--- What the loaded libcurl is and gives (docs/libcurl.md): { version, version_num, tls,
--- flavour, http2, http3, quic, websocket, path, line, codings }. Opens libcurl.
function http.libcurl() return core.libcurl() end

--- An API from its OpenAPI document (docs/openapi.md): lunet.openapi.
function http.openapi(source, opts) return features.get("openapi").open(source, opts) end

http.Session = Session
return http
