--- The one-shot command line: `lunet [METHOD] URL [ITEM ...]`, as HTTPie users type it
--- (docs/cli.md). main(argv) parses, builds the request, sends it (or prints it), prints what
--- --print asks for and returns the exit status. The parts: args.lua (options), items.lua
--- (request items), build.lua (the request), render.lua (output), lunet.session_store.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"
local args = require "lunet.cli.args"
local build = require "lunet.cli.build"
local http = require "lunet.http"
local output = require "lunet.cli.output"
-- Loaded when a head is printed (-v, --offline, --curl): a plain GET never needs it.
local heads = setmetatable({}, { __index = function(_, name) return require("lunet.cli.heads")[name] end })

local M = {}

-- HTTPie's exit statuses.
local EXIT = { ok = 0, error = 1, usage = 2, timeout = 2, redirects = 6, interrupted = 130 }

-- A message on standard error: what a server sent in it (a reason phrase, a header) shows its
-- control bytes escaped, never obeyed by the terminal (lunet.output).
local function say(fmt, ...)
  require("lunet.output").complain("lunet: ", string.format(fmt, ...))
end

local function read_file(path, size_only)
  local f, err = io.open(path, "rb")
  if not f then return nil, (err:gsub("^[^:]*: ", "")) end
  if size_only then
    local size = f:seek("end")
    f:close()
    return size
  end
  local bytes = f:read("a")
  f:close()
  if not bytes then return nil, "cannot be read" end
  return bytes
end

--- The help text, from the option table.
function M.usage()
  local lines = {
    "usage: lunet [METHOD] URL [ITEM ...] [options]",
    "",
    "Sends one request, as HTTPie does; the first argument decides: an HTTP method or a URL",
    "(with a scheme, or :PORT/path, host:port/path, localhost...) is a request, a file that",
    "exists is a script (lunet --help for scripts and the prompt).",
    "",
    "Items:  Header:Value  Header:  Header;  name==query  name=string  name:=json",
    "        name=@file  name:=@file  field@file[;type=MIME]  @file (the body)",
    "",
    "Options:",
  }
  local names = {}
  for name in pairs(args.OPTIONS) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local o = args.OPTIONS[name]
    local flag = (o.short and ("-" .. o.short .. ", ") or "    ") .. "--" .. name .. (o.value and (" " .. o.value) or "")
    lines[#lines + 1] = string.format("  %-38s %s", flag, o.help)
  end
  return table.concat(lines, "\n")
end

-- What to print: HTTPie's --print letters, from the options and where stdout goes.
local function print_spec(o, to_terminal)
  local spec = o.print
  if o.verbose then spec = "HBhb"
  elseif o.headers then spec = "h"
  elseif o.body then spec = "b"
  elseif o.quiet then spec = ""
  elseif not spec then spec = o.offline and "HB" or (to_terminal and "hb" or "b") end
  local bad = spec:match("[^HBhbm]")
  if bad then return nil, string.format("--print=%s: '%s' is not one of H, B, h, b, m", spec, bad) end
  local want = {}
  for c in spec:gmatch(".") do want[c] = true end
  return want
end

local function pretty_spec(o, to_terminal)
  local p = o.pretty or (to_terminal and "all" or "none")
  if p ~= "all" and p ~= "colors" and p ~= "format" and p ~= "none" then
    return nil, string.format("--pretty=%s: use all, colors, format or none", p)
  end
  local color = (p == "all" or p == "colors") and not os.getenv("NO_COLOR")
  return { color = color, format = p == "all" or p == "format" }
end

-- Session options from the command line's flags.
local function session_options(o, q, host)
  local s = { follow = o.follow == true, max_redirects = tonumber(o["max-redirects"]) or 30 }
  if o["max-redirects"] and not tonumber(o["max-redirects"]) then
    return nil, string.format("--max-redirects=%s: a number is needed", o["max-redirects"])
  end
  if o.timeout then
    s.timeout = tonumber(o.timeout)
    if not s.timeout or s.timeout <= 0 then return nil, string.format("--timeout=%s: a number of seconds is needed", o.timeout) end
  end
  local v = o.verify
  if v then
    local lower = v:lower()
    if lower == "no" or lower == "false" then s.insecure = true
    elseif lower ~= "yes" and lower ~= "true" then s.ca_file = v end
  end
  if o.proxy then
    local _, u = o.proxy:match("^(%a+):(.+)$")
    if u and u:find("^%a[%w+.-]*://") then s.proxy = u else s.proxy = o.proxy end
  end
  if o.http3 and o["http3-only"] then return nil, "--http3 and --http3-only: choose one" end
  if o.http3 then s.http_version = "3" elseif o["http3-only"] then s.http_version = "3-only" end
  s.cert, s.cert_key, s.cert_password = o.cert, o["cert-key"], o["cert-key-pass"]
  if (o["cert-key"] or o["cert-key-pass"]) and not o.cert then
    return nil, (o["cert-key"] and "--cert-key" or "--cert-key-pass") .. " needs --cert"
  end
  -- As HTTPie and curl -n: credentials for the host from ~/.netrc (or $NETRC) unless --auth
  -- gives some or --ignore-netrc says not to.
  if not o.auth and not o["ignore-netrc"] then s.netrc = true end
  -- Cookies the server sets are kept for this run (a redirect, a digest challenge), as HTTPie does.
  s.cookies = true
  if o.cache then s.cache = true end
  -- lunet.auth.cli loads only for a command line that names auth (a plain GET never does).
  if o["auth-type"] or o["aws-sigv4"] or o.auth then
    local auth_err
    s.auth, auth_err = require("lunet.auth.cli").options(o, host)
    if auth_err then return nil, auth_err end
  end
  return s
end

-- What curl needs besides the request itself to do what the session does (secrets masked):
-- the settings response.curl_flags exports, as r:curl() gives them, and what only a session
-- that has not sent yet needs (a token it would fetch).
local function curl_flags(sopts, session)
  local settings = { cert = sopts.cert, cert_key = sopts.cert_key, cert_password = sopts.cert_password ~= nil,
                     insecure = sopts.insecure, ca_file = sopts.ca_file, netrc = sopts.netrc, proxy = sopts.proxy,
                     http_version = sopts.http_version }
  local extra = require("lunet.auth.cli").curl_settings(session._options.auth, settings)
  local flags = require("lunet.response").curl_flags(settings)
  for _, f in ipairs(extra) do flags[#flags + 1] = f end
  return flags, settings
end

-- The request's own options for session:request.
-- `record_head`: keep the head libcurl sent (to print it with -v / --print=H); it costs a
-- debug callback per transfer, so only when it is shown.
local function request_options(q, record_head)
  local headers = {}
  for _, h in ipairs(q.headers) do
    local name, value = h[1], h[2]
    local cur = headers[name]
    if value == false or cur == nil or cur == false then headers[name] = value
    elseif type(cur) == "table" then cur[#cur + 1] = value
    else headers[name] = { cur, value } end
  end
  local function set_default(name, value)
    for k in pairs(headers) do if k:lower() == name:lower() then return end end
    headers[name] = value
  end
  if q.accept then set_default("Accept", q.accept) end
  if q.content_type then set_default("Content-Type", q.content_type) end
  return { method = q.method, url = q.url, headers = headers, body = q.body, multipart = q.multipart, _record_head = record_head or nil }
end

-- An error's exit status, as HTTPie's.
local function error_status(e)
  if e.kind == "timeout" then return EXIT.timeout end
  if e.kind == "redirects" then return EXIT.redirects end
  if e.kind == "cancelled" then return EXIT.interrupted end
  return EXIT.error
end

-- `lunet -d -c` on a file that is there whole: lunet renames a download into place only when
-- complete, so a file with no .part beside it is complete; it is not fetched again when the
-- server still gives that length (HTTPie says the same of a finished download).
local function already_complete(session, target, dest, headers)
  local size = core.file_size(dest)
  if not size or core.file_size(dest .. ".part") then return false end
  local ok, r = pcall(session.request, session, { method = "HEAD", url = target, headers = headers })
  return ok and r.status == 200 and tonumber(r.headers["content-length"]) == size
end

-- The command line read into what a run needs (the parsed options, the request, what to print
-- and how, the session), or nil and the exit status, its problem already said.
local function prepare(argv)
  local p, err = args.parse(argv)
  if not p then say("%s", err) return nil, EXIT.usage end
  local o = p.options
  if o.help then print(M.usage()) return nil, EXIT.ok end

  local stdin
  if not o["ignore-stdin"] and not o.raw then
    local kind = core.fd_kind(0)
    if kind == "pipe" or kind == "file" then
      stdin = io.stdin:read("a")
      if stdin == "" then stdin = nil end
    end
  end
  local q
  q, err = build.request(p, read_file, stdin)
  if not q then say("%s", err) return nil, EXIT.usage end

  local to_terminal = core.isatty(1) and not o.output
  local want, look
  want, err = print_spec(o, to_terminal)
  if not want then say("%s", err) return nil, EXIT.usage end
  look, err = pretty_spec(o, to_terminal)
  if not look then say("%s", err) return nil, EXIT.usage end
  look.escape = to_terminal   -- a terminal shows what a server sent, never obeys it
  if o.continue and not o.download then say("--continue needs --download") return nil, EXIT.usage end

  local host = q.url:match("^%a[%w+.-]*://([^/?#]*)") or ""
  local sopts
  sopts, err = session_options(o, q, host)
  if not sopts then say("%s", err) return nil, EXIT.usage end
  local named = o.session or o["session-read-only"]
  if named then
    sopts.name = named
    sopts.host = q.url   -- a named session is the URL's host's (session_store)
    sopts.read_only = o["session-read-only"] ~= nil
    require("lunet.session_store").quiet_new = true   -- made on first use, as HTTPie's
  end
  local session = http.session(sopts)
  local auth_problem = o["auth-type"] == "oauth2" and require("lunet.auth.cli").check_session(o, session)
  if auth_problem then say("%s", auth_problem) return nil, EXIT.usage end
  local opts = request_options(q, want.H)
  if o.curl or o.offline then require("lunet.auth.cli").show_api_key(q, opts, session._options.auth) end
  return {
    o = o, q = q, want = want, look = look, to_terminal = to_terminal, sopts = sopts,
    session = session, opts = opts, named = named,
  }
end

-- What is printed goes to standard output or -o FILE (lunet.cli.output: FILE appears only when
-- complete), in order: emit() collects, flush() writes, done() completes it. `out.dest` is the
-- destination once opened.
local function printer(o)
  local out, chunks = {}, {}
  function out.emit(s) chunks[#chunks + 1] = s end
  function out.destination()
    local dest_err
    if not out.dest then out.dest, dest_err = output.open(o.output and not o.download and o.output or nil) end
    if not out.dest then say("%s", dest_err) end
    return out.dest
  end
  function out.flush()
    if not out.destination() then return false end
    local text = table.concat(chunks)
    chunks = {}
    local ok, werr = pcall(out.dest.write, out.dest, text)
    if not ok then say("%s", tostring(werr)) out.dest.abort() return false end
    return true
  end
  function out.done()
    local ok, cerr = out.dest.commit()
    if not ok then say("%s", cerr) end
    return ok
  end
  return out
end

-- The printer loads when something is printed beyond the body itself (a redirected body is
-- written byte for byte, with no formatting to load).
local render = setmetatable({}, { __index = function(_, name) return require("lunet.cli.render")[name] end })

-- --curl: the curl command line for the request, nothing sent.
local function show_curl(c)
  local q, flat = c.q, {}
  for _, f in ipairs(select(2, heads.offline_head(q, c.opts, c.session))) do
    if f[1] ~= "Host" and f[1] ~= "Content-Length" and not (q.multipart and f[1] == "Content-Type") then
      flat[#flat + 1] = f[1]; flat[#flat + 1] = f[2]
    end
  end
  local flags, settings = curl_flags(c.sopts, c.session)
  print(require("lunet.response").curl_of({
    method = q.method, url = q.url, body = q.body, multipart = q.multipart,
    headers = require("lunet.headers").from_flat(flat), flags = flags, settings = settings,
  }))
  return EXIT.ok
end

-- The request's head and body as --print's H and B ask, from what was sent (`sent_head`) or,
-- with --offline, what would be (a multipart body whole: c.multipart). `gap` follows the body:
-- HTTPie's separator when more is printed after it, else nothing (a newline on a terminal).
local function emit_request(c, out, sent_head, gap)
  local q, want, look = c.q, c.want, c.look
  if want.H then
    local secrets = require "lunet.secrets"   -- credentials masked, as in --curl and HAR
    local line, fields
    if sent_head then line, fields = heads.split_head(sent_head)
    else line, fields = heads.offline_head(q, c.opts, c.session, c.multipart) end
    -- A head sent has its version after the target, as libcurl sent it (HTTP/2 included); a
    -- head made for --offline has none, and says HTTP/1.1 as HTTPie does.
    local method, target, version
    if sent_head then method, target, version = line:match("^(%S+) (%S+) (%S+)")
    else method, target = line:match("^(%S+) (.*)$") end
    out.emit(render.request_head(method or q.method, secrets.mask_url(target or q.url), version or "HTTP/1.1",
      secrets.mask_fields(fields), look) .. "\n\n")
  end
  if want.B then
    if q.body then out.emit(render.body(q.body, q.content_type, look) .. gap)
    elseif c.multipart then out.emit(render.body(c.multipart.body, "multipart/form-data", look) .. gap)
    elseif q.multipart then out.emit(heads.multipart_summary(q.multipart) .. gap) end
  end
end

-- --download: the body to a file, resumed with --continue, named as the server suggests.
local function run_download(c)
  local o, q, session = c.o, c.q, c.session
  local names = require "lunet.cli.download_name"
  local dest = o.output or names.untaken(names.from_url(q.url), o.continue)
  if o.continue and already_complete(session, q.url, dest, c.opts.headers) then
    io.stderr:write(string.format("lunet: %s is already complete (%d bytes): nothing was downloaded\n", dest, core.file_size(dest)))
    return EXIT.ok
  end
  local ok, result = pcall(function()
    return http.download(q.url, dest, { session = session, resume = o.continue == true, progress = true, headers = c.opts.headers })
  end)
  if not ok then
    say("%s", errors.is(result) and tostring(result) or errors.describe(result))
    -- --check-status: the status's class, as for any request (HTTPie's 3, 4, 5).
    if o["check-status"] and errors.is(result) and result.kind == "status" and result.status then
      local class = result.status // 100
      if class >= 3 and class <= 5 then return class end
    end
    return errors.is(result) and error_status(result) or EXIT.error
  end
  -- The server's name for it, when it gives one and the user did not (HTTPie's choice too).
  local suggested = not o.output and not o.continue and result.headers
    and names.from_content_disposition(result.headers["content-disposition"])
  if suggested and suggested ~= result.path then
    local final = names.untaken(suggested)
    local renamed, problem = os.rename(result.path, final)
    if renamed then result.path = final
    else say("kept %s: could not rename it to %s (%s)", result.path, final, problem) end
  end
  io.stderr:write(string.format("Saved %s (%d bytes)\n", result.path, result.bytes))
  return EXIT.ok
end

-- The response's body as --print's b asks: copied from where it waited when it was streamed
-- (`sink`), formatted for a terminal or --pretty, else byte for byte. False when writing failed.
local function emit_body(c, out, r, sink)
  local look = c.look
  if sink and r.status >= 200 and r.status < 300 then
    -- Arrived already: after the heads, from where it waited (nothing to do when direct).
    if not out.flush() then return false end
    local copied, cerr = pcall(sink.copy_to, out.dest)
    if not copied then say("%s", tostring(cerr)) out.dest.abort() return false end
  elseif c.to_terminal or look.format or look.color then
    local text_ok, text = pcall(function() return r.text end)
    local shown = render.body(r.body, r.headers["content-type"], { color = look.color, format = look.format, escape = look.escape, text = text_ok and text or nil })
    if shown ~= "" then out.emit(shown .. "\n") end
  else
    out.emit(r.body)   -- byte for byte
  end
  return true
end

-- What follows a response printed: a named session saved, --check-status's exit status.
local function finish(c, r)
  local o = c.o
  if c.named and not o["session-read-only"] then
    -- As HTTPie: the headers given on the command line join the session (session_store
    -- leaves out the ones about one request's body or condition).
    for _, field in ipairs(c.q.headers) do c.session.headers[field[1]] = field[2] or nil end
    local saved, serr = pcall(c.session.save, c.session)
    if not saved then say("%s", tostring(serr)) return EXIT.error end
  end
  if c.hooks and c.hooks.on_response then   -- lunet api: the response checked against its document
    local status = c.hooks.on_response(r)
    if status then return status end
  end
  if o["check-status"] then
    local class = r.status // 100
    if class >= 3 and class <= 5 then
      if not c.to_terminal then io.stderr:write(string.format("lunet: warning: HTTP %d %s\n", r.status, r.reason)) end
      return class
    end
  end
  return EXIT.ok
end

-- The request sent and the exchange printed as --print asks.
local function send(c, out)
  local want, look = c.want, c.look
  -- A body printed byte for byte is written as it arrives, whatever its size (max_body bounds
  -- bodies held in memory): straight out when it is all that is printed, else kept in a
  -- temporary file until the heads before it are out (lunet.cli.output). Not with --cache,
  -- which keeps the body (and whose answers come from memory).
  local sink
  if want.b and not (c.to_terminal or look.format or look.color) and not c.o.cache and not c.hooks then   -- lunet api reads the body after
    if not out.destination() then return EXIT.error end
    sink = output.body_sink(out.dest, not (want.H or want.B or want.h))
    c.opts.on_chunk = sink.write
  end
  local ok, r = pcall(c.session.request, c.session, c.opts)
  if not ok then
    if out.dest then out.dest.abort() end
    say("%s", errors.is(r) and tostring(r) or errors.describe(r))
    return errors.is(r) and error_status(r) or EXIT.error
  end
  local more = want.h or want.b or want.m
  emit_request(c, out, r.request and r.request.sent_head, more and "\n\n" or (c.to_terminal and "\n" or ""))
  if want.h then out.emit(render.response_head(r.http_version, r.status, r.reason, r.headers:list(), look) .. "\n\n") end
  if want.b and not emit_body(c, out, r, sink) then return EXIT.error end
  if want.m then
    out.emit(string.format("Elapsed time: %.6fs\n", r.elapsed or 0))
    -- With --cache, where the answer came from: hit, miss, revalidated, stale (docs/cache.md).
    if c.session._options.cache and r.cache then out.emit("Cache: " .. tostring(r.cache) .. "\n") end
  end
  if not out.flush() or not out.done() then return EXIT.error end
  return finish(c, r)
end

local function run(argv, hooks)
  local c, status = prepare(argv)
  if not c then return status end
  c.hooks = hooks
  if c.o.curl then return show_curl(c) end
  local out = printer(c.o)
  if c.o.offline then
    if c.q.multipart then
      local text = require "lunet.cli.multipart_text"
      local boundary = text.boundary()
      local body, err = text.body(c.q.multipart, boundary, read_file, build.type_of)
      if not body then say("%s", err) return EXIT.usage end
      c.multipart = { boundary = boundary, body = body }
    end
    emit_request(c, out, nil, c.to_terminal and "\n" or "")
    return out.flush() and out.done() and EXIT.ok or EXIT.error
  end
  if c.o.har then http.record(c.o.har) end
  if c.o.download then return run_download(c) end
  return send(c, out)
end

--- Runs the command line; the process's exit status.
--- `hooks.on_response(r)` (lunet api's) may give the exit status after the response is printed.
function M.main(argv, hooks)
  local ok, status = pcall(run, argv, hooks)
  http._save_records()   -- --har: written whatever happened, as at a script's end
  if ok then return status end
  local e = status
  say("%s", errors.is(e) and tostring(e) or errors.describe(e))
  return errors.is(e) and error_status(e) or EXIT.error
end

return M
