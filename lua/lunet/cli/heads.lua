--- The request's head as the one-shot command line prints it: split from what libcurl sent,
--- or made for --offline and --curl as libcurl would send it; a multipart body in brief.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)

local M = {}

-- The head lines of a raw HTTP head ("GET / HTTP/1.1\r\nA: b\r\n..."): first line and fields.
function M.split_head(head)
  local lines = {}
  for line in head:gmatch("([^\r\n]+)") do lines[#lines + 1] = line end
  local fields = {}
  for i = 2, #lines do
    local name, value = lines[i]:match("^([^:]+):%s*(.*)$")
    if name then fields[#fields + 1] = { name, value } end
  end
  return lines[1] or "", fields
end

-- The request as it will be sent, for --offline (libcurl adds Host and Accept the same way);
-- `multipart`: the { boundary, body } --offline shows (lunet.cli.multipart_text).
function M.offline_head(q, opts, session, multipart)
  local u = require("lunet.url").parse(q.url)
  local target = (u.path ~= "" and u.path or "/") .. (u.query and ("?" .. u.query) or "")
  local fields = { { "Host", u.host .. (u.port and (":" .. u.port) or "") } }
  local seen = {}
  local function add(name, value)
    if value == false then return end
    if type(value) == "table" then for _, v in ipairs(value) do add(name, v) end return end
    fields[#fields + 1] = { name, value }
    seen[name:lower()] = true
  end
  local names = {}
  for k in pairs(opts.headers) do names[#names + 1] = k end
  table.sort(names)
  local session_headers = session.headers or {}
  local snames = {}
  for k in pairs(session_headers) do snames[#snames + 1] = k end
  table.sort(snames)
  add("User-Agent", opts.headers["User-Agent"] or session_headers["User-Agent"] or ("lunet/" .. core.version(false)))
  for _, k in ipairs(snames) do if k ~= "User-Agent" and opts.headers[k] == nil then add(k, session_headers[k]) end end
  for _, k in ipairs(names) do if k ~= "User-Agent" then add(k, opts.headers[k]) end end
  if not seen.accept then add("Accept", "*/*") end
  if q.body then add("Content-Length", tostring(#q.body)) end
  if multipart then
    add("Content-Length", tostring(#multipart.body))
    add("Content-Type", "multipart/form-data; boundary=" .. multipart.boundary)
  elseif q.multipart then
    add("Content-Type", "multipart/form-data; boundary=...")
  end
  return q.method .. " " .. target, fields
end

function M.multipart_summary(parts)
  local out = {}
  for _, p in ipairs(parts) do
    out[#out + 1] = p.file and string.format("[part %s: file %s%s]", p.name, p.file, p.content_type and (", " .. p.content_type) or "")
      or string.format("[part %s: %d bytes]", p.name, #p.data)
  end
  return table.concat(out, "\n")
end

return M
