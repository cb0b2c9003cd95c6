--- A virtual user of `lunet load`: a table the iteration function gets (`vu.id`, `vu.iteration`,
--- `vu.scenario`, `vu.session`, `vu.data`) and the session it sends through, which records every
--- request in the run's metrics as k6 records them: http_reqs, http_req_failed,
--- http_req_duration and its phases (blocked: DNS; connecting; tls_handshaking; waiting:
--- sending and the server's time to the first byte; receiving), data_sent and data_received,
--- tagged by name (the URL unless the request's `tags.name` says), method, status and
--- scenario, plus the request's own tags.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local http = require "lunet.http"
local tag_key = require("lunet.load.metrics").tag_key
local hdr = require "lunet.load.hdr"
local record, group, record_group = hdr.record, hdr.group, hdr.record_group
local mask_url = require("lunet.secrets").mask_url

local M = {}

local now = core.now
local VERBS = { "get", "post", "put", "patch", "delete", "head", "options" }

--- Tag sets a run keeps apart. Each costs ten sinks (seven histograms): a script that puts an
--- id in every URL would otherwise grow without bound. At WARN_SETS the run says once how to
--- group them (tags.name, as k6 says); past MAX_SETS a request of a new tag set is recorded
--- under the name OTHER_NAME.
M.WARN_SETS, M.MAX_SETS, M.OTHER_NAME = 1000, 10000, "(other names)"

-- The request's options without `tags` (which lunet.http does not take), and the tags.
local function split_tags(opts)
  if opts == nil then return nil, nil end
  local tags = opts.tags
  if tags == nil then return opts, nil end
  if type(tags) ~= "table" then error("option 'tags' must be a table of names and values", 3) end
  local o = {}
  for k, v in pairs(opts) do if k ~= "tags" then o[k] = v end end
  return o, tags
end

-- The built-in request metrics of `registry`, by short name.
local NAMES = { "reqs", "failed", "duration", "blocked", "connecting", "tls", "waiting", "receiving", "sent", "received" }
local function request_metrics(registry)
  return {
    reqs = registry:metric("http_reqs", "counter"),
    failed = registry:metric("http_req_failed", "rate"),
    duration = registry:metric("http_req_duration", "trend", "time"),
    blocked = registry:metric("http_req_blocked", "trend", "time"),
    connecting = registry:metric("http_req_connecting", "trend", "time"),
    tls = registry:metric("http_req_tls_handshaking", "trend", "time"),
    waiting = registry:metric("http_req_waiting", "trend", "time"),
    receiving = registry:metric("http_req_receiving", "trend", "time"),
    sent = registry:metric("data_sent", "counter", "data"),
    received = registry:metric("data_received", "counter", "data"),
  }
end

-- The slow path: every sample through registry:add (interval sinks kept too). Times in
-- microseconds; `blocked` and what follows only for a response.
local function add_each(registry, h, set, rkey, failed, duration, blocked, connecting, tls, waiting, receiving, sent, received)
  local add = registry.add
  add(registry, h.reqs, 1, set, rkey)
  add(registry, h.failed, failed, set, rkey)
  add(registry, h.duration, duration / 1000, set, rkey)
  if blocked then
    add(registry, h.blocked, blocked / 1000, set, rkey)
    add(registry, h.connecting, connecting / 1000, set, rkey)
    add(registry, h.tls, tls / 1000, set, rkey)
    add(registry, h.waiting, waiting / 1000, set, rkey)
    add(registry, h.receiving, receiving / 1000, set, rkey)
    add(registry, h.sent, sent, set, rkey)
    add(registry, h.received, received, set, rkey)
  end
end

-- A tag set seen for the first time: its tags, its key, and (without interval sinks) the sink
-- of each built-in metric, found once.
local function new_entry(registry, h, vu, method, status, name, tags)
  -- A URL as a name keeps no password and no secret query value (the summary, the exports).
  if not (tags and tags.name) and name ~= M.OTHER_NAME then name = mask_url(name) end
  local set = { scenario = vu.scenario, method = method, status = tostring(status), name = name }
  for k, v in pairs(vu._scenario_tags) do set[k] = tostring(v) end
  if tags then for k, v in pairs(tags) do set[k] = tostring(v) end end
  local entry = { set = set, key = tag_key(set) }
  if registry:sink(h.reqs, set, entry.key) then
    for _, n in ipairs(NAMES) do entry[n] = registry:sink(h[n], set, entry.key) end
    -- A response's duration and phases, in the order core.response_load hands them over.
    entry.timings = group{ entry.duration, entry.blocked, entry.connecting, entry.tls, entry.waiting, entry.receiving }
  end
  return entry
end

-- The entry of a request's tag set, found by its key (made first when new; past MAX_SETS a
-- new set is recorded under OTHER_NAME).
local function entry_finder(registry, h)
  local sets, set_count = {}, 0
  return function(vu, method, url, tags, status)
    local name = tags and tags.name or url
    local key = vu._tag_prefix .. method .. "\1" .. status .. "\1" .. name
    if tags then
      for k, v in pairs(tags) do
        if k ~= "name" then key = key .. "\1" .. k .. "\0" .. tostring(v) end
      end
    end
    local entry = sets[key]
    if not entry and set_count >= M.MAX_SETS then
      name, tags = M.OTHER_NAME, nil
      key = vu._tag_prefix .. method .. "\1" .. status .. "\1" .. name
      entry = sets[key]
    end
    if not entry then
      set_count = set_count + 1
      if set_count == M.WARN_SETS then
        io.stderr:write(string.format("lunet load: requests in %d tag sets (URLs, names, statuses) so far: give URLs " ..
          "with ids one name (tags = { name = ... }); past %d, new ones are recorded as %q\n", M.WARN_SETS, M.MAX_SETS, M.OTHER_NAME))
      end
      entry = new_entry(registry, h, vu, method, status, name, tags)
      sets[key] = entry
    end
    return entry
  end
end

-- Requests without tags (most of a run's) find their entry again through tables by scenario
-- prefix, method, URL and status, with no key string made: building one a request was a new
-- string to hash and then collect. As many URLs are remembered as there are tag sets. The
-- recorder reads `untagged` itself (a call less a request); `remember` adds to it.
local function untagged_entries()
  local untagged, remembered = {}, 0
  local function remember(vu, method, url, status, entry)
    if remembered >= M.MAX_SETS then return end
    remembered = remembered + 1
    local by_method = untagged[vu._tag_prefix]
    if not by_method then by_method = {}; untagged[vu._tag_prefix] = by_method end
    local by_url = by_method[method]
    if not by_url then by_url = {}; by_method[method] = by_url end
    local by_status = by_url[url]
    if not by_status then by_status = {}; by_url[url] = by_status end
    by_status[status] = entry
  end
  return untagged, remember
end

--- The recorder of a run: record(vu, method, url, tags, r, t0) adds one request to
--- `registry`. Per request it finds the tag set's sinks (four table lookups for a request
--- without tags, one key string and a lookup with them), then adds to them directly (the
--- sinks of every built-in metric for that set are found once, when the set is first seen);
--- with --out json (interval sinks) it goes through registry:add instead. With `series` (lunet.load.series) each request goes into its second too.
function M.recorder(registry, series)
  local h = request_metrics(registry)
  local series_add = require("lunet.load.series").add
  local find_entry = entry_finder(registry, h)
  local untagged, remember = untagged_entries()
  local response_load = core.response_load
  return function(vu, method, url, tags, r, t0)
    local status = r and r.status or 0
    local entry
    if not tags then
      local by_method = untagged[vu._tag_prefix]
      local by_url = by_method and by_method[method]
      local by_status = by_url and by_url[url]
      entry = by_status and by_status[status]
      if not entry then
        entry = find_entry(vu, method, url, nil, status)
        remember(vu, method, url, status, entry)
      end
    else
      entry = find_entry(vu, method, url, tags, status)
    end
    local failed = status == 0 or status >= 400
    -- The duration and phases in microseconds (HTTPResponse.Timings.loadPhases), bytes.
    local duration, blocked, connecting, tls, waiting, receiving, sent, received
    if r then
      duration, blocked, connecting, tls, waiting, receiving, sent, received = response_load(r._raw)
    else
      duration = (now() - t0) * 1e6
    end
    if series then series_add(series, t0 + duration / 1e6, duration, failed) end
    local reqs = entry.reqs
    if not reqs then return add_each(registry, h, entry.set, entry.key, failed, duration, blocked, connecting, tls, waiting, receiving, sent, received) end
    reqs.sum, reqs.n = reqs.sum + 1, reqs.n + 1
    local f = entry.failed
    f.total = f.total + 1
    if failed then f.trues = f.trues + 1 end
    if not r then return record(entry.duration, duration) end
    record_group(entry.timings, duration, blocked, connecting, tls, waiting, receiving)
    local s = entry.sent
    s.sum, s.n = s.sum + sent, s.n + 1
    s = entry.received
    s.sum, s.n = s.sum + received, s.n + 1
  end
end

local Session = {}

-- The session's methods that send: each records its request, then returns (or raises) what
-- lunet.http's did. A request that raised is recorded with status 0 and raised again.
for _, verb in ipairs(VERBS) do
  local METHOD = verb:upper()
  Session[verb] = function(self, url, opts)
    local o, tags = nil, nil   -- most requests have no options: no call to split them
    if opts ~= nil then o, tags = split_tags(opts) end
    local t0 = now()
    local real = self._real
    local ok, r = pcall(real[verb], real, url, o)
    self._record(self._vu, METHOD, url, tags, ok and r or nil, t0)
    if not ok then error(r, 0) end
    return r
  end
  Session[verb .. "_async"] = function(self, url, opts)
    local o, tags = split_tags(opts)
    local t0 = now()
    local real, vu, record = self._real, self._vu, self._record
    local t = real[verb .. "_async"](real, url, o)
    t:continue(function(done) record(vu, METHOD, url, tags, done.state == "done" and done.result or nil, t0) end)
    return t
  end
end

function Session:request(opts)
  if type(opts) ~= "table" then error("request takes an options table", 2) end
  local o, tags = split_tags(opts)
  local t0 = now()
  local ok, r = pcall(self._real.request, self._real, o)
  self._record(self._vu, string.upper(opts.method or "GET"), opts.url or "", tags, ok and r or nil, t0)
  if not ok then error(r, 0) end
  return r
end

-- Anything else of the session (headers, base_url, download, websocket, ...) is the real one's;
-- its methods are called on the real session. A method of its own is kept in the session once
-- looked up, so that a VU's next `vu.session:get` finds it without a call of this function.
Session.__index = function(self, k)
  local m = Session[k]
  if m ~= nil then
    rawset(self, k, m)
    return m
  end
  local v = self._real[k]
  if type(v) == "function" then
    local real = self._real
    return function(_, ...) return v(real, ...) end
  end
  return v
end

local VU = {}
VU.__index = VU
--- vu:grpc(target, opts): a gRPC client whose calls are recorded (lunet.load.grpc_vu).
function VU:grpc(target, opts) return require("lunet.load.grpc_vu").client(self, target, opts) end

--- A VU: its own session (cookies, connections) made from the run's session options. It keeps
--- the cookies its responses set, in memory, for its later requests, as a k6 VU does, unless
--- the options say `cookies = false`.
function M.new(id, scenario, session_options, record)
  local vu = setmetatable({ id = id, iteration = 0, scenario = scenario.name, _scenario_tags = scenario.tags,
               _tag_prefix = scenario.name .. "\1" }, VU)
  local opts = {}
  for k, v in pairs(session_options) do opts[k] = v end
  if opts.cookies == nil then opts.cookies = true end
  vu.session = setmetatable({ _real = http.session(opts), _vu = vu, _record = record }, Session)
  return vu
end

return M
