--- The operations of an OpenAPI document (3.0, 3.1, or Swagger 2.0 read as 3.0 would say it):
--- each path and method with its parameters (the path's and the operation's, `$ref`s followed),
--- request body, responses and security, named by `operationId` or else "GET /items/{id}".
--- Schemas stay where they are in their documents: an operation keeps their addresses
--- (absolute URI and JSON pointer), which lunet.schema compiles with the documents' own $refs.
local json = require "lunet.json"
local document = require "lunet.openapi.document"

local M = {}

local METHODS = { "get", "put", "post", "delete", "options", "head", "patch", "trace" }
local fail = document.fail

local function escape_token(s) return (s:gsub("~", "~0"):gsub("/", "~1")) end

--- Which OpenAPI this is: "3.1", "3.0" or "2.0"; anything else is refused.
function M.version(root, uri)
  local v = root.openapi or root.swagger
  if type(v) ~= "string" then fail(uri .. "#", "not an OpenAPI document: it has no 'openapi' (3.x) or 'swagger' (2.0) field") end
  if root.swagger then
    if v ~= "2.0" then fail(uri .. "#/swagger", "swagger %s: only 2.0 is Swagger", v) end
    return "2.0"
  end
  local major_minor = v:match("^(3%.[01])%.%d+")
  if not major_minor then fail(uri .. "#/openapi", "OpenAPI %s: lunet reads 3.0.x, 3.1.x and Swagger 2.0", v) end
  return major_minor
end

-- A parameter (followed through $refs) as the operation uses it; Swagger 2.0's body and
-- formData parameters become the request body instead (returned as `body`, `form`).
local function parameter(set, p, uri, where, version)
  p, uri, where = set:deref(p, uri, where)
  if type(p) ~= "table" or type(p.name) ~= "string" or type(p["in"]) ~= "string" then
    fail(where, "a parameter needs 'name' and 'in'")
  end
  local place = p["in"]
  if version == "2.0" and (place == "body" or place == "formData") then return nil, p, uri, where end
  if place ~= "path" and place ~= "query" and place ~= "header" and place ~= "cookie" then
    fail(where, "parameter '%s' is in '%s': path, query, header or cookie", p.name, tostring(place))
  end
  local style = p.style or ((place == "query" or place == "cookie") and "form" or "simple")
  local explode = p.explode
  if explode == nil then explode = style == "form" end   -- OpenAPI's default: true for form only
  local schema_where = where .. "/schema"
  if version == "2.0" then schema_where = where end   -- 2.0: the parameter is its own schema (type, format, items, enum)
  return {
    name = p.name, ["in"] = place, required = p.required == true or place == "path", description = p.description,
    style = style, explode = explode,
    schema = schema_where, has_schema = p.schema ~= nil or version == "2.0", where = where,
    collection = p.collectionFormat,
  }
end

-- Swagger 2.0's body/formData parameters as a 3.0 request body.
local function body_from_2(root, op, found, uri)
  local consumes = op.consumes or root.consumes or { "application/json" }
  local content = {}
  for _, f in ipairs(found) do
    local p, where = f.p, f.where
    if p["in"] == "body" then
      for _, media in ipairs(consumes) do content[media] = { schema = where .. "/schema" } end
      return { required = p.required == true, content = content, description = p.description }
    end
  end
  -- formData: one object schema made of the fields (kept as a table, not an address)
  local props, required = {}, json.array()
  for _, f in ipairs(found) do
    props[f.p.name] = { type = f.p.type, format = f.p.format, items = f.p.items, enum = f.p.enum }
    if f.p.required then required[#required + 1] = f.p.name end
  end
  local media = (op.consumes or root.consumes or {})[1] or "application/x-www-form-urlencoded"
  return { required = #required > 0, content = { [media] = { inline = { type = "object", properties = props, required = required } } } }
end

-- The request body (3.x), `$ref` followed; media types with their schemas' addresses.
local function request_body(set, rb, uri, where)
  rb, uri, where = set:deref(rb, uri, where)
  local content = {}
  for media, m in pairs(rb.content or {}) do
    content[media] = { schema = m.schema and (where .. "/content/" .. escape_token(media) .. "/schema") or nil }
  end
  return { required = rb.required == true, content = content, description = rb.description }
end

-- Responses by status ("200", "2XX", "default"), each with its media types' schema addresses.
local function responses(set, rs, uri, where, version, produces)
  local out = {}
  for status, r in pairs(rs or {}) do
    local rwhere = where .. "/" .. escape_token(tostring(status))
    local resolved, _, at = set:deref(r, uri, rwhere)
    local content = {}
    if version == "2.0" then
      if resolved.schema then for _, media in ipairs(produces) do content[media] = { schema = at .. "/schema" } end end
    else
      for media, m in pairs(resolved.content or {}) do
        content[media] = { schema = m.schema and (at .. "/content/" .. escape_token(media) .. "/schema") or nil }
      end
    end
    out[tostring(status)] = { description = resolved.description, content = content }
  end
  return out
end

-- One operation of path `path` and `method`.
local function operation(set, ctx, path, item, method, op, where)
  local version, uri = ctx.version, ctx.uri
  local params, seen, body_params = {}, {}, {}
  local function add(list, list_where)
    for i, p in ipairs(list or {}) do
      local param, raw, _, pwhere = parameter(set, p, uri, list_where .. "/" .. (i - 1), version)
      if param then
        local key = param["in"] .. ":" .. param.name
        if seen[key] then params[seen[key]] = param else params[#params + 1] = param; seen[key] = #params end
      else body_params[#body_params + 1] = { p = raw, where = pwhere } end
    end
  end
  add(item.parameters, ctx.path_where .. "/parameters")   -- the path's, then the operation's (which win)
  add(op.parameters, where .. "/parameters")
  local body
  if version == "2.0" then
    if #body_params > 0 then body = body_from_2(set.root, op, body_params, uri) end
  elseif op.requestBody then body = request_body(set, op.requestBody, uri, where .. "/requestBody") end
  local produces = op.produces or set.root.produces or { "application/json" }
  if op.responses == nil then fail(where, "an operation needs 'responses'") end
  return {
    id = op.operationId or (method:upper() .. " " .. path), operation_id = op.operationId,
    method = method:upper(), path = path, summary = op.summary, description = op.description,
    deprecated = op.deprecated == true, tags = op.tags, where = where, uri = uri,
    parameters = params, body = body, responses = responses(set, op.responses, uri, where .. "/responses", version, produces),
    security = op.security or set.root.security,
  }
end

--- Every operation of the document set `set` (lunet.openapi.document): a list in the
--- document's order of paths (sorted) and methods, and a table by id. Two operations with one
--- operationId are an error naming both.
function M.list(set, version)
  local root, uri = set.root, set.root_uri
  if type(root.paths) ~= "table" then fail(uri .. "#/paths", "no paths: the document describes no operation") end
  local paths = {}
  for path in pairs(root.paths) do paths[#paths + 1] = path end
  table.sort(paths)
  local list, by_id = {}, {}
  for _, path in ipairs(paths) do
    local path_where = uri .. "#/paths/" .. escape_token(path)
    local item, item_uri, item_where = set:deref(root.paths[path], uri, path_where)
    for _, method in ipairs(METHODS) do
      local op = item[method]
      if op ~= nil then
        local where = item_where .. "/" .. method
        if type(op) ~= "table" then fail(where, "an operation must be an object") end
        local o = operation(set, { version = version, uri = item_uri, path_where = item_where }, path, item, method, op, where)
        if by_id[o.id] then fail(where, "operationId '%s' is used twice: here and at %s", o.id, by_id[o.id].where) end
        by_id[o.id] = o
        list[#list + 1] = o
      end
    end
  end
  return list, by_id
end

return M
