-- HAR 1.2 (HTTP Archive) recording: a recorder collects responses (and errors) as they come and
-- writes them as one HAR file that browsers' developer tools, Charles, Fiddler and HAR viewers
-- open.
--
--   local har = require "lunet.har"
--   local rec = har.new()
--   rec:add(response_or_error, started_at)     -- started_at: epoch seconds (fractions kept)
--   rec:write("run.har")                         -- secrets masked; { mask_secrets = false } keeps them
--
-- What is kept is copied when it is added; masking happens when it is written, so one recorder
-- can be written both ways. See docs/testing.md ("HAR").
local json = require "lunet.json"
local url = require "lunet.url"

local M = {}

-- Which names are secrets' (headers, parameters, form fields, JSON keys): lunet.secrets, the
-- rule history and r:curl() use too.
local secrets = require "lunet.secrets"
-- Called by name, from this chunk: lunet.core_guard gives core only to a `require` written so
-- (a pcall(require, ...) asked through pcall, and got nothing outside lunet's own tests).
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
M.MASK = secrets.MASK

local function lunet_version()
  local ok, v = pcall(core.version)
  if ok and type(v) == "string" then return v end
  return "unknown"
end

-- Text ----------------------------------------------------------------------------------------

-- Valid UTF-8 as it is; anything else read as Latin-1 (as HTTP fields historically are).
local function utf8_text(s)
  s = tostring(s or "")
  if utf8.len(s) then return s end
  return (string.gsub(s, "[\128-\255]", function(c) return utf8.char(string.byte(c)) end))
end

--- Standard base64 (RFC 4648, with padding): lunet.base64's.
M.base64 = require("lunet.base64").encode

--- ISO 8601 in UTC with milliseconds: 2024-05-01T12:00:00.123Z.
function M.iso8601(epoch)
  local whole = math.floor(epoch)
  local ms = math.floor((epoch - whole) * 1000 + 0.5)
  if ms >= 1000 then whole, ms = whole + 1, ms - 1000 end
  return os.date("!%Y-%m-%dT%H:%M:%S", whole) .. string.format(".%03dZ", ms)
end

local MONTHS = { Jan = 1, Feb = 2, Mar = 3, Apr = 4, May = 5, Jun = 6, Jul = 7, Aug = 8, Sep = 9, Oct = 10, Nov = 11, Dec = 12 }

-- An HTTP date (IMF-fixdate, or the dashed RFC 850 form cookies use) as ISO 8601, or nil.
local function http_date_iso(s)
  local d, mon, y, H, M_, S = string.match(s or "", "(%d%d?)[ %-](%a%a%a)[ %-](%d+) (%d%d):(%d%d):(%d%d)")
  if not d or not MONTHS[mon] then return nil end
  y = tonumber(y)
  if y < 100 then y = y + (y < 70 and 2000 or 1900) end
  return string.format("%04d-%02d-%02dT%s:%s:%s.000Z", y, MONTHS[mon], tonumber(d), H, M_, S)
end

-- The wall clock to the microsecond (os.time() has whole seconds only): read once, and later
-- calls add the monotonic clock's progress to it, so that a run's entries stay in order even
-- if the wall clock is set meanwhile.
local anchor_epoch, anchor_mono

--- Now, in epoch seconds with fractions (for started_at).
function M.now()
  if not anchor_epoch then
    anchor_mono = core.now()
    anchor_epoch = core.wall_time()
  end
  return anchor_epoch + (core.now() - anchor_mono)
end

-- Capturing --------------------------------------------------------------------------------

local function header_list(h)
  local out = {}
  if type(h) ~= "table" then return out end
  if type(h.list) == "function" then
    for _, f in ipairs(h:list()) do out[#out + 1] = { f[1], f[2] } end
  else
    local keys = {}
    for k in pairs(h) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      local v = h[k]
      if type(v) == "table" then
        for _, item in ipairs(v) do out[#out + 1] = { tostring(k), tostring(item) } end
      else
        out[#out + 1] = { tostring(k), tostring(v) }
      end
    end
  end
  return out
end

local function is_response(v)
  local mt = getmetatable(v)
  return type(v) == "table" and type(mt) == "table" and rawget(mt, "__name") == "lunet.Response"
end

-- The header lines of a request head as libcurl sent it ("GET / HTTP/1.1\r\nHost: ...").
local function sent_header_list(head)
  local list = {}
  for line in string.gmatch(head, "[^\r\n]+") do
    local name, value = string.match(line, "^([^:%s]+):%s*(.*)$")
    if name then list[#list + 1] = { name, value } end
  end
  return list
end

local function copy_request(q)
  q = q or {}
  -- What went on the wire when it is known (the jar's Cookie, Host, the headers curl adds).
  local headers = q.sent_head and sent_header_list(q.sent_head) or header_list(q.headers)
  local c = { method = q.method or "GET", url = q.url or "", headers = headers, body = q.body }
  if type(q.multipart) == "table" then
    c.multipart = {}
    for i, p in ipairs(q.multipart) do
      c.multipart[i] = { name = p.name, file = p.file, data = p.data, filename = p.filename, content_type = p.content_type }
    end
  end
  return c
end

local Recorder = {}
Recorder.__index = Recorder
Recorder.__name = "lunet.HarRecorder"

--- A new recorder. opts.creator: { name, version } for log.creator (default lunet's).
function M.new(opts)
  return setmetatable({ entries = {}, opts = opts or {} }, Recorder)
end

--- Records a response, or an error (with its response when it has one). started_at: when the
--- request started, in epoch seconds, fractions kept (default: har.now() minus the response's
--- elapsed time).
--- request: { method, url, headers, body } for an error without a response (default: the
--- error's url, method GET).
function Recorder:add(value, started_at, request)
  local e = {}
  local r = value
  if not is_response(value) then
    local t = type(value) == "table" and value or {}
    e.error = { kind = t.kind, message = t.message or tostring(value) }
    r = t.response
    if not is_response(r) then r = nil end
  end
  if r then
    e.request = copy_request(r.request)
    e.response = {
      status = r.status, reason = r.reason or "", http_version = r.http_version or "1.1",
      headers = header_list(r.headers), body = r.body or "", url = r.url,
    }
    local ok, redirects = pcall(function() return r.redirects end)
    e.response.redirects = ok and redirects or 0
    local t = r.timings or {}
    e.timings = { dns = t.dns or 0, connect = t.connect or 0, tls = t.tls or 0, ttfb = t.ttfb or 0, total = t.total or r.elapsed or 0 }
    e.elapsed = r.elapsed or e.timings.total
  else
    local q = request or (type(value) == "table" and value.request) or { url = type(value) == "table" and value.url or "" }
    e.request = copy_request(q)
    e.elapsed = 0
  end
  e.started = started_at or (M.now() - (e.elapsed or 0))
  self.entries[#self.entries + 1] = e
  return self
end

--- How many entries were recorded.
function Recorder:count() return #self.entries end

--- Forgets every entry.
function Recorder:clear() self.entries = {} end

-- Building HAR ---------------------------------------------------------------------------------

local function http_version(v)
  v = tostring(v or "")
  if v == "" then return "" end
  if string.find(v, "^HTTP/") then return v end
  return "HTTP/" .. v
end

local function header_value(list, name)
  name = string.lower(name)
  for _, f in ipairs(list) do
    if string.lower(f[1]) == name then return f[2] end
  end
  return nil
end

local function ms(seconds) return math.floor(seconds * 1000 * 1000 + 0.5) / 1000 end

-- Masks secret parameters in a query string (or form body); keeps everything else as sent.
local function mask_query(q, mask)
  if not mask then return q end
  return secrets.mask_query(q)
end

local function mask_url(u, mask)
  if not mask then return u end
  return secrets.mask_url(u)
end

-- A body's text with the values of secret keys masked when it is JSON.
local function mask_body(text, mime, mask)
  if not mask or not mime or not string.find(string.lower(mime), "json", 1, true) then return text end
  return secrets.mask_json_text(text)
end

local function params_of(q, mask)
  local out = json.array()
  for pair in string.gmatch(q or "", "[^&]+") do
    local name, value = string.match(pair, "^([^=]*)=?(.*)$")
    name, value = utf8_text(url.decode(name, true)), utf8_text(url.decode(value, true))
    if mask and secrets.is_secret_name(name) then value = M.MASK end
    out[#out + 1] = { name = name, value = value }
  end
  return out
end

local function headers_of(list, mask)
  local out = json.array()
  for _, f in ipairs(list) do
    local name, value = utf8_text(f[1]), utf8_text(f[2])
    if mask then value = secrets.mask_header(name, value) end
    if mask and string.lower(name) == "location" then value = mask_url(value, true) end
    out[#out + 1] = { name = name, value = value }
  end
  return out
end

local function request_cookies(list, mask)
  local out = json.array()
  for _, f in ipairs(list) do
    if string.lower(f[1]) == "cookie" then
      for pair in string.gmatch(f[2], "[^;]+") do
        local name, value = string.match(pair, "^%s*([^=]-)%s*=%s*(.-)%s*$")
        if name and name ~= "" then
          out[#out + 1] = { name = utf8_text(name), value = mask and M.MASK or utf8_text(value) }
        end
      end
    end
  end
  return out
end

local function response_cookies(list, mask)
  local out = json.array()
  for _, f in ipairs(list) do
    if string.lower(f[1]) == "set-cookie" then
      local first, rest = string.match(f[2], "^([^;]*);?(.*)$")
      local name, value = string.match(first or "", "^%s*([^=]-)%s*=%s*(.-)%s*$")
      if name and name ~= "" then
        local c = { name = utf8_text(name), value = mask and M.MASK or utf8_text(value) }
        for attr in string.gmatch(rest or "", "[^;]+") do
          local k, v = string.match(attr, "^%s*([^=]-)%s*=%s*(.-)%s*$")
          k = string.lower(k or string.match(attr, "^%s*(.-)%s*$"))
          if k == "path" then c.path = utf8_text(v)
          elseif k == "domain" then c.domain = utf8_text(v)
          elseif k == "expires" then c.expires = http_date_iso(v)
          elseif k == "httponly" then c.httpOnly = true
          elseif k == "secure" then c.secure = true
          end
        end
        out[#out + 1] = c
      end
    end
  end
  return out
end

local function body_text(body)
  if utf8.len(body) then return body, nil end
  return M.base64(body), "base64"
end

local function post_data(q, mask)
  local mime = header_value(q.headers, "content-type")
  if q.multipart then
    local params = json.array()
    for _, p in ipairs(q.multipart) do
      local item = { name = utf8_text(p.name) }
      if p.file or p.filename then item.fileName = utf8_text(p.filename or string.match(p.file, "[^/]*$")) end
      if p.content_type then item.contentType = utf8_text(p.content_type) end
      if p.data and not p.filename and not p.file then
        item.value = (mask and secrets.is_secret_name(tostring(p.name))) and M.MASK or utf8_text(p.data)
      end
      params[#params + 1] = item
    end
    return { mimeType = utf8_text(mime or "multipart/form-data"), params = params, text = "" }
  end
  if q.body == nil then return nil end
  local body = q.body
  local d = { mimeType = utf8_text(mime or "") }
  if mime and string.find(string.lower(mime), "application/x-www-form-urlencoded", 1, true) then
    body = mask_query(body, mask)
    d.params = params_of(body, mask)
  end
  local text, encoding = body_text(body)
  if not encoding then text = mask_body(text, mime, mask) end
  d.text = text
  if encoding then d._encoding = encoding end
  return d
end

local function query_string(u, mask)
  local q = string.match(u, "^[^?#]*%?([^#]*)")
  return params_of(q, mask)
end

-- HAR timings, milliseconds per phase, from cumulative seconds since the transfer started
-- (curl's namelookup, connect, appconnect, starttransfer, total).
function M.timings(t)
  if not t then
    return { blocked = -1, dns = -1, connect = -1, ssl = -1, send = 0, wait = 0, receive = 0 }
  end
  local dns, connect, tls, ttfb, total = t.dns or 0, t.connect or 0, t.tls or 0, t.ttfb or 0, t.total or 0
  local out = { blocked = -1, send = 0 }
  if connect > 0 then
    local setup_end = math.max(dns, connect, tls)
    out.dns = dns > 0 and ms(dns) or -1
    out.connect = ms(math.max(0, math.max(connect, tls) - dns))   -- HAR's connect includes ssl
    out.ssl = tls > 0 and ms(math.max(0, tls - connect)) or -1
    out.wait = ms(math.max(0, ttfb - setup_end))
    out.receive = ms(math.max(0, total - math.max(ttfb, setup_end)))
  else
    -- A reused connection: curl reports no connect time (and the look-up it did not need).
    out.dns, out.connect, out.ssl = -1, -1, -1
    out.wait = ms(math.max(0, ttfb))
    out.receive = ms(math.max(0, total - ttfb))
  end
  return out
end

local function entry_of(e, mask)
  local q = e.request
  local request = {
    method = q.method,
    url = utf8_text(mask_url(q.url, mask)),
    httpVersion = http_version(e.response and e.response.http_version or "1.1"),
    cookies = request_cookies(q.headers, mask),
    headers = headers_of(q.headers, mask),
    queryString = query_string(q.url, mask),
    headersSize = -1,
    bodySize = q.multipart and -1 or (q.body and #q.body or 0),
  }
  request.postData = post_data(q, mask)

  local response
  local p = e.response
  if p then
    local body = p.body or ""
    local text, encoding = body_text(body)
    local content = { size = #body, mimeType = utf8_text(header_value(p.headers, "content-type") or "x-unknown"), text = text }
    if encoding then content.encoding = encoding end
    local body_size = #body
    if header_value(p.headers, "content-encoding") then
      body_size = tonumber(header_value(p.headers, "content-length") or "") or -1
      if body_size >= 0 then content.compression = #body - body_size end
    end
    local location = header_value(p.headers, "location")
    response = {
      status = p.status, statusText = utf8_text(p.reason), httpVersion = http_version(p.http_version),
      cookies = response_cookies(p.headers, mask), headers = headers_of(p.headers, mask), content = content,
      redirectURL = location and utf8_text(mask_url(location, mask)) or "",
      headersSize = -1, bodySize = body_size,
    }
    if p.redirects and p.redirects > 0 then
      response._redirects = p.redirects
      response._url = utf8_text(mask_url(p.url, mask))
    end
  else
    response = {
      status = 0, statusText = "", httpVersion = "", cookies = json.array(), headers = json.array(),
      content = { size = 0, mimeType = "x-unknown" }, redirectURL = "", headersSize = -1, bodySize = -1,
    }
  end
  if e.error then
    response._error = utf8_text(e.error.message)
    if e.error.kind then response._errorKind = tostring(e.error.kind) end
  end

  local timings = M.timings(e.timings)
  local time = 0
  for _, k in ipairs({ "blocked", "dns", "connect", "send", "wait", "receive" }) do
    if timings[k] > 0 then time = time + timings[k] end
  end
  return {
    startedDateTime = M.iso8601(e.started),
    time = math.floor(time * 1000 + 0.5) / 1000,
    request = request,
    response = response,
    cache = {},
    timings = timings,
  }
end

--- The HAR document as a Lua table (what write encodes). opts.mask_secrets: default true.
function Recorder:har(opts)
  opts = opts or {}
  local mask = opts.mask_secrets ~= false
  local entries = json.array()
  for i, e in ipairs(self.entries) do entries[i] = entry_of(e, mask) end
  local creator = self.opts.creator or { name = "lunet", version = lunet_version() }
  return { log = { version = "1.2", creator = creator, entries = entries } }
end

--- The HAR document as JSON text.
function Recorder:encode(opts)
  return json.encode(self:har(opts), { pretty = true }) .. "\n"
end

--- Writes the HAR file: 0600 (a recording holds requests and responses, secrets or not),
--- through a temporary file renamed into place. opts.mask_secrets: default true. Returns true,
--- or nil and a message.
function Recorder:write(path, opts)
  return core.write_private(path, self:encode(opts))
end

return M
