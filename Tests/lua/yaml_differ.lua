-- Where a decoded YAML value differs from the JSON value it must equal, for yaml_test.lua and
-- yaml_parity_test.lua.
local json = require "lunet.json"

-- Where two values differ, or nil: integers and floats apart, arrays and mappings apart,
-- non-finite floats as "$inf", "$-inf", "$nan" (how the parity script writes them).
local function differ(a, b, path)
  path = path or "$"
  if type(a) == "number" and (a ~= a or a == math.huge or a == -math.huge) then a = a ~= a and "$nan" or (a > 0 and "$inf" or "$-inf") end
  if type(a) ~= type(b) or math.type(a) ~= math.type(b) or (type(a) ~= "table" and a ~= b) then
    return string.format("%s: %s %q vs %s %q", path, math.type(a) or type(a), tostring(a), math.type(b) or type(b), tostring(b))
  end
  if type(a) ~= "table" then return nil end
  if json.is_array(a) ~= json.is_array(b) then return path .. ": array vs mapping" end
  for k, x in pairs(a) do
    local d = differ(x, b[k], path .. "." .. tostring(k))
    if d then return d end
  end
  for k in pairs(b) do if a[k] == nil then return path .. "." .. tostring(k) .. ": missing" end end
end

return differ
