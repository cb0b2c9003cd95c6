--- Server reflection (grpc.reflection.v1, else v1alpha): the services a server offers, and the
--- descriptors of the files that define a symbol, with the files they import. The protocol is a
--- bidirectional stream; lunet sends its requests, half-closes, and reads one answer to each.
--- Its messages are read and written without a schema (field numbers of reflection.proto).
local protobuf = require "lunet.protobuf"
local errors = require "lunet.errors"
local call = require "lunet.grpc.call"

local M = {}

local SERVICES = { "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection" }

local function first(list) return type(list) == "table" and list[1] or nil end

-- The answers to `requests` (tables keyed by ServerReflectionRequest's field numbers), from
-- the first reflection service the server has.
local function ask(client, requests)
  local bodies = {}
  for i, req in ipairs(requests) do bodies[i] = protobuf.encode(req) end
  local last
  for _, service in ipairs(client.reflection_service and { client.reflection_service } or SERVICES) do
    local method = { service = service, name = "ServerReflectionInfo", path = "/" .. service .. "/ServerReflectionInfo", server_streaming = true }
    local ok, answers = pcall(function()
      local c = call.open(client, method, bodies, { deadline = client.deadline or 10 })
      local out = {}
      for bytes in function() return call.next(c) end do out[#out + 1] = protobuf.decode(bytes) end
      return out
    end)
    if ok then
      client.reflection_service = service
      return answers
    end
    last = answers
    if not (errors.is(answers) and answers.code == "UNIMPLEMENTED") then break end
  end
  error(errors.new(errors.is(last) and last.kind or "grpc", "server reflection: " .. errors.describe(last), { cause = last }), 0)
end

-- A reflection answer's error (ErrorResponse, field 7), raised.
local function check(answer, what)
  local e = first(answer[7])
  if e then
    local er = protobuf.decode(e)
    errors.raise("argument", string.format("server reflection: %s: %s", what, first(er[2]) or ("error " .. tostring(first(er[1])))))
  end
end

--- The names of the services the server offers.
function M.services(client)
  local answers = ask(client, { { [7] = { "*" } } })
  local answer = answers[1] or {}
  check(answer, "list_services")
  local names = {}
  for _, s in ipairs(protobuf.decode(first(answer[6]) or "")[1] or {}) do names[#names + 1] = first(protobuf.decode(s)[1]) end
  table.sort(names)
  return names
end

-- Adds the FileDescriptorProtos of an answer (FileDescriptorResponse, field 4).
local function add_files(descriptors, answer)
  local fr = first(answer[4])
  if not fr then return end
  for _, bytes in ipairs(protobuf.decode(fr)[1] or {}) do descriptors:add_file(bytes) end
end

--- Adds to `descriptors` the files that define `symbol` (a service, a method's service, a
--- message), then any file they import that the server did not send with them.
function M.load_symbol(client, descriptors, symbol)
  local answers = ask(client, { { [4] = { symbol } } })
  check(answers[1] or {}, "symbol " .. symbol)
  add_files(descriptors, answers[1])
  for _ = 1, 8 do   -- imports of imports: a few rounds at most
    local missing = descriptors:missing()
    if #missing == 0 then return end
    local requests = {}
    for i, name in ipairs(missing) do requests[i] = { [3] = { name } } end
    local more = ask(client, requests)
    for i, answer in ipairs(more) do
      check(answer, "file " .. tostring(missing[i]))
      add_files(descriptors, answer)
    end
  end
end

return M
