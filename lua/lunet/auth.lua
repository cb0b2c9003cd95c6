-- A session's `auth` option (docs/http.md, "Authentication"): checked here and turned into what
-- runs it. Header schemes and libcurl's schemes go to the core as one flat table
-- { scheme =, user =, password =, ... }; token schemes (oauth2, fetch_token) are run in Lua by
-- lunet.auth.token_flow, which sets each request's Authorization.
local errors = require "lunet.errors"
local secrets = require "lunet.secrets"

local M = {}

M.SCHEMES = "{ bearer = token }, { basic = { user, password } }, { digest = { user, password } }, "
  .. "{ ntlm = { user, password } }, { negotiate = true }, { aws_sigv4 = { provider = \"aws:amz:REGION:SERVICE\", key =, secret =, token = } }, "
  .. "{ api_key = { header = NAME | query = NAME, value = } }, { oauth2 = { token_url =, client_id =, ... } } or { fetch_token = function(session) }"

local KNOWN = { bearer = true, basic = true, digest = true, ntlm = true, negotiate = true, aws_sigv4 = true,
                api_key = true, oauth2 = true, fetch_token = true }

local function bad(message) errors.raise("argument", message) end

-- { user, password } or { user =, password = }: the user and the password ("" when missing).
local function user_password(scheme, v)
  local user = type(v) == "table" and (v[1] or v.user)
  if type(user) ~= "string" then bad("auth." .. scheme .. " needs { user, password }") end
  local password = v[2] or v.password or ""
  if type(password) ~= "string" then bad("auth." .. scheme .. ": the password must be a string") end
  return user, password
end

local function field(scheme, t, name, want)
  local v = t[name]
  if v ~= nil and type(v) ~= want then bad(string.format("auth.%s.%s must be a %s, got %s", scheme, name, want, type(v))) end
  return v
end

local function aws_sigv4(v)
  if type(v) ~= "table" then bad("auth.aws_sigv4 takes { provider = \"aws:amz:REGION:SERVICE\", key =, secret =, token = }") end
  local provider = field("aws_sigv4", v, "provider", "string")
  if not provider or not provider:find("^[^:]+:[^:]+") then
    bad("auth.aws_sigv4.provider must be like \"aws:amz:us-east-1:s3\" (provider1:provider2:region:service)")
  end
  local key, secret, token = field("aws_sigv4", v, "key", "string"), field("aws_sigv4", v, "secret", "string"),
    field("aws_sigv4", v, "token", "string")
  -- The standard variables, as the AWS tools read them; the token only with the key it goes with.
  if key == nil and secret == nil then
    key, secret = os.getenv("AWS_ACCESS_KEY_ID"), os.getenv("AWS_SECRET_ACCESS_KEY")
    if token == nil then token = os.getenv("AWS_SESSION_TOKEN") end
  end
  if not key or key == "" or not secret or secret == "" then
    bad("auth.aws_sigv4 needs key and secret (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment)")
  end
  if token == "" then token = nil end
  return { scheme = "aws_sigv4", provider = provider, user = key, password = secret, token = token }
end

local function api_key(v)
  if type(v) ~= "table" then bad("auth.api_key takes { header = NAME, value = KEY } or { query = NAME, value = KEY }") end
  local header, query = field("api_key", v, "header", "string"), field("api_key", v, "query", "string")
  local value = field("api_key", v, "value", "string")
  if (header == nil) == (query == nil) then bad("auth.api_key needs one of header = NAME or query = NAME") end
  if not value then bad("auth.api_key needs value = KEY") end
  local name = header or query
  if name == "" or (header and not header:find("^[!#$%%&'*+%-.^_`|~%w]+$")) then
    bad("auth.api_key: '" .. name .. "' is not a field name")
  end
  -- Whatever it is called, its value is masked wherever lunet prints or records a request.
  secrets.declare_name(name)
  return { scheme = header and "api_key_header" or "api_key_query", name = name, value = value }
end

--- Checks a session's auth option. Returns the flat table the core reads (nil for token
--- schemes) and, for token schemes, the options of the token flow.
function M.check(auth)
  if auth == nil then return nil end
  if type(auth) ~= "table" then bad("option 'auth' takes " .. M.SCHEMES) end
  local scheme, value
  for k, v in pairs(auth) do
    if not KNOWN[k] then
      local hint = type(k) == "string" and require("lunet.suggest").closest(k, KNOWN)
      bad("unknown auth scheme '" .. tostring(k) .. "'" .. (hint and (" (did you mean '" .. hint .. "'?)") or "")
        .. "; option 'auth' takes " .. M.SCHEMES)
    end
    if scheme then bad("option 'auth' takes one scheme, got " .. scheme .. " and " .. k) end
    scheme, value = k, v
  end
  if not scheme then bad("option 'auth' takes " .. M.SCHEMES) end
  if scheme == "bearer" then
    if type(value) ~= "string" then bad("auth.bearer takes the token, a string") end
    return { scheme = "bearer", value = value }
  elseif scheme == "basic" or scheme == "digest" or scheme == "ntlm" then
    local user, password = user_password(scheme, value)
    return { scheme = scheme, user = user, password = password }
  elseif scheme == "negotiate" then
    if value ~= true then bad("auth.negotiate takes true (the credentials are your Kerberos ticket)") end
    return { scheme = "negotiate" }
  elseif scheme == "aws_sigv4" then
    return aws_sigv4(value)
  elseif scheme == "api_key" then
    return api_key(value)
  elseif scheme == "fetch_token" then
    if type(value) ~= "function" then bad("auth.fetch_token takes function(session) returning token, expires_in") end
    return nil, { fetch_token = value }
  end
  return nil, require("lunet.auth.oauth2").check(value)
end

-- What a token request may use of its session: how to reach the server, not the session's auth.
local CONNECTION_OPTIONS = { "base_url", "timeout", "connect_timeout", "proxy", "insecure", "ca_file", "http_version",
                             "cert", "cert_key", "cert_password" }

--- The token flow of `session` (lunet.auth.token_flow), from the options check() gave. A
--- derived session with the same auth shares its parent's flow (and so its token).
function M.flow(session, opts, parent)
  if parent and parent._auth_flow and parent._options.auth == session._options.auth then return parent._auth_flow end
  local bare
  -- A session with this one's connection options and no auth, for token requests: the
  -- session's own would wait for the token they are fetching.
  local function token_session()
    if not bare then
      local o = {}
      for _, k in ipairs(CONNECTION_OPTIONS) do o[k] = session._options[k] end
      bare = require("lunet.http").session(o)
    end
    return bare
  end
  local fetch
  if opts.fetch_token then
    local user_fetch = opts.fetch_token
    fetch = function() return user_fetch(token_session()) end
  else
    fetch = require("lunet.auth.oauth2").fetcher(opts, token_session)
  end
  return require("lunet.auth.token_flow").new(session, fetch)
end

--- The auth option as a session file keeps it: functions cannot be written (nil then).
function M.storable(auth)
  if type(auth) == "table" and auth.fetch_token then return nil end
  return auth
end

return M
