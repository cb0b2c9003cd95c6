-- OAuth 2.0 access tokens from a token endpoint (RFC 6749): the client credentials, resource
-- owner password and refresh token grants. lunet.auth.token_flow keeps the token and decides
-- when to ask again; this file asks.
local errors = require "lunet.errors"
local url = require "lunet.url"

local M = {}

local GRANTS = { client_credentials = true, refresh_token = true, password = true }
local FIELDS = { token_url = "string", client_id = "string", client_secret = "string", scope = "any",
                 grant = "string", refresh_token = "string", username = "string", password = "string",
                 client_auth = "string", params = "table" }

local function bad(message) errors.raise("argument", "auth.oauth2" .. message) end

--- Checks the auth.oauth2 table; the options of its token flow.
function M.check(o)
  if type(o) ~= "table" then bad(" takes { token_url =, client_id =, client_secret =, scope =, grant = }") end
  for k, v in pairs(o) do
    local want = FIELDS[k]
    if not want then
      local hint = type(k) == "string" and require("lunet.suggest").closest(k, FIELDS)
      bad(": unknown field '" .. tostring(k) .. "'" .. (hint and (" (did you mean '" .. hint .. "'?)") or ""))
    end
    if want ~= "any" and type(v) ~= want then bad("." .. k .. " must be a " .. want .. ", got " .. type(v)) end
  end
  if not o.token_url then bad(" needs token_url") end
  if not o.client_id then bad(" needs client_id") end
  local grant = o.grant or "client_credentials"
  if not GRANTS[grant] then bad(".grant must be \"client_credentials\", \"refresh_token\" or \"password\", got \"" .. grant .. "\"") end
  if grant == "password" and (not o.username or not o.password) then bad(" with grant \"password\" needs username and password") end
  if grant == "refresh_token" and not o.refresh_token then bad(" with grant \"refresh_token\" needs refresh_token") end
  if o.scope ~= nil and type(o.scope) ~= "string" and type(o.scope) ~= "table" then bad(".scope must be a string or a list") end
  local client_auth = o.client_auth or "basic"
  if client_auth ~= "basic" and client_auth ~= "body" then bad(".client_auth must be \"basic\" or \"body\"") end
  return { oauth2 = o, grant = grant, client_auth = client_auth }
end

-- The form of one token request. `refresh`: a refresh token to use instead of the grant.
local function form_of(opts, refresh)
  local o = opts.oauth2
  local f = {}
  for k, v in pairs(o.params or {}) do f[k] = v end
  if refresh then
    f.grant_type, f.refresh_token = "refresh_token", refresh
  else
    f.grant_type = opts.grant
    if opts.grant == "password" then f.username, f.password = o.username, o.password end
    if opts.grant == "refresh_token" then f.refresh_token = o.refresh_token end
  end
  local scope = o.scope
  if type(scope) == "table" then scope = table.concat(scope, " ") end
  f.scope = scope
  if opts.client_auth == "body" or not o.client_secret then
    f.client_id, f.client_secret = o.client_id, o.client_secret
  end
  return f
end

-- The token endpoint's answer as an error: its error code and description (RFC 6749 §5.2),
-- never the request (it holds the client secret).
local function refusal(r)
  local ok, j = pcall(function() return r.json end)
  local what = ok and type(j) == "table" and type(j.error) == "string" and
    (j.error .. (type(j.error_description) == "string" and (" (" .. j.error_description .. ")") or "")) or nil
  return errors.new("auth", string.format("the token endpoint answered %d%s", r.status, what and (": " .. what) or ""),
    { url = r.url, status = r.status })
end

-- scheme://host:port, the default port filled in: what a redirect may not leave.
local function origin(u)
  local p = url.parse(u)
  return (p.scheme or "") .. "://" .. string.lower(p.host or "") .. ":" .. (p.port or (p.scheme == "https" and 443 or 80))
end

-- A Location as an absolute URL (RFC 3986 §5.2 for the shapes servers send).
local function resolve_location(base, loc)
  if loc:match("^%a[%w+.-]*:") then return loc end
  local p = url.parse(base)
  if loc:sub(1, 2) == "//" then return p.scheme .. ":" .. loc end
  local root = p.scheme .. "://" .. (p.host:find(":", 1, true) and ("[" .. p.host .. "]") or p.host) .. (p.port and (":" .. p.port) or "")
  if loc:sub(1, 1) == "/" then return root .. loc end
  return root .. ((p.path or ""):match("^(.*/)") or "/") .. loc
end

local MAX_HOPS = 5

--- POSTs a token request to `target`, following a redirect only within its origin and only
--- when it keeps the method and body (307, 308): the form holds the client's secret, and the
--- answer is a credential. A redirect to another origin is kind auth: no other host may mint
--- the token, nor see the request. Other redirects are the endpoint's answer (a refusal).
function M.post_within_origin(session, target, req)
  for _ = 0, MAX_HOPS do
    local r = session:request{ method = "POST", url = target, headers = req.headers, form = req.form,
                               follow = false, _unrecorded = true }
    local loc = r.headers["location"]
    if r.status < 300 or r.status > 399 or type(loc) ~= "string" then return r end
    local next_url = resolve_location(r.url, loc)
    local ok, same = pcall(function() return origin(next_url) == origin(r.url) end)
    if not ok or not same then
      error(errors.new("auth", string.format("the token endpoint redirected to another origin (%s): refused, the token request is not sent there",
        require("lunet.secrets").mask_url(next_url)), { url = r.url, status = r.status }), 0)
    end
    if r.status ~= 307 and r.status ~= 308 then return r end
    target = next_url
  end
  error(errors.new("auth", "the token endpoint redirected more than " .. MAX_HOPS .. " times", { url = target }), 0)
end

--- fetch(flow) for lunet.auth.token_flow: asks the token endpoint (through the session
--- token_session() gives) and returns the access token and its expires_in. A refresh token the
--- endpoint hands out is used for the next fetch (client credentials grants get none); when
--- the endpoint refuses it, the configured grant is tried once more.
function M.fetcher(opts, token_session)
  local o = opts.oauth2
  local refresh = opts.grant == "refresh_token" and o.refresh_token or nil
  local function ask(use_refresh)
    local headers = { Accept = "application/json" }
    if opts.client_auth == "basic" and o.client_secret then
      -- RFC 6749 §2.3.1: the id and secret form-encoded, then as Basic credentials.
      local pair = url.encode(o.client_id) .. ":" .. url.encode(o.client_secret)
      headers.Authorization = "Basic " .. require("lunet.base64").encode(pair)
    end
    return M.post_within_origin(token_session(), o.token_url, { headers = headers, form = form_of(opts, use_refresh) })
  end
  return function()
    local r = ask(refresh)
    -- A refresh token no longer good: the grant itself, unless the grant is that token.
    if refresh and r.status == 400 and opts.grant ~= "refresh_token" then r = ask(nil) end
    if r.status < 200 or r.status > 299 then error(refusal(r), 0) end
    local ok, j = pcall(function() return r.json end)
    if not ok or type(j) ~= "table" or type(j.access_token) ~= "string" then
      error(errors.new("auth", "the token endpoint's answer has no access_token", { url = r.url }), 0)
    end
    if type(j.refresh_token) == "string" and opts.grant ~= "client_credentials" then refresh = j.refresh_token end
    return j.access_token, tonumber(j.expires_in)
  end
end

return M
