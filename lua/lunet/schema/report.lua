-- Validation errors, made only when a check fails and someone will read them: inside anyOf,
-- oneOf, not, if and contains, failures are only counted (st.quiet > 0) and cost no message.
-- An error's instance path is built on the way back up: each array or object check that sees
-- a child fail adds the child's key to the errors made since it started (st.nerr), so a value
-- that passes costs no path at all.
--
-- The state of one validation (st): errors, nerr, quiet (depth of quiet checks), depth (nested
-- $refs), scope and nscope (the dynamic scope: resources entered, for $dynamicRef).
local uri = require "lunet.schema.uri"
local errors = require "lunet.errors"

local M = {}

--- `text` with its control bytes (ESC, CR, LF, ...) written as \ddd: names from a schema or a
--- value that a message quotes as they are (schema locations) must not reach a terminal raw.
local function escape_controls(c) return "\\" .. c:byte() end
function M.printable(text)
  return (text:gsub("[%c\127]", escape_controls))
end

--- Raises a schema error (kind "schema"): a schema lunet.schema cannot use, and why.
function M.schema_error(message)
  errors.raise("schema", "invalid schema: " .. M.printable(message))
end

-- Errors one validation lists; past them failures are only counted (the list's `more`), so a
-- value with a million bad items costs no more memory than one with a thousand.
local MAX_ERRORS = 1000
M.MAX_ERRORS = MAX_ERRORS

--- Records an error (when not quiet) and returns false, for `return fail(...)`.
function M.fail(st, rule, schema_path, message)
  if st.quiet > 0 then return false end
  local n = st.nerr + 1
  if n > MAX_ERRORS then
    st.dropped = st.dropped + 1
    return false
  end
  st.nerr = n
  st.errors[n] = { rule = rule, schema_path = schema_path, message = message, segs = {} }
  return false
end

--- Adds instance key `seg` (a string, or a Lua array index) to the errors after `mark`.
function M.nest(st, mark, seg)
  local errors = st.errors
  for i = mark + 1, st.nerr do
    local segs = errors[i].segs
    segs[#segs + 1] = seg
  end
end

--- The errors of a finished validation, as the API gives them: { path, schema_path, rule,
--- message }, path a JSON pointer into the instance (array items counted from 0); `more` is
--- the number of errors past MAX_ERRORS that were not listed (absent when none were).
function M.finish(st)
  local out = {}
  if st.dropped > 0 then out.more = st.dropped end
  for i = 1, st.nerr do
    local e = st.errors[i]
    local segs, parts = e.segs, {}
    for j = #segs, 1, -1 do
      local s = segs[j]
      parts[#parts + 1] = "/" .. (type(s) == "number" and tostring(s - 1) or uri.escape_token(s))
    end
    out[i] = { path = table.concat(parts), schema_path = e.schema_path, rule = e.rule, message = e.message }
    st.errors[i] = nil
  end
  return out
end

--- "1st", "2nd", ... for messages about the schemas of allOf, anyOf and oneOf.
function M.ordinal(n)
  local last2, last = n % 100, n % 10
  local suffix = "th"
  if last2 < 11 or last2 > 13 then
    suffix = last == 1 and "st" or last == 2 and "nd" or last == 3 and "rd" or "th"
  end
  return n .. suffix
end

--- "1 item" / "2 items".
function M.count(n, word)
  return n .. " " .. word .. (n == 1 and "" or "s")
end

return M
