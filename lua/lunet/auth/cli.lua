-- The one-shot command line's auth: -A/--auth-type with -a/--auth (and --aws-sigv4) made into a
-- session's auth option, the curl flags --curl prints for it, and the checks a named session
-- must pass for -A oauth2. docs/cli.md ("Authentication") describes the options.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local secrets = require "lunet.secrets"

local M = {}

M.TYPES = "basic, bearer, digest, ntlm, negotiate, aws-sigv4, api-key or oauth2"

-- USER:PASS, or USER and the password asked for on the terminal (as HTTPie does).
local function user_password(o, host)
  local user, pass = o.auth:match("^([^:]*):(.*)$")
  user = user or o.auth
  if not pass then
    local err
    pass, err = core.read_secret(string.format("lunet: password for %s@%s: ", user, host))
    if not pass then return nil, nil, "--auth " .. user .. ": no password given and " .. err end
  end
  return user, pass
end

--- The session's auth option from the command line's options; nil when none is asked for, or
--- nil and a usage error.
function M.options(o, host)
  local kind = o["auth-type"] or (o["aws-sigv4"] and "aws-sigv4") or (o.auth and "basic")
  if not kind then return nil end
  if o["aws-sigv4"] and kind ~= "aws-sigv4" then return nil, "--aws-sigv4 goes with --auth-type aws-sigv4" end
  local needs_auth = kind ~= "negotiate" and kind ~= "aws-sigv4" and kind ~= "oauth2"
  if needs_auth and not o.auth then return nil, "--auth-type " .. kind .. " needs --auth" end
  if kind == "bearer" then
    return { bearer = o.auth }
  elseif kind == "basic" or kind == "digest" or kind == "ntlm" then
    local user, pass, err = user_password(o, host)
    if not user then return nil, err end
    return { [kind] = { user, pass } }
  elseif kind == "negotiate" then
    if o.auth and o.auth ~= ":" then return nil, "--auth-type negotiate takes no --auth: your Kerberos ticket is the credential" end
    return { negotiate = true }
  elseif kind == "aws-sigv4" then
    if not o["aws-sigv4"] then return nil, "--auth-type aws-sigv4 needs --aws-sigv4 PROVIDER (aws:amz:REGION:SERVICE)" end
    local a = { provider = o["aws-sigv4"] }
    -- -a KEY:SECRET as curl takes it; without it, the AWS_* environment variables.
    if o.auth then
      a.key, a.secret = o.auth:match("^([^:]+):(.+)$")
      if not a.key then return nil, "--auth-type aws-sigv4 takes --auth KEY:SECRET" end
    end
    return { aws_sigv4 = a }
  elseif kind == "api-key" then
    -- NAME:KEY for a header, NAME==KEY for a query parameter, as request items are written.
    local name, value = o.auth:match("^([^=:]+)==(.*)$")
    if name then return { api_key = { query = name, value = value } } end
    name, value = o.auth:match("^([^=:]+):(.*)$")
    if name then return { api_key = { header = name, value = value } } end
    return nil, "--auth-type api-key takes --auth NAME:KEY (a header) or NAME==KEY (a query parameter)"
  elseif kind == "oauth2" then
    if o.auth then return nil, "--auth-type oauth2 takes its client settings from the session file (--session), not --auth" end
    if not (o.session or o["session-read-only"]) then
      return nil, "--auth-type oauth2 needs --session NAME: its file holds the client settings (auth = { oauth2 = {...} })"
    end
    return nil   -- the session file's auth
  end
  return nil, string.format("--auth-type=%s: use %s", kind, M.TYPES)
end

--- A usage error when the session cannot do what -A asked (oauth2 without its settings).
function M.check_session(o, session)
  if o["auth-type"] ~= "oauth2" then return nil end
  local auth = session._options.auth
  if type(auth) ~= "table" or type(auth.oauth2) ~= "table" then
    return "--auth-type oauth2: session " .. (session._store and session._store.path or "?")
      .. " has no auth = { oauth2 = { token_url =, client_id =, ... } }"
  end
end

--- What --curl needs of the session's auth, as response.curl_flags takes it (settings filled
--- in), and the flags of what curl has no option for (a bearer token the session would fetch).
function M.curl_settings(auth, settings)
  local extra = {}
  if type(auth) ~= "table" then return extra end
  for _, kind in ipairs({ "digest", "ntlm" }) do
    if auth[kind] then settings[kind] = { user = auth[kind][1] } end
  end
  if auth.negotiate then settings.negotiate = { user = "" } end
  if auth.aws_sigv4 then settings.aws_sigv4 = { provider = auth.aws_sigv4.provider, key = auth.aws_sigv4.key } end
  if auth.oauth2 or auth.fetch_token then
    extra[1] = "-H " .. require("lunet.response").shell_quote("Authorization: Bearer " .. secrets.MASK)
  end
  return extra
end

--- For --offline and --curl, which show the request without sending it: the API key as the
--- session would add it (the request's own field or parameter wins). q: the built request;
--- opts: its session:request options.
function M.show_api_key(q, opts, auth)
  local key = type(auth) == "table" and auth.api_key
  if not key then return end
  if key.header then
    for name in pairs(opts.headers) do if name:lower() == key.header:lower() then return end end
    opts.headers[key.header] = key.value
  elseif not q.url:find("[?&]" .. key.query:gsub("%p", "%%%0") .. "=") then
    local u = require "lunet.url"
    local before, fragment = q.url:match("^([^#]*)(.*)$")
    q.url = before .. (before:find("?", 1, true) and "&" or "?") .. u.encode(key.query) .. "=" .. u.encode(key.value) .. fragment
    opts.url = q.url
  end
end

return M
