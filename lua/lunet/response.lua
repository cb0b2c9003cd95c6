-- The response object. Cheap fields are set when it is made; the rest (body, text, json,
-- headers, timings, request) are fetched from Swift on first use and kept, so each conversion
-- runs at most once per response.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local headers = require "lunet.headers"
local runtime = require "lunet.runtime"
local setmetatable, getmetatable = runtime.setmetatable, runtime.getmetatable   -- the C ones (runtime.lua)

local Response = {}
Response.__name = "lunet.Response"
local M = { Response = Response }

local lazy = {}
function lazy.text(r) return core.response_text(r._raw) end
function lazy.json(r) return core.response_json(r._raw) end
function lazy.headers(r) return headers.from_flat(core.response_headers(r._raw)) end
function lazy.trailers(r) return headers.from_flat(core.response_trailers(r._raw)) end
function lazy.timings(r) return core.response_timings(r._raw) end
function lazy.cache(r) return core.response_cache(r._raw) end
function lazy.ok(r) return r.status >= 200 and r.status < 300 end
-- A plain request's response starts with its status only (http.lua); the rest of its head comes
-- in one call at the first use of any of it.
local function head(r, k)
  local reason, url, version, elapsed = core.response_head(r._raw)
  r.reason, r.url, r.http_version, r.elapsed = reason, url, version, elapsed
  return rawget(r, k)
end
function lazy.reason(r) return head(r, "reason") end
function lazy.url(r) return head(r, "url") end
function lazy.http_version(r) return head(r, "http_version") end
function lazy.elapsed(r) return head(r, "elapsed") end
function lazy.data(r) return r.body end
function lazy.connections_opened(r) return (core.response_connections(r._raw)) end
function lazy.redirects(r) return (select(2, core.response_connections(r._raw))) end
function lazy.request(r)
  local q = core.response_request(r._raw)
  q.headers = headers.from_flat(q.headers)
  return q
end

-- A response has no __newindex: a field set on it goes in as rawset would put it, without a
-- call to rawset (a C function: a call more on every first read of a lazy field).
local response_body = core.response_body
Response.__index = function(r, k)
  -- The body, the field read most, fetched here rather than through `lazy` (a call less).
  if k == "body" then
    local v = response_body(r._raw)
    r.body = v
    return v
  end
  local m = Response[k]
  if m ~= nil then return m end
  local f = lazy[k]
  if f then
    local v = f(r)
    r[k] = v
    return v
  end
  return nil
end

-- What the prompt offers after `r.` and `r:` (lunet.repl): the fields, lazy ones included, and
-- the methods; never `_raw`. Named here, beside `lazy`, so a new field is not forgotten.
local FIELDS = { "body", "status" }
for k in pairs(lazy) do FIELDS[#FIELDS + 1] = k end
table.sort(FIELDS)
Response.__complete = function(_, sep)
  if sep ~= ":" then return FIELDS end
  local methods = {}   -- read at the time of asking: the methods are defined below
  for k, v in pairs(Response) do if type(v) == "function" and not k:find("^__") then methods[#methods + 1] = k end end
  return methods
end

-- The URL shown with its secret query parameters and password masked (an API key in the query,
-- a signature): what is printed is never a credential (lunet.secrets). r.url keeps it whole.
Response.__tostring = function(r)
  return string.format("HTTP/%s %d %s (%s)", r.http_version, r.status, r.reason, require("lunet.secrets").mask_url(r.url))
end

local function quote(s)
  return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end
M.shell_quote = quote

--- The same request as a curl command line, to share or to replay outside lunet. Secrets are
--- masked (credentials in headers, URL passwords, secret query, form, multipart and JSON
--- fields: lunet.secrets decides), so the line can be pasted safely; r:curl{ reveal = true }
--- shows them.
function Response:curl(opts)
  if opts ~= nil and type(opts) ~= "table" then error("r:curl takes an options table ({ reveal = true })", 2) end
  return M.curl_of(self.request, opts)
end

--- The body's pieces as they arrive (a response of { stream = true }: see body_stream.lua), or
--- the whole body once for any other response: `for piece in r:chunks() do ... end`.
function Response:chunks()
  local st = rawget(self, "_stream")
  if st then
    return function() return st:next_piece() end   -- the stream's own reader (body_stream.lua)
  end
  local given = false
  return function()
    if given then return nil end
    given = true
    local b = self.body
    if b == nil or b == "" then return nil end
    return b
  end
end

--- Stops a streamed response's transfer (a reader done early); nothing for others.
function Response:close()
  local st = rawget(self, "_stream")
  if st then st:close() end
end


--- What a curl command line needs besides the request itself to do what the transfer did: the
--- one exporter of a session's settings, for r:curl() (the core's request says them) and the
--- command line's --curl (its session's). settings: { insecure, ca_file, cert, cert_key,
--- cert_password (true: there is one), proxy, netrc (true, or a file), http_version ("3",
--- "3-only": curl's --http3, --http3-only), digest | ntlm |
--- negotiate = { user }, aws_sigv4 = { provider, key } }. Secrets are always masked: the
--- settings never hold them.
function M.curl_flags(settings)
  local mask = require("lunet.secrets").MASK
  local flags = {}
  local function add(flag) flags[#flags + 1] = flag end
  for _, scheme in ipairs({ "digest", "ntlm" }) do
    if settings[scheme] then add("--" .. scheme); add("-u " .. quote(settings[scheme].user .. ":" .. mask)) end
  end
  if settings.negotiate then add("--negotiate"); add("-u :") end
  local aws = settings.aws_sigv4
  if aws then
    add("--aws-sigv4 " .. quote(aws.provider))
    add("-u " .. quote((aws.key or "$AWS_ACCESS_KEY_ID") .. ":" .. mask))
  end
  if settings.cert then add("--cert " .. quote(settings.cert)) end
  if settings.cert_key then add("--key " .. quote(settings.cert_key)) end
  if settings.cert_password then add("--pass " .. mask) end
  if settings.insecure then add("--insecure") end
  if settings.ca_file then add("--cacert " .. quote(settings.ca_file)) end
  if settings.http_version == "3" then add("--http3") elseif settings.http_version == "3-only" then add("--http3-only") end
  if settings.proxy then add("--proxy " .. quote(require("lunet.secrets").mask_url(settings.proxy))) end
  if settings.netrc then
    add("--netrc-optional")
    if type(settings.netrc) == "string" then add("--netrc-file " .. quote(settings.netrc)) end
  end
  return flags
end

-- A query in SigV4's canonical order (RFC 3986 encoding, sorted by name, then value): curl
-- before 8.1 signs the query as written, so a replayed line must carry it in this order.
local function canonical_query(query)
  local u = require "lunet.url"
  local pairs_ = {}
  for piece in query:gmatch("[^&]+") do
    local name, value = piece:match("^([^=]*)=?(.*)$")
    pairs_[#pairs_ + 1] = { u.encode(u.decode(name)), u.encode(u.decode(value)) }
  end
  table.sort(pairs_, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  for i, p in ipairs(pairs_) do pairs_[i] = p[1] .. "=" .. p[2] end
  return table.concat(pairs_, "&")
end

-- The fields curl makes itself when it signs (--aws-sigv4): sent as well, they would stand in
-- for its signature.
local SIGNATURE_FIELDS = { authorization = true, ["x-amz-date"] = true }

--- A request { method, url, headers (a lunet.headers table), body, multipart, and either
--- settings (see curl_flags) or flags (curl options as words) } as a curl command line (r:curl,
--- and the command line's --curl).
function M.curl_of(q, opts)
  local reveal = opts ~= nil and opts.reveal == true
  local secrets = require "lunet.secrets"
  local parts = { "curl" }
  local signed = q.settings and q.settings.aws_sigv4
  local url = q.url
  if signed then
    local before, query, fragment = url:match("^([^?#]*)%?([^#]*)(.*)$")
    if query and query ~= "" then url = before .. "?" .. canonical_query(query) .. fragment end
  end
  if q.method == "HEAD" then parts[#parts + 1] = "-I"
  elseif q.method ~= "GET" and not (q.method == "POST" and (q.body or q.multipart)) then parts[#parts + 1] = "-X " .. q.method end
  parts[#parts + 1] = quote(reveal and url or secrets.mask_url(url))
  local content_type = ""
  for _, field in ipairs(q.headers:list()) do
    if signed and SIGNATURE_FIELDS[string.lower(field[1])] then goto next_field end
    if string.lower(field[1]) == "content-type" then content_type = string.lower(field[2]) end
    do
      local value = reveal and field[2] or secrets.mask_header(field[1], field[2])
      -- curl reads `-H 'Name:'` (nothing after the colon) as "remove Name": an empty value is `Name;`.
      parts[#parts + 1] = "-H " .. quote(value == "" and (field[1] .. ";") or (field[1] .. ": " .. value))
    end
    ::next_field::
  end
  if q.body then
    local body = q.body
    if not reveal then
      if content_type:find("x-www-form-urlencoded", 1, true) then body = secrets.mask_query(body)
      elseif content_type:find("json", 1, true) then body = secrets.mask_json_text(body) end
    end
    parts[#parts + 1] = "--data-binary " .. quote(body)
  end
  for _, part in ipairs(q.multipart or {}) do
    local spec
    local option = "-F "
    if part.file then spec = part.name .. "=@" .. part.file
    else spec = part.name .. "=" .. ((not reveal and secrets.is_secret_name(part.name)) and secrets.MASK or part.data) end
    -- -F reads a value that starts with @ or < as a file's name, and ;type= in it as a parameter:
    -- a plain field goes as --form-string, which takes its value as it is.
    if not part.file and not part.filename and not part.content_type and part.data:find("^[@<]") then option = "--form-string " end
    if part.filename and not part.file then spec = spec .. ";filename=" .. part.filename end
    if part.content_type then spec = spec .. ";type=" .. part.content_type end
    parts[#parts + 1] = option .. quote(spec)
  end
  for _, flag in ipairs(q.flags or (q.settings and M.curl_flags(q.settings)) or {}) do parts[#parts + 1] = flag end
  parts[#parts + 1] = "--compressed"
  return table.concat(parts, " ")
end

--- A response whose head is in and whose body is still arriving (body_stream.lua); its other
--- fields (timings, body, ...) are there once the transfer has finished.
function M.streaming(status, flat, url, st)
  return setmetatable({ status = status, url = url, headers = headers.from_flat(flat or {}), _stream = st,
                        reason = "", http_version = "" }, Response)
end

--- A response object from what core.send delivers: the core's response and its head.
function M.new(raw, status, reason, url, version, elapsed)
  return setmetatable({ _raw = raw, status = status, reason = reason, url = url,
                        http_version = version, elapsed = elapsed }, Response)
end

function M.is(v) return getmetatable(v) == Response end

return M
