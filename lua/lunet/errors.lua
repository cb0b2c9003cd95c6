-- Error objects. Every failure lunet raises is a table with `kind`, `message`, `url` (and
-- `response` when there was one) whose __tostring reads well. Swift makes them too: it finds
-- this metatable in the registry under "lunet.Error".
local runtime = require "lunet.runtime"
local setmetatable, getmetatable = runtime.setmetatable, runtime.getmetatable   -- the C ones (runtime.lua)

local Error = {}
Error.__name = "lunet.Error"
Error.__index = Error

-- The text shows the URL with its credentials masked (a password in it, a secret query
-- parameter: lunet.secrets decides), also where the message quotes it: error text ends up in
-- terminals, logs and CI output. e.url keeps the URL as requested, for code.
function Error.__tostring(e)
  local s = tostring(e.kind or "error") .. ": " .. tostring(e.message)
  local url = e.url
  if type(url) ~= "string" then return s end
  local masked = require("lunet.secrets").mask_url(url)
  local at = string.find(s, url, 1, true)
  if at then
    s = string.sub(s, 1, at - 1) .. masked .. string.sub(s, at + #url)
  else
    s = s .. " (" .. masked .. ")"
  end
  return s
end

debug.getregistry()["lunet.Error"] = Error

local M = { Error = Error }

--- A new error object; `fields` are copied into it (url, response, ...).
function M.new(kind, message, fields)
  local e = { kind = kind, message = message }
  if fields then for k, v in pairs(fields) do e[k] = v end end
  return setmetatable(e, Error)
end

function M.is(v) return getmetatable(v) == Error end

--- Raises an error object from the caller's caller (level as in `error`).
function M.raise(kind, message, fields)
  error(M.new(kind, message, fields), 0)
end

--- "bad argument #n to 'fname' (problem)", as kind "argument".
function M.argument(position, fname, problem)
  error(M.new("argument", string.format("bad argument #%d to '%s' (%s)", position, fname, problem)), 0)
end

--- Text for any error value (an error object, a string, anything with __tostring).
function M.describe(e)
  if type(e) == "string" then return e end
  local ok, s = pcall(tostring, e)
  if ok and type(s) == "string" then return s end
  return "(an error value of type " .. type(e) .. ")"
end

return M
