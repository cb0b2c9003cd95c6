--- gRPC's status codes and the errors a non-OK status becomes: kind `grpc` with `code` (its
--- name: "UNAVAILABLE", "DEADLINE_EXCEEDED", ...), `status` (its number), `message`
--- (grpc-message, percent-decoded), `details` (google.rpc.Status from
--- grpc-status-details-bin, decoded without a schema: code, message, and each detail's type_url
--- and raw value), and the response's `headers` and `trailers`.
local core = require "lunet.core"
local errors = require "lunet.errors"

local M = {}

M.NAMES = { [0] = "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
  "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
  "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED" }

local function first(list) return type(list) == "table" and list[1] or nil end

-- google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3 }
local function details(bin)
  local bytes = bin and require("lunet.base64").decode(bin)
  if not bytes then return nil end
  local ok, t = pcall(require("lunet.protobuf").decode, bytes)
  if not ok then return nil end
  local out = { code = first(t[1]), message = first(t[2]), details = {} }
  for _, any in ipairs(t[3] or {}) do
    local ok2, a = pcall(require("lunet.protobuf").decode, any)
    if ok2 then out.details[#out.details + 1] = { type_url = first(a[1]), value = first(a[2]) or "" } end
  end
  return out
end

--- One field of a response's head (or its trailers), as r.headers[name] gives it, without
--- making the table of them all (core.response_field) when the response has its core object.
function M.field(r, name, trailers)
  local raw = rawget(r, "_raw")
  if raw then return core.response_field(raw, name, trailers == true) end
  local t = trailers and r.trailers or r.headers
  return t and t[name]
end

--- The call's status from a response (trailers, or the head of a trailers-only answer):
--- nil when OK, else the error object. `what` names the call in the message.
function M.error_of(r, what)
  local code = tonumber(M.field(r, "grpc-status", true) or M.field(r, "grpc-status"))
  if code == 0 then return nil end   -- the answer of nearly every call: no table of its fields made
  local fields = r.trailers and r.trailers["grpc-status"] and r.trailers or r.headers
  if code == nil then
    return errors.new("protocol", what .. ": the response has no grpc-status (HTTP " .. tostring(r.status) .. ")", { response = r })
  end
  local message = (fields["grpc-message"] or ""):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  local name = M.NAMES[code] or ("CODE_" .. code)
  return errors.new("grpc", string.format("%s: %s%s", what, name, message ~= "" and (": " .. message) or ""), {
    code = name, status = code, grpc_message = message, details = details(fields["grpc-status-details-bin"]),
    headers = r.headers, trailers = r.trailers, response = r,
  })
end

return M
