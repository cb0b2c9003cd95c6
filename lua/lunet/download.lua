-- Downloads and uploads. Bytes go straight between the network and disk (memory stays flat);
-- a download lands in NAME.part with its validators in NAME.part.meta, resumes with Range and
-- If-Range (also in a later process), and is renamed to NAME only when complete and verified.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local task = require "lunet.task"
local errors = require "lunet.errors"
local json = require "lunet.json"
local ledger = require "lunet.download_ledger"

local M = {}

local PASS_THROUGH = { "headers", "timeout", "connect_timeout", "insecure", "ca_file", "proxy", "http_version",
                       "query", "cancel", "retry", "wait_for_network", "follow", "max_redirects" }

local function request_options(opts, extra)
  local o = {}
  for _, k in ipairs(PASS_THROUGH) do o[k] = opts[k] end
  o.headers = {}
  for k, v in pairs(opts.headers or {}) do o.headers[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  o.accept_status = false
  o.accept_types = false
  o.max_body = false
  return o
end

local function read_meta(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  local ok, meta = pcall(json.decode, text)
  return ok and type(meta) == "table" and meta or nil
end

-- Progress: the caller's function, and a bar on standard error (bytes, rate, ETA) on a terminal.
local function progress_reporter(opts)
  local fn = type(opts.progress) == "function" and opts.progress or nil
  local bar = opts.progress == "always" or (opts.progress == true and core.isatty(2))
  if not fn and not bar then return nil end
  local started, last_draw = core.now(), 0
  local text = require "lunet.download_progress"
  return function(done, total, final)
    if fn then fn(done, total) end
    if not bar then return end
    local now = core.now()
    if not final and now - last_draw < 0.1 then return end
    last_draw = now
    local line = text.line(done, total, now - started)
    io.stderr:write(line, final and "\n" or "")
    io.stderr:flush()
  end
end

local function verify_and_finish(part, path, meta_path, opts, result)
  if opts.sha256 then
    local digest, problem = core.sha256_file(part)
    if not digest then errors.raise("io", problem) end
    if digest ~= string.lower(opts.sha256) then
      os.remove(part)
      os.remove(meta_path)
      errors.raise("decode", string.format("the download's sha256 is %s, not %s: the partial file was removed", digest, string.lower(opts.sha256)), { url = result.url })
    end
    result.sha256 = digest
  end
  local ok, problem = core.finalize_file(part, path, opts.durable == true)
  if not ok then errors.raise("io", problem) end
  os.remove(meta_path)
  result.path = path
  return result
end

-- A caller's callback (progress, on_chunk) that raises stops the download: the first error is
-- kept, the request is cancelled, and the download fails with that error.
local function guarded(state, fn)
  return function(...)
    if state.failed then return end
    local ok, err = pcall(fn, ...)
    if not ok then
      state.failed = true
      -- A callback's error goes on as it was raised; nil cannot, so it becomes a message.
      if err == nil then err = "a download callback raised an error without a value (error(nil))" end
      state.error = err
      if state.task then state.task:cancel("a callback failed") end
    end
  end
end

-- Runs a request with callbacks whose failure ends it; its response, or the callback's error.
local function request_with_callbacks(session, o, state)
  state.task = session:request_async(o)
  local ok, result = pcall(state.task.await, state.task)
  if state.failed then error(state.error, 0) end
  if not ok then error(result, 0) end
  return result
end

-- `r`, or kind `status` when the server did not answer 2xx.
local function must_be_2xx(r)
  if r.status < 200 or r.status > 299 then
    errors.raise("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r, status = r.status })
  end
  return r
end

-- How often a running download's record is brought up to date, in seconds. Each time the part
-- file's data is synced first (core.record_file), so the record never names bytes a crash could
-- lose; a resume fetches again at most about this much of a fast transfer.
local RECORD_EVERY = 0.5

-- Keeps `record` beside the part file (see download_ledger.lua). save() writes it at most every
-- RECORD_EVERY seconds, save(true) at once; nothing when the download cannot be resumed anyway
-- (no validator) or is streamed to on_chunk only.
local function keeper(part, meta_path, record)
  local last, last_done = -math.huge, -1
  local persist = record.etag ~= nil or record.last_modified ~= nil
  return function(now_please)
    if not persist then return end
    local now, done = core.now(), ledger.done(record)
    if not now_please and (now - last < RECORD_EVERY or done == last_done) then return end
    last, last_done = now, done
    local ok, problem = core.record_file(part, meta_path, ledger.encode(record))
    if not ok then errors.raise("io", problem) end
  end
end

-- Fetches every range `record` misses into `part`, all at once, each segment's `done` advancing
-- as its bytes land. "done" when each arrived whole; "restart" when the server would not send
-- a range of the same representation (a 200 to If-Range, a Content-Range that starts elsewhere).
local function fetch_missing(session, url, part, record, opts, report, save)
  local validator = record.etag or record.last_modified
  local state, list = {}, {}
  for _, m in ipairs(ledger.missing(record)) do
    local seg, base = m.segment, m.segment.done
    local o = request_options(opts, {
      method = "GET", url = url, _progress = true, _stream = opts.on_chunk ~= nil,
      -- A part must be of the version the record holds (FileTarget refuses another ETag).
      _download = { path = part, offset = m.from, range_start = m.from, on_whole = "fail", durable = true,
                    etag = record.etag, last_modified = record.last_modified },
    })
    o.headers["Range"] = "bytes=" .. m.from .. "-" .. (m.to and tostring(m.to) or "")
    if validator then o.headers["If-Range"] = validator end
    o._on_events = guarded(state, function(dl, _, _, _, chunks)
      seg.done = base + dl
      if chunks and opts.on_chunk then for _, c in ipairs(chunks) do opts.on_chunk(c) end end
      save()
      if report then report(ledger.done(record), record.length) end
    end)
    list[#list + 1] = { task = session:request_async(o), segment = seg, base = base, from = m.from }
    state.task = list[#list].task
  end
  local tasks = {}
  for i, item in ipairs(list) do tasks[i] = item.task end
  local ok, results = pcall(function() return task.all(tasks):await() end)
  if state.failed or not ok then
    for _, t in ipairs(tasks) do t:cancel() end
    -- What did arrive stays recorded for the next resume.
    for _, item in ipairs(list) do
      local r = item.task.state == "done" and item.task.result
      if r then item.segment.done = item.base + (core.response_download(r._raw) or 0) end
    end
    pcall(save, true)
    if state.failed then error(state.error, 0) end
    local e = results
    if type(e) == "table" and e.kind == "protocol" then return "restart" end   -- a range it would not send
    error(e, 0)
  end
  for i, r in ipairs(results) do
    local item = list[i]
    if r.status == 416 and item.segment.last == nil then
      -- The open end of a body of unknown length: it ended where we asked to start.
      record.length = item.from
      item.segment.last = item.from - 1
    elseif r.status ~= 206 then
      return "restart"
    else
      local written = core.response_download(r._raw) or 0
      item.segment.done = item.base + written
      if item.segment.last == nil then
        record.length = item.segment.first + item.segment.done
        item.segment.last = record.length - 1
      end
    end
  end
  save(true)
  if not ledger.complete(record) then
    errors.raise("protocol", string.format("the download stopped at %d of %d bytes", ledger.done(record), record.length or 0), { url = url })
  end
  return "done"
end

-- One stream from the first byte. Its record is made when the response's head has arrived
-- (FileTarget writes the validators and length to the meta file then).
local function fresh_single(session, url, part, meta_path, opts, report)
  local record, save
  local state = {}
  local o = request_options(opts, {
    method = "GET", url = url, _progress = true, _stream = opts.on_chunk ~= nil,
    _download = { path = part, meta = meta_path, offset = 0, durable = true },
  })
  o._on_events = guarded(state, function(dl, dltotal, _, _, chunks)
    -- The record is made once the body has begun (FileTarget has written the validators then).
    if not record and dl > 0 then
      local m = read_meta(meta_path) or {}
      record = ledger.new(url, m.etag, m.last_modified, math.tointeger(m.length), 1)
      save = keeper(part, meta_path, record)
      if not (m.etag or m.last_modified) then os.remove(meta_path) end   -- nothing to resume with
    end
    if record then
      record.segments[1].done = dl
      save()
    end
    if chunks and opts.on_chunk then for _, c in ipairs(chunks) do opts.on_chunk(c) end end
    if report then report(dl, dltotal > 0 and dltotal or nil) end
  end)
  local ok, r = pcall(function() return must_be_2xx(request_with_callbacks(session, o, state)) end)
  if not ok then
    -- Nothing of the body was kept (a refused answer, a failure before the first byte): there
    -- is nothing to resume, so nothing is left behind.
    if (core.file_size(part) or 0) == 0 then os.remove(part); os.remove(meta_path) end
    error(r, 0)
  end
  local written = core.response_download(r._raw) or 0
  local m = read_meta(meta_path) or {}
  local length = math.tointeger(m.length)
  if length and written ~= length then
    if record then record.segments[1].done = written; pcall(save, true) end
    errors.raise("protocol", string.format("the download stopped at %d of %d bytes", written, length), { url = url })
  end
  return r.status, written, r.headers
end

-- N ranges in parallel, recorded so that a resume knows which bytes each holds; nil when the
-- server cannot do ranges (or gives no length): the caller then uses one stream.
local function fresh_segmented(session, url, part, meta_path, opts, report)
  local head = session:request(request_options(opts, { method = "HEAD", url = url }))
  local length = math.tointeger(tonumber(head.headers["content-length"]))
  local ranges_ok = (head.headers["accept-ranges"] or ""):lower():find("bytes", 1, true)
  local n = math.floor(opts.segments)
  if head.status ~= 200 or not ranges_ok or not length or length < n * 65536 then return nil end
  local record = ledger.new(url, head.headers["etag"], head.headers["last-modified"], length, n)
  local f = io.open(part, "wb")
  if not f then errors.raise("io", "cannot write '" .. part .. "'") end
  f:close()
  local save = keeper(part, meta_path, record)
  save(true)
  if fetch_missing(session, url, part, record, opts, report, save) == "restart" then
    os.remove(part)
    os.remove(meta_path)
    return nil
  end
  return length
end

--- A task of { path, status, bytes, resumed_from, sha256, url }.
function M.download_async(session, url, path, opts)
  if type(url) ~= "string" then errors.argument(1, "download", "URL string expected, got " .. type(url)) end
  opts = opts or {}
  if path ~= nil and type(path) ~= "string" then errors.argument(2, "download", "file path expected, got " .. type(path)) end
  if path == nil and not opts.on_chunk then errors.argument(2, "download", "a file path (or an on_chunk function) is needed") end
  if opts.on_chunk ~= nil and type(opts.on_chunk) ~= "function" then errors.argument(3, "download", "on_chunk must be a function") end
  if opts.segments ~= nil and (type(opts.segments) ~= "number" or opts.segments < 1) then
    errors.argument(3, "download", "segments must be a number of at least 1")
  end
  -- Before the first byte is asked for: a destination that cannot take the file.
  if path then
    local kind, problem = core.destination_problem(path)
    if kind then errors.raise(kind, problem, { url = url }) end
  end
  return task.spawn(function()
    local report = progress_reporter(opts)
    if not path then
      -- streamed to a function only: nothing on disk
      local o = request_options(opts, { method = "GET", url = url, _stream = true, _progress = report ~= nil })
      local state, delivered = {}, 0
      o._on_events = guarded(state, function(dl, dltotal, _, _, chunks)
        if chunks then for _, c in ipairs(chunks) do delivered = delivered + #c; opts.on_chunk(c) end end
        if report then report(dl, dltotal > 0 and dltotal or nil) end
      end)
      local r = must_be_2xx(request_with_callbacks(session, o, state))
      if report then report(delivered, delivered, true) end
      return { status = r.status, url = r.url }
    end

    local part, meta_path = path .. ".part", path .. ".part.meta"
    local result = { url = url, resumed_from = 0 }

    -- Resume only from a record that can be trusted, and only what it says is missing.
    if opts.resume then
      local f = io.open(meta_path, "r")
      local text = f and f:read("a")
      if f then f:close() end
      local record = ledger.load(text, url, core.file_size(part))
      if record then
        result.resumed_from = ledger.done(record)
        local save = keeper(part, meta_path, record)
        if ledger.complete(record) or fetch_missing(session, url, part, record, opts, report, save) == "done" then
          result.status, result.bytes = 206, record.length
          if report then report(record.length, record.length, true) end
          return verify_and_finish(part, path, meta_path, opts, result)
        end
        result.resumed_from = 0   -- the server would not continue it: from the start
      end
    end
    os.remove(part)
    os.remove(meta_path)

    if opts.segments and opts.segments > 1 and not opts.on_chunk then
      local length = fresh_segmented(session, url, part, meta_path, opts, report)
      if length then
        local got = core.file_size(part)
        if got ~= length then errors.raise("protocol", string.format("the parts add up to %d bytes, not %d", got or 0, length), { url = url }) end
        result.status, result.bytes, result.segments = 200, got, math.floor(opts.segments)
        if report then report(got, length, true) end
        return verify_and_finish(part, path, meta_path, opts, result)
      end
    end

    local status, written, headers = fresh_single(session, url, part, meta_path, opts, report)
    result.status, result.bytes, result.headers = status, written, headers
    if report then report(written, written, true) end
    return verify_and_finish(part, path, meta_path, opts, result)
  end)
end

--- A task of the response to uploading the file at `path`: raw (`as = "raw"`, the default) or
--- as a multipart part (`as = "multipart"`, field name `field`, default "file").
function M.upload_async(session, url, path, opts)
  if type(url) ~= "string" then errors.argument(1, "upload", "URL string expected, got " .. type(url)) end
  if type(path) ~= "string" then errors.argument(2, "upload", "file path expected, got " .. type(path)) end
  opts = opts or {}
  local size = core.file_size(path)
  if not size then errors.raise("io", "cannot read the file to upload '" .. path .. "'") end
  local report = progress_reporter(opts)
  local o = request_options(opts, { method = string.upper(opts.method or "PUT"), url = url, _progress = report ~= nil })
  o.accept_status, o.accept_types, o.max_body = nil, nil, nil
  if (opts.as or "raw") == "multipart" then
    o.multipart = { [opts.field or "file"] = { file = path, content_type = opts.content_type } }
  else
    o._upload_file = path
    if opts.content_type then o.headers["Content-Type"] = opts.content_type end
  end
  if report then
    o._on_events = function(_, _, up, uptotal) report(up, uptotal > 0 and uptotal or size) end
  end
  return session:request_async(o):next(function(r)
    if report then report(size, size, true) end
    return r
  end)
end

return M
