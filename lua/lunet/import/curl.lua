--- `lunet import curl`: a curl command line as the request it sends (docs/import.md). Reads the
--- options browsers' "Copy as cURL" and API docs use; an option lunet cannot carry over is named
--- in the notes, never dropped without a word. Pure: words in (lunet.import.shell_words), a
--- request description out (lunet.import.render writes it as a script, a test or a command line).
local M = {}

-- Options with a value: long and short names -> the field they set.
local VALUE = {
  ["-X"] = "method", ["--request"] = "method", ["--url"] = "url", ["-H"] = "header", ["--header"] = "header",
  ["-d"] = "data", ["--data"] = "data", ["--data-ascii"] = "data", ["--data-raw"] = "data_raw",
  ["--data-binary"] = "data_binary", ["--data-urlencode"] = "data_urlencode", ["--json"] = "json",
  ["-F"] = "form", ["--form"] = "form", ["--form-string"] = "form",
  ["-u"] = "user", ["--user"] = "user", ["-A"] = "user_agent", ["--user-agent"] = "user_agent",
  ["-e"] = "referer", ["--referer"] = "referer", ["-b"] = "cookie", ["--cookie"] = "cookie",
  ["--oauth2-bearer"] = "bearer", ["--cacert"] = "ca_file", ["-E"] = "cert", ["--cert"] = "cert", ["--key"] = "cert_key",
  ["-m"] = "timeout", ["--max-time"] = "timeout", ["--connect-timeout"] = "connect_timeout",
  ["-x"] = "proxy", ["--proxy"] = "proxy", ["--max-redirs"] = "max_redirects",
  ["-o"] = "output", ["--output"] = "output", ["-c"] = "cookie_jar", ["--cookie-jar"] = "cookie_jar",
}
-- Flags -> the field set true.
local FLAG = {
  ["-G"] = "get", ["--get"] = "get", ["-I"] = "head", ["--head"] = "head", ["-k"] = "insecure", ["--insecure"] = "insecure",
  ["-L"] = "location", ["--location"] = "location", ["--compressed"] = "compressed", ["--digest"] = "digest",
  ["--basic"] = "basic", ["--http1.1"] = "http11", ["--http2"] = "http2", ["--http3"] = "http3",
  ["--http2-prior-knowledge"] = "http2_prior",
  -- curl's own display: nothing of the request
  ["-s"] = "display", ["--silent"] = "display", ["-S"] = "display", ["--show-error"] = "display",
  ["--no-progress-meter"] = "display", ["-#"] = "display", ["--progress-bar"] = "display", ["-g"] = "display", ["--globoff"] = "display",
  ["-v"] = "shown", ["--verbose"] = "shown", ["-i"] = "shown", ["--include"] = "shown", ["-f"] = "shown", ["--fail"] = "shown",
  ["-N"] = "display", ["--no-buffer"] = "display",
}

local function fail(message) error({ import = message }, 0) end

--- The request a curl command line's words describe (the first word may be "curl"):
--- { method, url, headers = { { name, value }, ... }, body, content_type, auth, insecure, follow,
--- decompress, timeout, connect_timeout, proxy, ca_file, cert, cert_key, cookies, http_version,
--- max_redirects, notes = { ... } }.
function M.parse(words)
  local o = { header = {}, data = {}, notes = {} }
  local function note(fmt, ...) o.notes[#o.notes + 1] = string.format(fmt, ...) end
  local i = (words[1] == "curl") and 2 or 1
  local function take(field, value, name)
    if field == "header" then o.header[#o.header + 1] = value
    elseif field == "data" or field == "data_raw" or field == "data_binary" or field == "data_urlencode" or field == "json" then
      o.data[#o.data + 1] = { kind = field, value = value, option = name }
    elseif field == "form" then o.form = o.form or {}; o.form[#o.form + 1] = { value = value, option = name }
    elseif field == "output" then note("%s %s: the response is the script's (r.body); write it with io.open", name, value)
    elseif field == "cookie_jar" then note("%s %s: cookies are kept in memory for the run (a session's cookies = FILE writes them)", name, value)
    else o[field] = value end
  end
  while i <= #words do
    local w = words[i]
    if w:sub(1, 2) == "--" then
      if VALUE[w] then
        i = i + 1
        if words[i] == nil then fail("option '" .. w .. "' needs a value") end
        take(VALUE[w], words[i], w)
      elseif FLAG[w] then o[FLAG[w]] = w
      else note("%s: not a curl option lunet carries over; left out", w) end
    elseif w:sub(1, 1) == "-" and #w > 1 then
      local j = 2
      while j <= #w do
        local name = "-" .. w:sub(j, j)
        if VALUE[name] then
          local v = w:sub(j + 1)
          if v == "" then i = i + 1; v = words[i]; if v == nil then fail("option '" .. name .. "' needs a value") end end
          take(VALUE[name], v, name)
          break
        elseif FLAG[name] then o[FLAG[name]] = name
        else note("%s: not a curl option lunet carries over; left out", name) end
        j = j + 1
      end
    else
      if o.url then note("%s: a second URL; only the first is imported", w) else o.url = w end
    end
    i = i + 1
  end
  if not o.url then fail("no URL in the curl command line") end
  return M.request(o, note)
end

-- application/x-www-form-urlencoded's encoding of one value, as curl's --data-urlencode does it:
-- unreserved bytes kept, a space as +, every other byte %XX.
local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return c == " " and "+" or string.format("%%%02X", c:byte()) end))
end

--- One -F / --form-string value as a multipart part: name=value (a field), name=@FILE[;type=T]
--- [;filename=N] (a file, streamed from disk), name=<FILE (a field holding the file's text: named
--- in a note, since the script reads it when it runs). --form-string takes the value as it is.
function M.form_part(spec, option, note)
  local name, value = spec:match("^([^=]*)=(.*)$")
  if not name then fail(option .. " '" .. spec .. "': a part is name=value, name=@file or name=<file") end
  if option == "--form-string" then return { name = name, data = value } end
  local first = value:sub(1, 1)
  if first == "@" or first == "<" then
    local path, params = value:sub(2):match("^([^;]*)(.*)$")
    local part = { name = name }
    for key, v in params:gmatch(";%s*(%w+)=([^;]*)") do
      if key == "type" then part.content_type = v elseif key == "filename" then part.filename = v
      else note("%s '%s': ;%s= is not carried over", option, spec, key) end
    end
    if first == "@" then part.file = path
    else
      note("%s '%s': the field's text is read from %s when the script runs", option, spec, path)
      part.data_file = path
    end
    return part
  end
  return { name = name, data = value }
end

-- Reads the parsed options into the request.
function M.request(o, note)
  local r = { url = o.url, headers = {}, notes = o.notes }
  if not r.url:match("^%a[%w+.-]*://") then r.url = "http://" .. r.url end   -- curl's default scheme
  for _, h in ipairs(o.header) do
    local name, value = h:match("^([^:;]+):%s*(.*)$")
    if name and value == "" then note("-H '%s': a header curl would remove; lunet sends its own or none", h)
    elseif name then r.headers[#r.headers + 1] = { name, value }
    else
      local empty = h:match("^([^:;]+);$")
      if empty then r.headers[#r.headers + 1] = { empty, "" } else note("-H '%s': not a header; left out", h) end
    end
  end
  local function has(name)
    for _, h in ipairs(r.headers) do if h[1]:lower() == name:lower() then return true end end
  end
  if o.user_agent then r.headers[#r.headers + 1] = { "User-Agent", o.user_agent } end
  if o.referer then r.headers[#r.headers + 1] = { "Referer", o.referer } end
  if o.cookie then
    if o.cookie:find("=", 1, true) then r.headers[#r.headers + 1] = { "Cookie", o.cookie }
    else r.cookies = o.cookie end
  end
  -- The body: -d pieces joined by &, --json pieces joined as they are.
  local pieces, json = {}, false
  for _, d in ipairs(o.data) do
    local v = d.value
    if (d.kind == "data" or d.kind == "data_binary" or d.kind == "json") and v:sub(1, 1) == "@" then
      note("%s %s: the body is read from a file; the imported request sends the file's name instead: replace it", d.option, v)
    end
    if d.kind == "data_urlencode" then
      local name, content = v:match("^([^=]*)=(.*)$")
      if name then v = (name ~= "" and name .. "=" or "") .. urlencode(content)
      elseif v:find("@", 1, true) then note("%s %s: read from a file; left as written", d.option, v)
      else v = urlencode(v) end
    end
    if d.kind == "json" then json = true end
    pieces[#pieces + 1] = v
  end
  if #pieces > 0 then
    local body = table.concat(pieces, json and "" or "&")
    if o.get then
      r.url = r.url .. (r.url:find("?", 1, true) and "&" or "?") .. body
    else
      r.body = body
      if not has("Content-Type") then r.content_type = json and "application/json" or "application/x-www-form-urlencoded" end
      if json and not has("Accept") then r.headers[#r.headers + 1] = { "Accept", "application/json" } end
    end
  end
  if o.form then
    if r.body then note("-d and -F together: curl refuses them; the import keeps -F") end
    r.body, r.content_type = nil, nil
    r.multipart = {}
    for _, f in ipairs(o.form) do r.multipart[#r.multipart + 1] = M.form_part(f.value, f.option, note) end
  end
  r.method = o.method or (o.head and "HEAD") or (((r.body or r.multipart) and not o.get) and "POST") or "GET"
  if o.user then
    local user, password = o.user:match("^([^:]*):(.*)$")
    if not user then note("-u %s: curl would ask for the password; the import sends none", o.user); user, password = o.user, "" end
    r.auth = o.digest and { digest = { user, password } } or { basic = { user, password } }
  end
  if o.bearer then r.auth = { bearer = o.bearer } end
  r.insecure = o.insecure and true or nil
  r.follow = o.location and true or false   -- curl follows no redirect without -L
  r.max_redirects = o.max_redirects and tonumber(o.max_redirects) or nil
  r.decompress = o.compressed and true or false   -- without --compressed curl asks for no coding
  r.timeout = o.timeout and tonumber(o.timeout) or nil
  r.connect_timeout = o.connect_timeout and tonumber(o.connect_timeout) or nil
  r.proxy, r.ca_file = o.proxy, o.ca_file
  if o.cert then
    local file, pass = o.cert:match("^(.-):([^/]*)$")
    r.cert, r.cert_password = file or o.cert, pass
  end
  r.cert_key = o.cert_key
  r.http_version = (o.http11 and "1.1") or (o.http2_prior and "2-prior-knowledge") or (o.http3 and "3") or (o.http2 and "2") or nil
  if o.shown then note("%s: what curl prints; the script prints r.status and r.body (lunet -v shows the heads)", o.shown) end
  return r
end

-- The request options a description's keys map to (a session takes auth and cookies).
local REQUEST_KEYS = { "method", "url", "body", "content_type", "insecure", "ca_file", "cert", "cert_key",
                       "cert_password", "proxy", "follow", "max_redirects", "decompress", "timeout", "connect_timeout", "http_version" }

--- The description `r` as http.request's options, and the session options it needs (nil when
--- none): what the prompt sends when a curl command line is pasted at it.
function M.options(r)
  local opts = {}
  for _, k in ipairs(REQUEST_KEYS) do opts[k] = r[k] end
  if #r.headers > 0 then
    opts.headers = {}
    for _, h in ipairs(r.headers) do
      local have = opts.headers[h[1]]
      if have == nil then opts.headers[h[1]] = h[2]
      elseif type(have) == "table" then have[#have + 1] = h[2]
      else opts.headers[h[1]] = { have, h[2] } end
    end
  end
  if r.multipart then
    opts.multipart = {}
    for i, p in ipairs(r.multipart) do
      local part = {}
      for k, v in pairs(p) do if k ~= "data_file" then part[k] = v end end
      if p.data_file then
        local f = assert(io.open(p.data_file, "rb"))
        part.data = f:read("a")
        f:close()
      end
      opts.multipart[i] = part
    end
  end
  local session = (r.auth or r.cookies) and { auth = r.auth, cookies = r.cookies } or nil
  return opts, session
end

return M
