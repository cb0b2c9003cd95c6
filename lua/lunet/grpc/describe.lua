--- A symbol as text, as grpcurl's `describe` shows it: a service with its methods in .proto
--- syntax, a method, or a message with its fields (read from the descriptors without a schema:
--- DescriptorProto's fields).
local protobuf = require "lunet.protobuf"
local errors = require "lunet.errors"

local M = {}

local function first(list) return type(list) == "table" and list[1] or nil end

local TYPES = { "double", "float", "int64", "uint64", "int32", "fixed64", "fixed32", "bool", "string", "group",
                "message", "bytes", "uint32", "enum", "sfixed32", "sfixed64", "sint32", "sint64" }

local function method_line(m)
  return string.format("rpc %s ( %s%s ) returns ( %s%s );", m.name, m.client_streaming and "stream " or "",
    m.input, m.server_streaming and "stream " or "", m.output)
end

-- The DescriptorProto of message `full` in the client's files, found by walking each file's
-- message_type (4) and nested_type (3).
local function find_message(client, full)
  for _, name in ipairs(client.descriptors.order) do
    local file = client.descriptors.files[name]
    local f = protobuf.decode(file.bytes)
    local prefix = first(f[2]) and (first(f[2]) .. ".") or ""
    local function walk(list, pre)
      for _, bytes in ipairs(list or {}) do
        local d = protobuf.decode(bytes)
        local n = pre .. (first(d[1]) or "")
        if n == full then return d end
        local found = walk(d[3], n .. ".")
        if found then return found end
      end
    end
    local d = walk(f[4], prefix)
    if d then return d end
  end
end

--- A service's methods by their full names ("pkg.Service.Method"), in the order declared: what
--- grpcurl's `list SERVICE` prints. An unknown service is kind argument.
function M.methods(client, service)
  service = service:gsub("^%.", "")
  if client.reflection then pcall(require("lunet.grpc.reflection").load_symbol, client, client.descriptors, service) end
  local found = client.descriptors.services[service]
  if not found then errors.raise("argument", "grpc: no service '" .. service .. "'") end
  local names = {}
  for i, n in ipairs(found.order) do names[i] = service .. "." .. n end
  return names
end

--- The text for `symbol`: "pkg.Service", "pkg.Service/Method" (or .Method) or "pkg.Message".
function M.symbol(client, symbol)
  symbol = symbol:gsub("^%.", "")
  if client.reflection then pcall(require("lunet.grpc.reflection").load_symbol, client, client.descriptors, (symbol:gsub("/.*$", ""))) end
  local service = client.descriptors.services[symbol]
  if service then
    local lines = { "service " .. symbol:match("([^.]+)$") .. " {  // " .. symbol }
    for _, n in ipairs(service.order) do lines[#lines + 1] = "  " .. method_line(service.methods[n]) end
    lines[#lines + 1] = "}"
    return table.concat(lines, "\n")
  end
  local m = client.descriptors:method(symbol)
  if m then return symbol .. " is a method:\n" .. method_line(m) end
  -- grpcurl's form of a method: package.Service.Method (a dot where lunet writes a slash)
  local service_name, method_name = symbol:match("^(.+)%.([^./]+)$")
  if service_name and not symbol:find("/", 1, true) then
    if client.reflection then pcall(require("lunet.grpc.reflection").load_symbol, client, client.descriptors, service_name) end
    local dotted = client.descriptors.services[service_name] and client.descriptors:method(service_name .. "/" .. method_name)
    if dotted then return service_name .. "/" .. method_name .. " is a method:\n" .. method_line(dotted) end
  end
  local d = find_message(client, symbol)
  if not d then errors.raise("argument", "grpc: no service, method or message named '" .. symbol .. "'") end
  local lines = { "message " .. symbol:match("([^.]+)$") .. " {  // " .. symbol }
  for _, fbytes in ipairs(d[2] or {}) do
    local f = protobuf.decode(fbytes)
    local t = first(f[6]) and (first(f[6]):gsub("^%.", "")) or TYPES[first(f[5]) or 0] or "?"
    lines[#lines + 1] = string.format("  %s%s %s = %d;", first(f[4]) == 3 and "repeated " or "", t, first(f[1]) or "?", first(f[3]) or 0)
  end
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n")
end

return M
