-- Request and response serializers, after AFNetworking 2: a request serializer turns
-- parameters into a body (and a Content-Type); a response serializer turns a response into a
-- value or raises. Each has one job; sessions name them.
local errors = require "lunet.errors"
local json = require "lunet.json"
local url = require "lunet.url"
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)

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

-- multipart/form-data: curl builds the body and streams file parts from disk.
M.request.multipart = { multipart = true, content_type = "multipart/form-data" }

local function basename(path) return (string.match(path, "[^/]*$")) end

--- The parts of a multipart body, as core.send reads them. `t` maps names to values: a string
--- or number (a field), { file = path [, filename, content_type] } (streamed from disk; the
--- filename defaults to the file's name) or { data = bytes [, filename, content_type] }.
--- Names are sent in sorted order; a list of { name = ..., ... } parts keeps its order.
function M.multipart_parts(t)
  local parts = {}
  local function add(name, v)
    local tv = type(v)
    if tv == "string" or tv == "number" or tv == "boolean" then
      parts[#parts + 1] = { name = name, data = tostring(v) }
    elseif tv == "table" and v.file ~= nil then
      if type(v.file) ~= "string" then errors.raise("argument", "multipart part '" .. name .. "': file must be a path string") end
      parts[#parts + 1] = { name = name, file = v.file, filename = v.filename or basename(v.file), content_type = v.content_type }
    elseif tv == "table" and v.data ~= nil then
      parts[#parts + 1] = { name = name, data = tostring(v.data), filename = v.filename, content_type = v.content_type }
    else
      errors.raise("argument", "multipart part '" .. tostring(name) .. "' must be a string, a number, { file = path } or { data = bytes }, got " .. tv)
    end
  end
  if #t > 0 then
    for i, part in ipairs(t) do
      if type(part) ~= "table" or type(part.name) ~= "string" then errors.raise("argument", "multipart list item " .. i .. " needs a name") end
      add(part.name, part)
    end
  else
    local names = {}
    for k in pairs(t) do
      if type(k) ~= "string" then errors.raise("argument", "multipart part names are strings, got " .. type(k)) end
      names[#names + 1] = k
    end
    table.sort(names)
    for _, k in ipairs(names) do add(k, t[k]) end
  end
  return parts
end

-- Response serializers: decode(body, response) -> value.
M.response.json = { decode = function(_, r) return r.json end }
M.response.text = { decode = function(_, r) return r.text end }
M.response.bytes = { decode = function(body) return body end }
M.response.image = { decode = function(body) return require("lunet.image").decode(body) end }
M.response.xml = { decode = function(_, r) return core.response_xml(r._raw) end }
M.response.protobuf = { decode = function(_, r) return core.response_protobuf(r._raw) end }
-- The media types each accepts (AFNetworking's acceptableContentTypes): a compound serializer
-- tries first those that accept the response's Content-Type. "+json" is any type with that
-- structured suffix (RFC 6839: application/problem+json).
M.response.json.content_types = { "application/json", "text/json", "+json" }
M.response.text.content_types = { "text/*" }
M.response.xml.content_types = { "application/xml", "text/xml", "+xml" }
M.response.image.content_types = { "image/*" }
M.response.protobuf.content_types = { "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf" }
M.request.xml = { content_type = "application/xml", encode = function(element) return require("lunet.xml").encode(element) end }
M.request.protobuf = { content_type = "application/x-protobuf", encode = function(fields) return require("lunet.protobuf").encode(fields) end }

--- Registers a serializer under `name` for requests (when it has `encode`) and responses (when
--- it has `decode`): { content_type = "...", encode = function(value) return bytes end,
--- decode = function(body, response) return value end }.
function M.register(name, spec)
  if type(name) ~= "string" or name == "" then errors.argument(1, "register", "a serializer name expected") end
  if type(spec) ~= "table" or (spec.encode == nil and spec.decode == nil) then
    errors.argument(2, "register", "a table with encode and/or decode functions expected")
  end
  if spec.encode ~= nil and type(spec.encode) ~= "function" then errors.argument(2, "register", "encode must be a function") end
  if spec.decode ~= nil and type(spec.decode) ~= "function" then errors.argument(2, "register", "decode must be a function") end
  if spec.encode then
    if type(spec.content_type) ~= "string" then errors.argument(2, "register", "a request serializer needs a content_type") end
    M.request[name] = { content_type = spec.content_type, encode = spec.encode }
  end
  if spec.content_types ~= nil and type(spec.content_types) ~= "table" then
    errors.argument(2, "register", "content_types must be a list of media types")
  end
  if spec.decode then
    M.response[name] = { decode = spec.decode, content_type = spec.content_type,
                         content_types = spec.content_types or (spec.content_type and { spec.content_type }) }
  end
end

--- Whether a response serializer accepts a Content-Type: one of its content_types is the
--- media type, "type/*" of its type, "*/*", or "+suffix" of its structured suffix. A serializer
--- that names none accepts none (a compound tries it only after those that do).
function M.accepts(ser, content_type)
  local types = ser.content_types
  if not types then return false end
  -- The first media type: a field sent twice arrives joined with ", " (its first one counts).
  local mime = string.lower(string.match(content_type or "", "^%s*([^;,%s]+)") or "")
  if mime == "" then return false end
  for _, want in ipairs(types) do
    want = string.lower(want)
    if want == mime or want == "*/*" then return true end
    local major = string.match(want, "^([^/]+)/%*$")
    if major and string.match(mime, "^([^/]+)/") == major then return true end
    if string.sub(want, 1, 1) == "+" and string.sub(mime, -#want) == want then return true end
  end
  return false
end

-- A compound response serializer, as AFNetworking's: the serializers that accept the
-- response's Content-Type decode first, in the list's order; then the others, in order. The
-- first to decode wins; when none does, the error of the first tried.
local function compound(list)
  return { decode = function(body, r)
    local content_type = r.headers["content-type"]
    local first_err
    local tried = {}
    for pass = 1, 2 do
      for i, ser in ipairs(list) do
        if not tried[i] and (pass == 2 or M.accepts(ser, content_type)) then
          tried[i] = true
          local ok, v = pcall(ser.decode, body, r)
          if ok then return v end
          first_err = first_err or v
        end
      end
    end
    error(first_err, 0)
  end }
end

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
  if kind == "response" and type(spec) == "table" and spec.decode == nil and #spec > 0 then
    local list = {}
    for i, one in ipairs(spec) do list[i] = M.find("response", one, where) end
    return compound(list)
  end
  if type(spec) == "table" and (spec.encode or spec.decode) then return spec end
  errors.raise("argument", string.format("%s serializer in %s must be a name or a table with %s", kind, where, kind == "request" and "encode" or "decode"))
end

return M
