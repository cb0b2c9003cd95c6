--- How the one-shot command line prints a request and a response (pure: strings in, strings
--- out). On a terminal: heads with colour, JSON and XML bodies indented, binary bodies not
--- dumped; elsewhere (redirected) the body byte for byte.
local json = require "lunet.json"
local pretty = require "lunet.pretty"
local xml = require "lunet.xml"

local M = {}

M.indent_json = require "lunet.json_indent"

local function is_binary(bytes)
  return bytes:find("%z") ~= nil or not utf8.len(bytes)
end

--- A body for a terminal: formatted by its type when `format`, coloured when `color`, its
--- control bytes shown escaped when `escape`.
function M.body(bytes, content_type, opts)
  local paint = pretty.painter(opts.color)
  content_type = (content_type or ""):lower()
  if is_binary(bytes) and not (opts.text and utf8.len(opts.text)) then
    return "+-----------------------------------------+\n" ..
           "| NOTE: binary data not shown in terminal |\n" ..
           "+-----------------------------------------+"
  end
  local text = opts.text or bytes
  -- Escaped before it is formatted and painted: lunet's own colours stay colours. (JSON and
  -- XML hold no raw control bytes but white space, so their formatting sees the same text.)
  if opts.escape then text = require("lunet.terminal_safe").text(text) end
  if opts.format and (content_type:find("json", 1, true) or content_type:find("javascript", 1, true)) then
    if pcall(json.decode, text) then return pretty.highlight_json(M.indent_json(text), paint) end
  elseif opts.format and content_type:find("xml", 1, true) then
    local ok, doc = pcall(xml.decode, text, { ignore_encoding = true })
    if ok then
      local declared = text:find("^%s*<%?xml") ~= nil
      local ok2, out = pcall(xml.encode, doc, { pretty = true, declaration = declared })
      if ok2 then return out end
    end
  end
  return text
end

-- What a server sent, for a terminal when `escape` (lunet.terminal_safe): its control bytes
-- shown, not obeyed.
local function shown(s, escape) return escape and require("lunet.terminal_safe").line(s) or s end

local function head_lines(first, fields, paint, escape)
  local out = { first }
  for _, f in ipairs(fields) do out[#out + 1] = paint("cyan", shown(f[1], escape)) .. ": " .. shown(f[2], escape) end
  return table.concat(out, "\n")
end

--- The request line and fields, as sent on HTTP/1.1.
function M.request_head(method, target, version, fields, opts)
  local paint = pretty.painter(opts.color)
  return head_lines(paint("bold", method) .. " " .. paint("green", shown(target, opts.escape)) .. " " .. version, fields, paint, opts.escape)
end

--- The status line and fields.
function M.response_head(version, status, reason, fields, opts)
  local paint = pretty.painter(opts.color)
  local color = status < 300 and "green" or status < 400 and "yellow" or "red"
  -- HTTP/2 has no reason phrase: "HTTP/2 200", as curl prints it, with no space after.
  local status_text = (reason == nil or reason == "") and tostring(status) or (status .. " " .. shown(reason, opts.escape))
  local line = paint("blue", "HTTP/" .. version) .. " " .. paint("bold", paint(color, status_text))
  return head_lines(line, fields, paint, opts.escape)
end

return M
