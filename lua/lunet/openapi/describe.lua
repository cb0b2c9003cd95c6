--- An operation as text, for `help(api.createItem)` and `lunet api SPEC`: what it does, the
--- parameters it takes (where, whether required, their type), its body and its responses, each
--- schema shown one level deep (a named schema by its name, an object's properties with their
--- types and bounds).
local document = require "lunet.openapi.document"

local M = {}

local function name_of(ref) return ref:match("([^/]+)$") end

-- A schema in a few words: its name if it has one, else its type and bounds.
local function brief(set, s, uri, depth)
  if type(s) ~= "table" then return "any" end
  if s["$ref"] then
    local target, turi = set:deref(s, uri, uri)
    if depth > 0 then return name_of(s["$ref"]) end
    return name_of(s["$ref"]) .. " " .. brief(set, target, turi, depth)   -- target has no $ref: deref followed the chain
  end
  for _, k in ipairs({ "oneOf", "anyOf", "allOf" }) do
    if s[k] then
      local parts = {}
      for _, sub in ipairs(s[k]) do parts[#parts + 1] = brief(set, sub, uri, depth + 1) end
      return (k == "allOf" and "all of " or "") .. table.concat(parts, k == "allOf" and " & " or " | ")
    end
  end
  local t = s.type
  if type(t) == "table" then t = table.concat(t, "|") end
  if s.enum then
    local vals = {}
    for _, v in ipairs(s.enum) do vals[#vals + 1] = tostring(v) end
    return "one of " .. table.concat(vals, ", ")
  end
  if t == "array" then return "[" .. brief(set, s.items, uri, depth + 1) .. "]" end
  if (t == "object" or s.properties) and depth == 0 then
    local names, req = {}, {}
    for _, r in ipairs(s.required or {}) do req[r] = true end
    for n in pairs(s.properties or {}) do names[#names + 1] = n end
    table.sort(names)
    local parts = {}
    for _, n in ipairs(names) do parts[#parts + 1] = n .. (req[n] and "" or "?") .. ": " .. brief(set, s.properties[n], uri, depth + 1) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  local bounds = {}
  if s.minimum then bounds[#bounds + 1] = ">= " .. s.minimum end
  if s.exclusiveMinimum and type(s.exclusiveMinimum) == "number" then bounds[#bounds + 1] = "> " .. s.exclusiveMinimum end
  if s.maximum then bounds[#bounds + 1] = "<= " .. s.maximum end
  if s.exclusiveMaximum and type(s.exclusiveMaximum) == "number" then bounds[#bounds + 1] = "< " .. s.exclusiveMaximum end
  if s.minLength or s.maxLength then bounds[#bounds + 1] = "length " .. (s.minLength or 0) .. ".." .. (s.maxLength or "") end
  if s.format then bounds[#bounds + 1] = s.format end
  return (t or "any") .. (#bounds > 0 and (" (" .. table.concat(bounds, ", ") .. ")") or "")
end

-- The schema at `address` as written (a $ref stays one: brief shows its name).
local function at(set, address)
  local uri, pointer = address:match("^([^#]*)#(.*)$")
  return document.at(set:document(uri, address), pointer), uri
end

--- The text of operation `op` (of an api made by lunet.openapi).
function M.operation(op)
  local set = op.api._set
  local lines = { string.format("%s: %s %s%s%s", op.id, op.method, op.path, op.summary and (" — " .. op.summary) or "",
    op.deprecated and " (deprecated)" or "") }
  if op.description and op.description ~= op.summary then lines[#lines + 1] = "  " .. op.description:gsub("\n", "\n  ") end
  if #op.parameters > 0 then
    lines[#lines + 1] = "  parameters:"
    for _, p in ipairs(op.parameters) do
      local s, uri = at(set, p.schema)
      lines[#lines + 1] = string.format("    %s (%s%s): %s%s", p.name, p["in"], p.required and ", required" or "",
        p.has_schema and brief(set, s, uri, 0) or "any", p.description and (" — " .. p.description) or "")
    end
  end
  if op.body then
    for media, m in pairs(op.body.content) do
      local text = "any"
      if m.schema then local s, uri = at(set, m.schema); text = brief(set, s, uri, 0)
      elseif m.inline then text = brief(set, m.inline, op.uri, 0) end
      lines[#lines + 1] = string.format("  body (%s%s): %s", media, op.body.required and ", required" or "", text)
    end
  end
  local statuses = {}
  for status in pairs(op.responses) do statuses[#statuses + 1] = status end
  table.sort(statuses)
  lines[#lines + 1] = "  responses:"
  for _, status in ipairs(statuses) do
    local r = op.responses[status]
    local media, m = next(r.content)
    local text = ""
    if m and m.schema then local s, uri = at(set, m.schema); text = " " .. media .. " " .. brief(set, s, uri, 1) end
    lines[#lines + 1] = string.format("    %s%s%s", status, r.description and (" " .. r.description) or "", text)
  end
  return table.concat(lines, "\n")
end

return M
