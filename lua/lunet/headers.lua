-- Header tables: look-ups ignore case (h["content-type"] == h["Content-Type"]), repeated fields
-- read as one value joined with ", " (RFC 9110 §5.3) or as a list with h:all(name), and the
-- fields keep the order they arrived in for printing (h:list()).
local runtime = require "lunet.runtime"
local setmetatable, getmetatable = runtime.setmetatable, runtime.getmetatable   -- the C ones (runtime.lua)

local Headers = {}
Headers.__name = "lunet.Headers"

local methods = {}
local order = setmetatable({}, { __mode = "k" })   -- headers table -> flat { n1, v1, n2, v2, ... }
local lower = string.lower

Headers.__index = function(h, k)
  if type(k) ~= "string" then return nil end
  local m = methods[k]
  if m then return m end
  return rawget(h, lower(k))
end

Headers.__newindex = function(h, k, v)
  if type(k) ~= "string" then error("header names are strings", 2) end
  rawset(h, lower(k), v)
  local flat = order[h]
  if flat then
    local kept = {}
    for i = 1, #flat, 2 do
      if lower(flat[i]) ~= lower(k) then kept[#kept + 1] = flat[i]; kept[#kept + 1] = flat[i + 1] end
    end
    if v ~= nil then kept[#kept + 1] = k; kept[#kept + 1] = tostring(v) end
    order[h] = kept
  end
end

--- Every value of a field, in order (Set-Cookie, Via, ...).
function methods.all(h, name)
  local out, flat, want = {}, order[h] or {}, lower(name)
  for i = 1, #flat, 2 do
    if lower(flat[i]) == want then out[#out + 1] = flat[i + 1] end
  end
  return out
end

--- The fields as a list of { name, value } in arrival order, names as sent.
function methods.list(h)
  local out, flat = {}, order[h] or {}
  for i = 1, #flat, 2 do out[#out + 1] = { flat[i], flat[i + 1] } end
  return out
end

local M = { Headers = Headers }

function M.from_flat(flat)
  local h = {}
  for i = 1, #flat, 2 do
    local k = lower(flat[i])
    local old = h[k]
    h[k] = old and (old .. ", " .. flat[i + 1]) or flat[i + 1]
  end
  setmetatable(h, Headers)
  order[h] = flat
  return h
end

function M.is(v) return getmetatable(v) == Headers end

return M
