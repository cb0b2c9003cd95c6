--- gRPC's status codes and the errors a non-OK status becomes: kind `grpc` with `code` (its
--- name: "UNAVAILABLE", "DEADLINE_EXCEEDED", ...), `status` (its number), `message`
--- (grpc-message, percent-decoded), `details` (google.rpc.Status from
--- grpc-status-details-bin, decoded without a schema: code, message, and each detail's type_url
--- and raw value), and the response's `headers` and `trailers`.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
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

--- A grpc-status value as gRPC's wire format has it: 1*DIGIT (gRPC over HTTP/2, "Status").
--- The number, or nil with the reason for anything else ("0x0", "0.5", "1e300", "-1", "",
--- a number past 32 bits), which is no status code at all.
function M.parse_code(text)
  if type(text) ~= "string" or not text:match("^%d+$") then return nil, "not a status code" end
  local digits = text:gsub("^0+(%d)", "%1")
  if #digits > 10 then return nil, "too large a status code" end
  return math.tointeger(tonumber(digits))
end

--- The call's status from a response (trailers, or the head of a trailers-only answer):
--- nil when OK, else the error object. `what` names the call in the message. A code past the
--- sixteen gRPC defines is UNKNOWN, as gRPC's clients read it; a value that is not a code is
--- kind protocol.
function M.error_of(r, what)
  local text = M.field(r, "grpc-status", true) or M.field(r, "grpc-status")
  if text == "0" then return nil end   -- the answer of nearly every call: no table of its fields made
  local fields = r.trailers and r.trailers["grpc-status"] and r.trailers or r.headers
  if text == nil then
    return errors.new("protocol", what .. ": the response has no grpc-status (HTTP " .. tostring(r.status) .. ")", { response = r })
  end
  local code, problem = M.parse_code(text)
  if code == nil then
    return errors.new("protocol", string.format("%s: the response's grpc-status %s is %s", what,
      require("lunet.terminal_safe").text(string.format("%q", text:sub(1, 40))), problem), { response = r })
  end
  if code == 0 then return nil end
  local message = (fields["grpc-message"] or ""):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  if not M.NAMES[code] then
    message = string.format("unknown status code %d%s", code, message ~= "" and (": " .. message) or "")
    code = 2
  end
  local name = M.NAMES[code]
  return errors.new("grpc", string.format("%s: %s%s", what, name, message ~= "" and (": " .. message) or ""), {
    code = name, status = code, grpc_message = message, details = details(fields["grpc-status-details-bin"]),
    headers = r.headers, trailers = r.trailers, response = r,
  })
end

return M
