--- A Postman collection's model (lunet.import.postman) as a `lunet test` file: the variables
--- table and v() that fills {{name}} when the test runs, a session for each auth (cookies kept,
--- as Postman keeps them), a describe a folder, a test a request with the expect lines its
--- test script translated to, and every JavaScript script kept as a comment beside its request.
--- Credentials are read from the environment by name, never written.
local render = require "lunet.import.render"
local literal = render.literal

local M = {}

-- A text as Lua: need("VAR") for a credential, v("...") when it holds a {{variable}}, a literal.
local function text(x)
  if type(x) == "table" and x.env then return string.format("need(%q)", x.env) end
  if type(x) ~= "string" then return literal(x) end
  if x:find("{{", 1, true) then return "v(" .. literal(x) .. ")" end
  return literal(x)
end

-- A table of texts (an auth) as Lua, its keys sorted.
local function table_text(t)
  if type(t) ~= "table" or t.env then return text(t) end
  local parts = {}
  for _, x in ipairs(t) do parts[#parts + 1] = table_text(x) end
  local keys = {}
  for k in pairs(t) do if math.type(k) ~= "integer" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local key = k:match("^[%a_][%w_]*$") and k or ("[" .. literal(k) .. "]")
    parts[#parts + 1] = key .. " = " .. table_text(t[k])
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- A script kept as comment lines (a line end of any kind, CR alone too, starts a new one).
local function comment(lines, indent, title, js)
  lines[#lines + 1] = indent .. "-- " .. title .. " (JavaScript, not run):"
  for l in (js:gsub("\r\n?", "\n") .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = indent .. "-- | " .. render.comment_text(l) end
end

local DYNAMIC = [[
-- {{name}}: the collection's or the environment's variable; Postman's dynamic {{$guid}},
-- {{$timestamp}}, {{$isoTimestamp}}, {{$randomInt}} are made here.
local function v(text)
  return (text:gsub("{{%s*(.-)%s*}}", function(name)
    if name == "$guid" or name == "$randomUUID" then
      return (("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx"):gsub("[xy]", function(c)
        return string.format("%x", c == "x" and math.random(0, 15) or math.random(8, 11)) end))
    end
    if name == "$timestamp" then return tostring(os.time()) end
    if name == "$isoTimestamp" then return os.date("!%Y-%m-%dT%H:%M:%S.000Z") end
    if name == "$randomInt" then return tostring(math.random(0, 1000)) end
    local value = vars[name]
    if value == nil then error("{{" .. name .. "}}: neither the collection nor the environment defines it", 0) end
    return value
  end))
end]]

-- The lines above the tests: what was imported, the scripts' count, the credentials, need(),
-- the variables and v().
local function preamble(model, what)
  local lines = { "-- " .. render.comment_text(string.format("Imported from %s (%s, Postman collection %s) by `lunet import postman`.", what, model.name, model.format)) }
  lines[#lines + 1] = string.format("-- Scripts: %d JavaScript script%s, kept as comments beside their requests; %d assertion%s translated to expect().",
    model.scripts.count, model.scripts.count == 1 and "" or "s", model.scripts.translated, model.scripts.translated == 1 and "" or "s")
  local creds = {}
  for var, what_ in pairs(model.credentials) do creds[#creds + 1] = { var, what_ } end
  table.sort(creds, function(a, b) return a[1] < b[1] end)
  render.credentials(lines, "Credentials", creds)
  for _, n in ipairs(model.notes) do lines[#lines + 1] = "-- NOTE: " .. render.comment_text(n) end
  render.need_function(lines, "the collection this was imported from")
  lines[#lines + 1] = "local vars = {"
  for _, var in ipairs(model.variables) do lines[#lines + 1] = "  [" .. literal(var.key) .. "] = " .. (type(var.value) == "table" and text(var.value) or literal(var.value)) .. "," end
  lines[#lines + 1] = "}"
  lines[#lines + 1] = DYNAMIC
  return lines
end

-- A request's body options, through add(line).
local function body(add, b, has_type)
  if b.mode == "raw" then
    add("body = " .. text(b.text) .. ",")
    if not has_type then add("content_type = " .. literal(b.content_type or "text/plain") .. ",") end
  elseif b.mode == "urlencoded" then
    add("form = {")
    for _, f in ipairs(b.fields) do add("  [" .. literal(f[1]) .. "] = " .. text(f[2]) .. ",") end
    add("},")
  elseif b.mode == "formdata" then
    add("multipart = {")
    for _, p in ipairs(b.parts) do
      local fields = { "name = " .. literal(p.name) }
      if p.file then fields[#fields + 1] = "file = " .. literal(p.file) else fields[#fields + 1] = "data = " .. text(p.data) end
      if p.content_type then fields[#fields + 1] = "content_type = " .. literal(p.content_type) end
      add("  { " .. table.concat(fields, ", ") .. " },")
    end
    add("},")
  elseif b.mode == "file" then
    add("body = assert(io.open(" .. literal(b.src) .. ', "rb")):read("a"),')
    if not has_type then add('content_type = "application/octet-stream",') end
  elseif b.mode == "graphql" then
    add("json = { query = " .. text(b.query) .. (b.variables and (", variables = json.decode(" .. text(b.variables) .. ")") or "") .. " },")
  end
end

-- One request's test into `out`, sent through the session session_for names.
local function request(out, req, indent, session_for)
  out[#out + 1] = indent .. "test(" .. literal(req.name) .. ", function()"
  if req.scripts.prerequest then comment(out, indent .. "  ", "pre-request script", req.scripts.prerequest) end
  out[#out + 1] = indent .. "  local r = " .. session_for(req.auth or nil) .. ":request{"
  local function add(s) out[#out + 1] = indent .. "    " .. s end
  add("method = " .. literal(req.method) .. ",")
  add("url = " .. text(req.url) .. ",")
  local has_type = false
  if #req.headers > 0 then
    add("headers = {")
    for _, hd in ipairs(req.headers) do
      if hd[1]:lower() == "content-type" then has_type = true end
      add("  [" .. literal(hd[1]) .. "] = " .. text(hd[2]) .. ",")
    end
    add("},")
  end
  if req.body then body(add, req.body, has_type) end
  add("follow = true,")
  out[#out + 1] = indent .. "  }"
  for _, e in ipairs(req.expects) do out[#out + 1] = indent .. "  " .. e end
  if req.scripts.test then
    comment(out, indent .. "  ", string.format("test script (%d assertion%s translated above)", #req.expects, #req.expects == 1 and "" or "s"), req.scripts.test)
  end
  out[#out + 1] = indent .. "end)"
end

--- The `lunet test` file.
function M.test(model, what)
  local lines = preamble(model, what)
  -- One session an auth (the same auth, the same session: its cookies and OAuth token shared).
  local sessions, session_lines = {}, {}
  local function session_for(auth)
    local key = auth and table_text(auth) or "none"
    if not sessions[key] then
      local name = "session_" .. (#session_lines + 1)
      sessions[key] = name
      session_lines[#session_lines + 1] = string.format("local %s = http.session{ cookies = true%s }", name, auth and (", auth = " .. key) or "")
    end
    return sessions[key]
  end
  local body_lines = {}
  local function items(list, indent)
    for _, it in ipairs(list) do
      if it.folder then
        body_lines[#body_lines + 1] = indent .. "describe(" .. literal(it.name) .. ", function()"
        for _, kind in ipairs({ "prerequest", "test" }) do
          if it.scripts[kind] then comment(body_lines, indent .. "  ", "the folder's " .. kind .. " script", it.scripts[kind]) end
        end
        items(it.items, indent .. "  ")
        body_lines[#body_lines + 1] = indent .. "end)"
      else
        request(body_lines, it, indent, session_for)
      end
    end
  end
  for _, kind in ipairs({ "prerequest", "test" }) do
    if model.scripts_top[kind] then comment(body_lines, "", "the collection's " .. kind .. " script", model.scripts_top[kind]) end
  end
  body_lines[#body_lines + 1] = "describe(" .. literal(model.name) .. ", function()"
  items(model.items, "  ")
  body_lines[#body_lines + 1] = "end)"
  for _, l in ipairs(session_lines) do lines[#lines + 1] = l end
  lines[#lines + 1] = ""
  for _, l in ipairs(body_lines) do lines[#lines + 1] = l end
  return table.concat(lines, "\n") .. "\n"
end

return M
