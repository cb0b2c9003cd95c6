--- A request description an importer made (lunet.import.curl: { method, url, headers = { { name,
--- value }, ... }, body, content_type, multipart, auth, cookies, ... , notes }) written as what
--- `lunet import --to` asks for: a script that sends it and prints the answer, a `lunet test` file,
--- or a one-shot command line. Pure: text out. What a form cannot say is a NOTE line (a comment
--- in the Lua forms, a # line before the command line).
local M = {}

-- The request's options in the order the script lists them (auth and cookies are a session's).
local ORDER = { "method", "url", "headers", "body", "content_type", "multipart", "insecure", "ca_file", "cert",
                "cert_key", "cert_password", "proxy", "follow", "max_redirects", "decompress", "timeout",
                "connect_timeout", "http_version" }

--- A Lua literal of v: strings with %q (every byte round-trips; a newline as \n), tables with
--- their list part in order and their keys sorted.
local function literal(v)
  if type(v) == "string" then return (string.format("%q", v):gsub("\\\n", "\\n")) end
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for _, x in ipairs(v) do parts[#parts + 1] = literal(x) end
  local keys = {}
  for k in pairs(v) do if math.type(k) ~= "integer" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local key = k:match("^[%a_][%w_]*$") and k or ("[" .. literal(k) .. "]")
    parts[#parts + 1] = key .. " = " .. literal(v[k])
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end
M.literal = literal

-- A multipart part: a field whose text comes from a file is read when the script runs.
local function part_literal(p)
  if not p.data_file then return literal(p) end
  local copy = {}
  for k, v in pairs(p) do if k ~= "data_file" then copy[k] = v end end
  return literal(copy):gsub(" }$", string.format(', data = assert(io.open(%s, "rb")):read("a") }', literal(p.data_file)))
end

-- The lines of `local r = ...request{...}` at `indent`.
local function request_lines(r, indent)
  local lines = {}
  local function add(s) lines[#lines + 1] = indent .. s end
  if r.auth or r.cookies then
    local parts = {}
    for _, k in ipairs({ "auth", "cookies" }) do if r[k] ~= nil then parts[#parts + 1] = k .. " = " .. literal(r[k]) end end
    add("local session = http.session{ " .. table.concat(parts, ", ") .. " }")
    add("local r = session:request{")
  else
    add("local r = http.request{")
  end
  for _, k in ipairs(ORDER) do
    local v = r[k]
    if k == "headers" and #v > 0 then
      add("  headers = {")
      local by_name, names = {}, {}
      for _, h in ipairs(v) do
        if not by_name[h[1]] then by_name[h[1]] = {}; names[#names + 1] = h[1] end
        table.insert(by_name[h[1]], h[2])
      end
      for _, name in ipairs(names) do
        local values = by_name[name]
        add(string.format("    [%s] = %s,", literal(name), #values == 1 and literal(values[1]) or literal(values)))
      end
      add("  },")
    elseif k == "multipart" and v then
      add("  multipart = {")
      for _, p in ipairs(v) do add("    " .. part_literal(p) .. ",") end
      add("  },")
    elseif k ~= "headers" and v ~= nil then
      add(string.format("  %s = %s,", k, literal(v)))
    end
  end
  add("}")
  return lines
end

--- Text from an imported file as the rest of a comment line: a line end (CR or LF: Lua ends a
--- comment at either) is a space, so the text cannot leave the comment and become code; other
--- control bytes are written \xHH, so printing the output cannot drive a terminal.
function M.comment_text(s)
  return (tostring(s):gsub("[\r\n]", " "):gsub("%c", function(c) return c == "\t" and c or string.format("\\x%02x", c:byte()) end))
end
local comment_text = M.comment_text

--- The lines every importer's Lua output starts its credentials with: a list of { VAR, what }
--- under `title` (none: no lines); need_function: need(name), which reads one or fails naming it and `source`.
function M.credentials(lines, title, list)
  if #list > 0 then
    lines[#lines + 1] = "-- " .. title .. " come from the environment (never written here):"
    for _, c in ipairs(list) do lines[#lines + 1] = string.format("--   %-30s %s", c[1], comment_text(c[2])) end
  end
end
function M.need_function(lines, source)
  lines[#lines + 1] = "local function need(name)"
  lines[#lines + 1] = "  local value = os.getenv(name)"
  lines[#lines + 1] = '  if value == nil then error(name .. " is not set: it holds a credential of ' .. source .. '", 0) end'
  lines[#lines + 1] = "  return value"
  lines[#lines + 1] = "end"
end

local function head(r, what)
  local lines = { "-- Imported from " .. comment_text(what) .. " by `lunet import`." }
  for _, n in ipairs(r.notes or {}) do lines[#lines + 1] = "-- NOTE: " .. comment_text(n) end
  return lines
end

--- A script that sends the request and prints the status, then the body.
function M.script(r, what)
  local lines = head(r, what)
  for _, l in ipairs(request_lines(r, "")) do lines[#lines + 1] = l end
  lines[#lines + 1] = "print(r.status)"
  lines[#lines + 1] = "io.write(r.body)"
  return table.concat(lines, "\n") .. "\n"
end

--- A `lunet test` file: one test that sends the request and expects a 2xx answer.
function M.test(r, what, name)
  local lines = head(r, what)
  lines[#lines + 1] = string.format("test(%s, function()", literal(name or (r.method .. " " .. r.url)))
  for _, l in ipairs(request_lines(r, "  ")) do lines[#lines + 1] = l end
  lines[#lines + 1] = '  expect(r).to.have_status("2xx")'
  lines[#lines + 1] = "end)"
  return table.concat(lines, "\n") .. "\n"
end

-- A word for bash: bare when it is safe, in '...' otherwise, in $'...' when it holds a control byte.
local function shell_word(s)
  if s ~= "" and s:match("^[%w%%+,./:=@_-]+$") then return s end
  if s:find("[%c]") then
    return "$'" .. s:gsub("[\\']", "\\%0"):gsub("%c", function(c) return string.format("\\x%02x", c:byte()) end) .. "'"
  end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end
M.shell_word = shell_word

--- The one-shot command line (docs/cli.md) that sends the request: METHOD URL, headers as
--- items, the body with --raw, multipart parts with --multipart, and the options that say the
--- rest. What it cannot say is a # NOTE line before it.
function M.cli(r, what)
  local notes = {}
  for _, n in ipairs(r.notes or {}) do notes[#notes + 1] = "# NOTE: " .. comment_text(n) end
  local w = { "lunet", r.method, r.url }
  for _, h in ipairs(r.headers) do
    w[#w + 1] = h[2] == "" and (h[1] .. ";") or (h[1] .. ":" .. h[2])
  end
  local accept = false
  for _, h in ipairs(r.headers) do if h[1]:lower() == "accept" then accept = true end end
  if not accept then w[#w + 1] = "Accept:*/*" end   -- curl's own (the one-shot line's differs for a body)
  if r.content_type then w[#w + 1] = "Content-Type:" .. r.content_type end
  if r.decompress == false then w[#w + 1] = "Accept-Encoding:" end   -- none asked for, as curl
  if r.body then w[#w + 1] = "--raw"; w[#w + 1] = r.body end
  if r.multipart then
    w[#w + 1] = "--multipart"
    for _, p in ipairs(r.multipart) do
      if p.file then w[#w + 1] = p.name .. "@" .. p.file .. (p.content_type and (";type=" .. p.content_type) or "")
      elseif p.data_file then w[#w + 1] = p.name .. "=@" .. p.data_file
      else
        if p.data:sub(1, 1) == "@" then
          notes[#notes + 1] = "# NOTE: " .. comment_text(string.format("--form-string '%s=%s': the one-shot line reads a value that starts with @ as a file; --to script sends it as it is", p.name, p.data))
        end
        w[#w + 1] = p.name .. "=" .. p.data
      end
    end
  end
  local a = r.auth
  if a and (a.basic or a.digest) then
    local c = a.basic or a.digest
    w[#w + 1] = "--auth"; w[#w + 1] = c[1] .. ":" .. c[2]
    if a.digest then w[#w + 1] = "--auth-type"; w[#w + 1] = "digest" end
  elseif a and a.bearer then
    w[#w + 1] = "--auth-type"; w[#w + 1] = "bearer"; w[#w + 1] = "--auth"; w[#w + 1] = a.bearer
  end
  if r.cookies then notes[#notes + 1] = "# NOTE: cookies from the file " .. comment_text(r.cookies) .. ": lunet --session keeps cookies between runs" end
  if r.follow then w[#w + 1] = "--follow" end
  if r.max_redirects then w[#w + 1] = "--max-redirects"; w[#w + 1] = tostring(r.max_redirects) end
  if r.insecure then w[#w + 1] = "--verify"; w[#w + 1] = "no" elseif r.ca_file then w[#w + 1] = "--verify"; w[#w + 1] = r.ca_file end
  if r.timeout then w[#w + 1] = "--timeout"; w[#w + 1] = tostring(r.timeout) end
  if r.connect_timeout then notes[#notes + 1] = "# NOTE: --connect-timeout: the one-shot line has --timeout only" end
  if r.proxy then w[#w + 1] = "--proxy"; w[#w + 1] = r.proxy end
  if r.cert then w[#w + 1] = "--cert"; w[#w + 1] = r.cert end
  if r.cert_key then w[#w + 1] = "--cert-key"; w[#w + 1] = r.cert_key end
  if r.cert_password then w[#w + 1] = "--cert-key-pass"; w[#w + 1] = r.cert_password end
  if r.http_version == "3" then w[#w + 1] = "--http3"
  elseif r.http_version then notes[#notes + 1] = "# NOTE: HTTP/" .. r.http_version .. ": the one-shot line picks the version itself" end
  for i, s in ipairs(w) do w[i] = shell_word(s) end
  table.insert(notes, 1, "# Imported from " .. what .. " by `lunet import`.")
  return table.concat(notes, "\n") .. "\n" .. table.concat(w, " ") .. "\n"
end

return M
