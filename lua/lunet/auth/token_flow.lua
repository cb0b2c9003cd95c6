-- Access tokens a session fetches itself (auth.oauth2, auth.fetch_token): each request waits
-- for a live token and carries it as `Authorization: Bearer TOKEN`.
--
-- - The token is kept until shortly before it expires (expires_in less a tenth, at most 30 s:
--   a request sent just before the end would arrive with a dead token).
-- - One fetch at a time: requests that need a token while one is being fetched wait for that
--   fetch (its task), so a burst of requests costs one token request.
-- - A 401 whose WWW-Authenticate says Bearer error="invalid_token" (RFC 6750 §3.1: expired or
--   revoked early) drops the token, fetches another once and sends the request again, once.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"
local task = require "lunet.task"

local M = {}

local Flow = {}
Flow.__index = Flow

--- A flow for `session`. fetch(flow) runs in a coroutine of its own (it may await requests)
--- and returns token, expires_in (seconds, or nil when the token does not say).
function M.new(session, fetch)
  return setmetatable({ session = session, fetch = fetch, token = nil, fresh_until = nil, pending = nil }, Flow)
end

-- A token goes into a header field (Authorization: Bearer TOKEN): one a server handed over
-- must not carry what would end that field (request splitting), and must fit in a request.
-- RFC 6750's b64token is far narrower; only what breaks the request is refused here.
M.MAX_TOKEN = 64 * 1024

--- Why `token` cannot be sent, or nil.
function M.token_problem(token)
  if token:find("[\r\n]") then return "holds a line break (CR or LF)" end
  if token:find("\0", 1, true) then return "holds a NUL byte" end
  if #token > M.MAX_TOKEN then
    return string.format("is %d bytes, more than a request header can carry here (%d)", #token, M.MAX_TOKEN)
  end
  return nil
end

local function margin(expires_in) return math.min(30, expires_in / 10) end

-- A task of a live token: the kept one, the one being fetched, or a new fetch.
function Flow:token_async()
  if self.token and (not self.fresh_until or core.now() < self.fresh_until) then return task.resolved(self.token) end
  if self.pending then return self.pending end
  local src = task.source()
  self.pending = src.task
  self.token = nil
  task._start(function() return table.pack(self.fetch(self)) end):continue(function(run)
    self.pending = nil
    if run.state ~= "done" then
      local e = run.error
      if run.state == "cancelled" then e = errors.new("cancelled", "the token fetch was cancelled") end
      if not errors.is(e) then e = errors.new("auth", "fetch_token failed: " .. errors.describe(e)) end
      src:reject(e)
      return
    end
    local token, expires_in = run.result[1], run.result[2]
    if type(token) ~= "string" or token == "" then
      src:reject(errors.new("auth", "fetch_token returned " .. type(token) .. ", not a token string"))
      return
    end
    local problem = M.token_problem(token)
    if problem then
      src:reject(errors.new("auth", "the access token " .. problem .. ": refused, no request was sent with it"))
      return
    end
    expires_in = tonumber(expires_in)
    self.token = token
    self.fresh_until = expires_in and (core.now() + expires_in - margin(expires_in)) or nil
    src:resolve(token)
  end)
  return src.task
end

--- Forgets `token` (a server refused it), unless a newer one has replaced it already.
function Flow:drop(token)
  if self.token == token then self.token = nil end
end

-- Whether a response says its token was refused as invalid (expired, revoked).
local function refused(r)
  if not r or r.status ~= 401 then return false end
  local challenge = r.headers and r.headers["www-authenticate"]
  if type(challenge) == "table" then challenge = table.concat(challenge, ", ") end
  challenge = string.lower(challenge or "")
  return challenge:find("bearer", 1, true) ~= nil and challenge:find("error%s*=%s*\"?invalid_token") ~= nil
end

local function with_token(req, token)
  local r = {}
  for k, v in pairs(req) do r[k] = v end
  local headers = {}
  for k, v in pairs(req.headers or {}) do headers[k] = v end
  headers.Authorization = "Bearer " .. token
  r.headers = headers
  r._authorized = true
  return r
end

--- Sends `req` with a token through send(req) (a task of the response); a task of the
--- response, or of the error.
function Flow:send_async(req, send)
  local outer = task.new()
  outer.url = req.url
  local sending   -- the request's own task (the token's may be other requests' too: not cancelled)
  local function attempt(again)
    self:token_async():continue(function(got)
      if outer.state ~= "pending" then return end
      if got.state ~= "done" then
        local e = got.error
        if errors.is(e) then e.url = e.url or req.url end
        task._reject(outer, e, got.traceback)
        return
      end
      local token = got.result
      sending = send(with_token(req, token))
      sending:continue(function(t)
        if outer.state ~= "pending" then return end
        if t.state == "cancelled" then task._cancel(outer) return end
        local r = t.state == "done" and t.result or (type(t.error) == "table" and t.error.response or nil)
        if not again and refused(r) then
          self:drop(token)
          attempt(true)
        elseif t.state == "done" then
          task._resolve(outer, t.result)
        else
          task._reject(outer, t.error, t.traceback)
        end
      end)
    end)
  end
  outer:_on_cancel_do(function() if sending then sending:cancel() end end)
  attempt(false)
  return outer
end

return M
