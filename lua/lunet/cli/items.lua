--- Request items of the one-shot command line, with HTTPie's syntax and meaning (pure: no
--- files are read here; see build.lua). An item is split at its first separator; at one position
--- the longest separator wins (`a:=1` is raw JSON, not a header), and a backslash before a
--- separator character makes it part of the name (`a\=b=c` is the field "a=b").
---
---   Name:Value   header            Name:    header removed       Name;   header, empty value
---   name==value  query parameter   name=value  data field (string)
---   name:=json   raw JSON field    name=@file  data field from a file
---   name:=@file  raw JSON from a file          field@file[;type=MIME]  file upload (multipart)
---   @file        (first and alone) the request body from a file
local M = {}

-- Longest first, so that at one position ":=@" wins over ":=" and ":".
local SEPARATORS = { ":=@", "==", ":=", "=@", "=", ":", ";", "@" }
local KINDS = {
  [":"] = "header", [";"] = "empty_header", ["=="] = "query", ["="] = "data", [":="] = "json",
  ["=@"] = "data_file", [":=@"] = "json_file", ["@"] = "file",
}
local SEPARATOR_CHARS = { [":"] = true, ["="] = true, ["@"] = true, [";"] = true, ["\\"] = true }

--- Splits one item: { kind =, name =, value = } or nil and a message naming the item.
function M.parse(text)
  local name, i, n = {}, 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c == "\\" and i < n and SEPARATOR_CHARS[text:sub(i + 1, i + 1)] then
      name[#name + 1] = text:sub(i + 1, i + 1)
      i = i + 2
    else
      for _, sep in ipairs(SEPARATORS) do
        if text:sub(i, i + #sep - 1) == sep then
          local item = { kind = KINDS[sep], name = table.concat(name), value = text:sub(i + #sep) }
          return M.check(item, text)
        end
      end
      name[#name + 1] = c
      i = i + 1
    end
  end
  return nil, string.format("'%s' is not a request item (Header:Value, name==query, name=value, name:=json, field@file)", text)
end

local TOKEN = "^[!#$%%&'*+%-.^_`|~%w]+$"   -- RFC 9110 field-name characters

function M.check(item, text)
  if item.kind == "file" and item.name == "" then
    item.kind = "body_file"
  elseif item.name == "" then
    return nil, string.format("'%s' has no name before its separator", text)
  end
  if (item.kind == "header" or item.kind == "empty_header") and not item.name:find(TOKEN) then
    return nil, string.format("'%s': '%s' is not a valid header name", text, item.name)
  end
  if item.kind == "empty_header" and item.value ~= "" then
    -- "Name;value" is not an item: a ';' only ends a header name when nothing follows it.
    return nil, string.format("'%s' is not a request item (use 'Name:value' or 'Name;' for an empty header)", text)
  end
  if item.kind == "header" and item.value:find("[\r\n]") then
    return nil, string.format("'%s': a header value may not contain a line break", text)
  end
  if item.kind == "file" then
    -- field@file;type=MIME
    local path, mime = item.value:match("^(.-);type=(.+)$")
    if path then item.value, item.content_type = path, mime end
  end
  if item.kind == "file" or item.kind == "data_file" or item.kind == "json_file" or item.kind == "body_file" then
    if item.value == "" then return nil, string.format("'%s' names no file", text) end
  end
  return item
end

return M
