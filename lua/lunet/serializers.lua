-- Request and response serializers, after AFNetworking 2: a request serializer turns
-- parameters into a body (and a Content-Type); a response serializer turns a response into a
-- value or raises. Each has one job; sessions name them.
local errors = require "lunet.errors"
local json = require "lunet.json"
local url = require "lunet.url"

local M = { request = {}, response = {} }

-- Request serializers: encode(params) -> bytes, content_type.
M.request.json = {
  content_type = "application/json",
  encode = function(params) return json.encode(params) end,
}
M.request.form = {
  content_type = "application/x-www-form-urlencoded",
  encode = function(params) return url.query(params) end,
}

-- Response serializers: decode(body, response) -> value.
M.response.json = { decode = function(_, r) return r.json end }
M.response.text = { decode = function(_, r) return r.text end }
M.response.bytes = { decode = function(body) return body end }

--- The serializer named or given (a table with encode/decode, or a function for responses).
function M.find(kind, spec, where)
  if spec == nil then return nil end
  if type(spec) == "string" then
    local s = M[kind][spec]
    if not s then
      local known = {}
      for name in pairs(M[kind]) do known[#known + 1] = name end
      table.sort(known)
      errors.raise("argument", string.format("unknown %s serializer '%s' in %s (known: %s)", kind, spec, where, table.concat(known, ", ")))
    end
    return s
  end
  if type(spec) == "function" and kind == "response" then return { decode = spec } end
  if type(spec) == "table" and (spec.encode or spec.decode) then return spec end
  errors.raise("argument", string.format("%s serializer in %s must be a name or a table with %s", kind, where, kind == "request" and "encode" or "decode"))
end

return M
