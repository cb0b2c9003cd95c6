--- The document's security schemes as lunet's auth. `security` (http.openapi's option) gives a
--- credential per scheme name, or per kind (`bearer`, `basic`, `api_key`, `oauth2`) for every
--- scheme of that kind:
---   http bearer             a token                                  -> auth = { bearer = token }
---   http basic              { user, password }                       -> auth = { basic = ... }
---   apiKey in header/query  a key                                    -> auth = { api_key = { header|query = name, value } }
---   apiKey in cookie        a key                                    -> a Cookie header
---   oauth2 clientCredentials { client_id, client_secret [, scope] [, token_url] }  -> auth = { oauth2 = { token_url = the flow's tokenUrl, ... } }
--- (a fetched document's tokenUrl on another host than the document's is an error: the client
--- secret goes there only when the credential names it as `token_url`)
--- An operation takes the first of its requirements (its own `security`, else the document's)
--- whose every scheme has a credential; a session made for it (`session:with`, which shares
--- connections and cookies) is kept per requirement. Without credentials for any, the call goes
--- out with the api's own session (its `auth` option, if any) and the server answers.
local document = require "lunet.openapi.document"
local errors = require "lunet.errors"
local origin = require("lunet.url").origin
local mask_url = require("lunet.secrets").mask_url

local M = {}
local Security = {}
Security.__index = Security

local function schemes_of(set, version)
  local root = set.root
  if version == "2.0" then return root.securityDefinitions or {}, set.root_uri .. "#/securityDefinitions" end
  return (root.components or {}).securitySchemes or {}, set.root_uri .. "#/components/securitySchemes"
end

function M.new(set, version, creds)
  local schemes, where = schemes_of(set, version)
  return setmetatable({ set = set, version = version, creds = creds, schemes = schemes, where = where, sessions = {} }, Security)
end

-- The credential for scheme `name` (of type `s`): by its name, else by its kind.
function Security:credential(name, s)
  local c = self.creds[name]
  if c ~= nil then return c end
  local t = s.type
  if t == "http" then return self.creds[(s.scheme or ""):lower()] end
  if t == "basic" then return self.creds.basic end        -- Swagger 2.0
  if t == "apiKey" then return self.creds.api_key end
  if t == "oauth2" then return self.creds.oauth2 end
end

-- The token endpoint a document names for the client credentials flow. A document fetched from
-- one host that names a token endpoint on another would have the client's secret sent there:
-- that is an error until the user names the endpoint (`token_url` in the oauth2 credential). A
-- document read from a file, or an endpoint on the document's own origin, is taken as it is.
local function token_url(set, named, where)
  local from = set.root_uri:match("^https?://") and origin(set.root_uri)
  local to = origin(named)
  if from and to and to ~= from then
    errors.raise("openapi", string.format("%s: the document from %s names a token endpoint on %s, another host: the " ..
      "client secret goes only to an endpoint you name: give security.oauth2.token_url = %q to send it there",
      where, from, mask_url(to), mask_url(named)))
  end
  return named
end

-- What scheme `name` adds: into `auth` (the session's) or `extra` (headers for the request).
function Security:add(name, auth, extra)
  local s, _, where = self.set:deref(self.schemes[name], self.set.root_uri, self.where .. "/" .. name)
  if type(s) ~= "table" then document.fail(self.where, "the security requirement names scheme '%s', which is not defined", name) end
  local c = self:credential(name, s)
  if c == nil then return false end
  local t = s.type
  if (t == "http" and (s.scheme or ""):lower() == "bearer") or (t == "oauth2" and type(c) == "string") then auth.bearer = c
  elseif (t == "http" and (s.scheme or ""):lower() == "basic") or t == "basic" then
    auth.basic = type(c) == "string" and { c:match("^([^:]*):?(.*)$") } or c
  elseif t == "apiKey" then
    if s["in"] == "cookie" then extra.Cookie = (extra.Cookie and (extra.Cookie .. "; ") or "") .. s.name .. "=" .. c
    elseif next(auth) and s["in"] ~= "query" then extra[s.name] = c   -- a second credential in one requirement: a plain header
    else auth.api_key = { [s["in"] == "query" and "query" or "header"] = s.name, value = c } end
  elseif t == "oauth2" then
    local flow = (s.flows or {}).clientCredentials or (s.flow == "application" and s)
    if not flow then document.fail(where, "scheme '%s': lunet runs oauth2's client credentials flow only", name) end
    local o = { token_url = c.token_url or token_url(self.set, flow.tokenUrl, where), client_id = c.client_id or c[1],
                client_secret = c.client_secret or c[2], scope = c.scope }
    auth.oauth2 = o
  else
    document.fail(where, "scheme '%s' is of type '%s': lunet maps http (bearer, basic), apiKey and oauth2", name, tostring(t))
  end
  return true
end

--- The session for `op` (the api's own, or one with the first requirement that has every
--- credential) and the request headers the requirement adds (into opts.headers).
function Security:apply(op, opts, session)
  if next(self.creds) == nil then return session end
  for i, requirement in ipairs(op.security or {}) do
    local auth, extra, complete = {}, {}, true
    local names = {}
    for name in pairs(requirement) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do complete = complete and self:add(name, auth, extra) end
    if complete then
      if next(extra) then
        opts.headers = opts.headers or {}
        for k, v in pairs(extra) do opts.headers[k] = v end
      end
      if next(auth) == nil then return session end
      local key = table.concat(names, "\0")
      local s = self.sessions[key]
      if not s then
        local scheme, value = next(auth)
        s = session:with({ auth = { [scheme] = value } })
        self.sessions[key] = s
      end
      return s
    end
    if i == #op.security then break end
  end
  return session
end

return M
