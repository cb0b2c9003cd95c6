--- From parsed arguments (args.lua) to the request lunet sends: method, URL, headers and body,
--- as HTTPie builds them. Pure but for `read(path)`, passed in, which returns a file's bytes or
--- nil and a message (so that tests give their own).
local json = require "lunet.json"
local url = require "lunet.url"

local M = {}

local TYPES = {
  json = "application/json", xml = "application/xml", txt = "text/plain", html = "text/html",
  htm = "text/html", csv = "text/csv", js = "text/javascript", css = "text/css", yaml = "application/yaml",
  yml = "application/yaml", png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif",
  webp = "image/webp", svg = "image/svg+xml", pdf = "application/pdf", zip = "application/zip",
  gz = "application/gzip", md = "text/markdown",
}

--- A Content-Type for a file by its extension, or nil.
function M.type_of(path)
  local ext = path:match("%.([%w]+)$")
  return ext and TYPES[ext:lower()] or nil
end

local function fail(fmt, ...) return nil, string.format(fmt, ...) end

-- The request items sorted by what they become: headers (into q.headers), query pairs, data
-- fields (JSON ones checked), file fields and the body file; or nil and the item at fault.
local function sort_items(p, q, read, mode)
  local c = { query = {}, fields = {}, files = {} }
  for _, item in ipairs(p.items) do
    local k = item.kind
    if k == "header" then
      q.headers[#q.headers + 1] = { item.name, item.value ~= "" and item.value or false }
    elseif k == "empty_header" then
      q.headers[#q.headers + 1] = { item.name, "" }
    elseif k == "query" then
      c.query[#c.query + 1] = { item.name, item.value }
    elseif k == "data" or k == "data_file" then
      local value = item.value
      if k == "data_file" then
        local bytes, err = read(value)
        if not bytes then return fail("'%s=@%s': %s", item.name, value, err) end
        value = bytes
      end
      c.fields[#c.fields + 1] = { item.name, value, text = true, item = item.name .. "=" .. item.value }
    elseif k == "json" or k == "json_file" then
      if mode ~= "json" then return fail("'%s:=%s': raw JSON fields need --json (the default), not --%s", item.name, item.value, mode) end
      local text = item.value
      if k == "json_file" then
        local bytes, err = read(text)
        if not bytes then return fail("'%s:=@%s': %s", item.name, text, err) end
        text = bytes
      end
      local ok, err = pcall(json.decode, text)
      if not ok then return fail("'%s:=%s': not JSON: %s", item.name, item.value, tostring(err)) end
      c.fields[#c.fields + 1] = { item.name, (text:gsub("^%s+", ""):gsub("%s+$", "")), item = item.name .. ":=" .. item.value }
    elseif k == "file" then
      c.files[#c.files + 1] = item
    elseif k == "body_file" then
      if c.body_file then return fail("'@%s': only one file can be the body", item.value) end
      c.body_file = item.value
    end
  end
  return c
end

-- q.body (and its type) or q.multipart from the one source of the body; nil and a message
-- when a file cannot be read.
local function set_body(q, o, c, read, stdin, mode)
  local fields, files = c.fields, c.files
  if o.raw then
    q.body = o.raw
  elseif stdin then
    q.body = stdin
  elseif c.body_file then
    local bytes, err = read(c.body_file)
    if not bytes then return fail("'@%s': %s", c.body_file, err) end
    q.body = bytes
    q.content_type = M.type_of(c.body_file)
  elseif mode == "json" and #fields > 0 then
    -- HTTPie's nested JSON (a[b]=1, a[]=x, [0]=y), Python's separators: its bytes exactly.
    local encoded = {}
    for i, f in ipairs(fields) do encoded[i] = { f[1], f.text and json.encode(f[2]) or f[2], item = f.item } end
    local body, err = require("lunet.cli.nested_json").body(encoded)
    if not body then return nil, err end
    q.body = body
  elseif mode == "form" and #files == 0 and #fields > 0 then
    local pairs_ = {}
    for i, f in ipairs(fields) do pairs_[i] = { f[1], f[2] } end
    q.body = url.query(pairs_)
  elseif mode == "multipart" or #files > 0 then
    q.multipart = {}
    for _, f in ipairs(fields) do q.multipart[#q.multipart + 1] = { name = f[1], data = f[2] } end
    for _, f in ipairs(files) do
      local size = read(f.value, true)
      if not size then return fail("'%s@%s': no such file, or it cannot be read", f.name, f.value) end
      q.multipart[#q.multipart + 1] = { name = f.name, file = f.value, content_type = f.content_type or M.type_of(f.value) }
    end
  end
  return true
end

--- The request: { method, url, headers = { {name, value|false}... }, body, content_type,
--- multipart = { parts } }, or nil and a message that names the item at fault.
--- `stdin` is the body read from standard input, or nil.
function M.request(p, read, stdin)
  local o = p.options
  local mode = o.multipart and "multipart" or o.form and "form" or "json"
  local q = { url = p.url, headers = {}, mode = mode }
  local c, err = sort_items(p, q, read, mode)
  if not c then return nil, err end
  local fields, files = c.fields, c.files

  if #files > 0 and mode == "json" then
    return fail("'%s@%s': file fields need --form or --multipart", files[1].name, files[1].value)
  end
  local sources = (o.raw and 1 or 0) + (c.body_file and 1 or 0) + (stdin and 1 or 0) + ((#fields > 0 or #files > 0) and 1 or 0)
  if sources > 1 then
    return nil, "give the body one way: data items, @file, --raw or standard input (--ignore-stdin to leave it)"
  end

  if #c.query > 0 then q.url = url.with_query(q.url, c.query) end
  local ok
  ok, err = set_body(q, o, c, read, stdin, mode)
  if not ok then return nil, err end
  local has_data = q.body ~= nil or q.multipart ~= nil or #fields > 0
  q.method = p.method or (has_data and "POST" or "GET")

  -- HTTPie's defaults: with --json, or JSON data, both fields say JSON; --form without files
  -- says form (a multipart body's type, with its boundary, comes from the transfer).
  if mode == "json" and (#fields > 0 or o.json or q.body ~= nil) then
    q.content_type = q.content_type or "application/json"
    q.accept = "application/json, */*;q=0.5"
  elseif mode == "form" and #files == 0 then
    q.content_type = q.content_type or "application/x-www-form-urlencoded; charset=utf-8"
  end
  return q
end

return M
