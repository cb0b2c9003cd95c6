-- Building the request table core.send reads from a session and a user's options, and what a
-- finished response goes through (validation, then the response serializer).
local errors = require "lunet.errors"
local url = require "lunet.url"
local json = require "lunet.json"
local serializers = require "lunet.serializers"
local options = require "lunet.http.options"

local M = {}

function M.has_header(hs, name)
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
function M.build(session, opts)
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
  if content_type and not M.has_header(headers, "Content-Type") then headers["Content-Type"] = content_type end

  return {
    method = method, url = target, headers = headers, session_headers = session.headers, body = body,
    multipart = multipart,
    timeout = opts.timeout, connect_timeout = opts.connect_timeout, follow = opts.follow,
    max_redirects = opts.max_redirects, max_body = options.parse_size(opts.max_body, "max_body"),
    insecure = opts.insecure, ca_file = opts.ca_file, proxy = opts.proxy,
    http_version = opts.http_version, decompress = opts.decompress,
    cert = opts.cert, cert_key = opts.cert_key, cert_password = opts.cert_password,
    netrc_file = opts.netrc ~= nil and options.netrc_file(opts.netrc) or nil,
    download = opts._download, progress = opts._progress, stream = opts._stream or opts.on_chunk ~= nil,
    events_handler = opts._on_events or (opts.on_chunk and chunks_to(opts.on_chunk)),
    upload_file = opts._upload_file, cache_policy = opts.cache, record_head = opts._record_head,
    offline_miss_504 = offline_miss_504(opts.offline_miss), long_lived = opts._long_lived, send_stream = opts._send_stream,
    _grpc_max_message = opts._grpc_max_message,
  }
end

-- What a finished response goes through: validation, then the response serializer.
function M.finish(session, opts, r)
  local rule = opts.accept_status
  if rule == nil then rule = session._accept_status end
  if not options.status_accepted(rule, r.status) then
    errors.raise("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r, status = r.status })
  end
  local accept = opts.accept_types
  if accept == nil then accept = session._accept_types end
  if accept and not options.type_accepted(accept, r.headers["content-type"]) then
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


return M
