--- What a gRPC client needs from descriptors: the services and their methods (which message
--- goes in and out, which side streams), read from FileDescriptorProtos without a schema (the
--- field numbers of descriptor.proto), and the message schema (protobuf.load) made of the same
--- files. Files come from a descriptor set (protoc --descriptor_set_out --include_imports),
--- from server reflection, or both.
local protobuf = require "lunet.protobuf"
local errors = require "lunet.errors"

local M = {}

local function first(list) return type(list) == "table" and list[1] or nil end

-- FileDescriptorProto: name 1, package 2, dependency 3, service 6.
-- ServiceDescriptorProto: name 1, method 2. MethodDescriptorProto: name 1, input_type 2,
-- output_type 3, client_streaming 5, server_streaming 6.
local function read_file(bytes)
  local f = protobuf.decode(bytes)
  local file = { name = first(f[1]) or "", package = first(f[2]), dependencies = f[3] or {}, services = {}, bytes = bytes }
  for _, sbytes in ipairs(f[6] or {}) do
    local s = protobuf.decode(sbytes)
    local name = (file.package and file.package ~= "" and (file.package .. ".") or "") .. (first(s[1]) or "")
    local service = { name = name, methods = {}, order = {} }
    for _, mbytes in ipairs(s[2] or {}) do
      local m = protobuf.decode(mbytes)
      local method = {
        name = first(m[1]), service = name, input = (first(m[2]) or ""):gsub("^%.", ""), output = (first(m[3]) or ""):gsub("^%.", ""),
        client_streaming = first(m[5]) == 1, server_streaming = first(m[6]) == 1,
      }
      method.path = "/" .. name .. "/" .. method.name
      service.methods[method.name] = method
      service.order[#service.order + 1] = method.name
    end
    file.services[#file.services + 1] = service
  end
  return file
end

--- A set of descriptors: add files (their bytes), then look up services and methods.
function M.new()
  return setmetatable({ files = {}, order = {}, services = {}, schema = nil }, { __index = M })
end

--- Adds a FileDescriptorProto's bytes (once per file name).
function M:add_file(bytes)
  local file = read_file(bytes)
  if self.files[file.name] then return file end
  self.files[file.name] = file
  self.order[#self.order + 1] = file.name
  for _, s in ipairs(file.services) do self.services[s.name] = s end
  self.schema = nil
  return file
end

--- Adds every file of a FileDescriptorSet's bytes.
function M:add_set(bytes)
  local ok, set = pcall(protobuf.decode, bytes)
  if not ok or type(set) ~= "table" then errors.raise("argument", "not a FileDescriptorSet: " .. errors.describe(set)) end
  for _, fbytes in ipairs(set[1] or {}) do self:add_file(fbytes) end
end

--- The names of the files the set's files import that it does not hold.
function M:missing()
  local out = {}
  for _, name in ipairs(self.order) do
    for _, dep in ipairs(self.files[name].dependencies) do
      if not self.files[dep] then out[#out + 1] = dep end
    end
  end
  return out
end

--- The message schema (lunet's protobuf) of every file added so far.
function M:messages()
  if not self.schema then
    local list = {}
    for i, name in ipairs(self.order) do list[i] = self.files[name].bytes end
    self.schema = protobuf.load(protobuf.encode({ [1] = list }))
  end
  return self.schema
end

--- The method `full` names ("pkg.Service/Method" or "pkg.Service.Method"), or nil and why.
function M:method(full)
  local service_name, method_name = full:match("^/?(.+)/([^/]+)$")
  if not service_name then service_name, method_name = full:match("^(.+)%.([^.]+)$") end
  local service = service_name and self.services[service_name]
  if not service then
    local names = {}
    for n in pairs(self.services) do names[#names + 1] = n end
    table.sort(names)
    return nil, string.format("no service '%s' (services: %s)", tostring(service_name or full), table.concat(names, ", "))
  end
  local m = service.methods[method_name]
  if not m then
    return nil, string.format("%s has no method '%s' (its methods: %s)", service.name, method_name, table.concat(service.order, ", "))
  end
  return m
end

return M
