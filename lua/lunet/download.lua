-- Downloads and uploads. Bytes go straight between the network and disk (memory stays flat);
-- a download lands in NAME.part with its validators in NAME.part.meta, resumes with Range and
-- If-Range (also in a later process), and is renamed to NAME only when complete and verified.
local core = require "lunet.core"
local task = require "lunet.task"
local errors = require "lunet.errors"
local json = require "lunet.json"

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
  local function human(n)
    local units = { "B", "KB", "MB", "GB", "TB" }
    local i = 1
    while n >= 1024 and i < #units do n = n / 1024; i = i + 1 end
    return string.format(i == 1 and "%d %s" or "%.1f %s", n, units[i])
  end
  return function(done, total, final)
    if fn then fn(done, total) end
    if not bar then return end
    local now = core.now()
    if not final and now - last_draw < 0.1 then return end
    last_draw = now
    local elapsed = math.max(now - started, 1e-3)
    local rate = done / elapsed
    local line
    if total and total > 0 then
      local width = 24
      local filled = math.min(width, math.floor(done / total * width))
      local eta = rate > 0 and (total - done) / rate or 0
      line = string.format("\r[%s%s] %s / %s  %s/s  ETA %ds ", string.rep("#", filled), string.rep(" ", width - filled),
        human(done), human(total), human(rate), math.floor(eta + 0.5))
    else
      line = string.format("\r%s  %s/s ", human(done), human(rate))
    end
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

-- One stream, resuming `part` from `offset` when the server allows it.
local function single(session, url, part, meta_path, opts, offset, meta, report)
  local extra = {
    method = "GET", url = url,
    _download = { path = part, meta = meta_path, offset = offset, range_start = offset > 0 and offset or nil, on_whole = "restart",
                  durable = opts.durable == true },
    _progress = report ~= nil, _stream = opts.on_chunk ~= nil,
  }
  local o = request_options(opts, extra)
  if offset > 0 then
    o.headers["Range"] = "bytes=" .. offset .. "-"
    o.headers["If-Range"] = meta.etag or meta.last_modified
  end
  local state = {}
  if report or opts.on_chunk then
    o._on_events = guarded(state, function(dl, dltotal, _, _, chunks)
      if chunks and opts.on_chunk then for _, c in ipairs(chunks) do opts.on_chunk(c) end end
      if report then report(offset + dl, dltotal > 0 and offset + dltotal or nil) end
    end)
  end
  return request_with_callbacks(session, o, state)
end

-- N ranges in parallel into the same part file; nil when the server cannot do ranges.
local function segmented(session, url, part, meta_path, opts, report)
  local head = session:request(request_options(opts, { method = "HEAD", url = url }))
  local length = tonumber(head.headers["content-length"])
  local ranges_ok = (head.headers["accept-ranges"] or ""):lower():find("bytes", 1, true)
  local n = math.floor(opts.segments)
  if head.status ~= 200 or not ranges_ok or not length or length < n * 65536 then return nil end
  local validator = head.headers["etag"] or head.headers["last-modified"]
  local f = io.open(meta_path, "w")
  if f then
    f:write(json.encode({ url = url, etag = head.headers["etag"], last_modified = head.headers["last-modified"], length = length }))
    f:close()
  end
  os.remove(part)
  local size = math.ceil(length / n)
  local done, list, state = {}, {}, {}
  for i = 1, n do
    local first, last = (i - 1) * size, math.min(length, i * size) - 1
    if first <= last then
      local o = request_options(opts, {
        method = "GET", url = url,
        _download = { path = part, offset = first, range_start = first, on_whole = "fail" },
        _progress = report ~= nil,
      })
      o.headers["Range"] = string.format("bytes=%d-%d", first, last)
      if validator then o.headers["If-Range"] = validator end
      if report then
        o._on_events = guarded(state, function(dl)
          done[i] = dl
          local sum = 0
          for _, v in pairs(done) do sum = sum + v end
          report(sum, length)
        end)
      end
      list[#list + 1] = session:request_async(o)
    end
  end
  local ok, results = pcall(function() return task.all(list):await() end)
  if state.failed then
    for _, t in ipairs(list) do t:cancel() end
    error(state.error, 0)
  end
  if not ok then
    local e = results
    for _, t in ipairs(list) do t:cancel() end
    if type(e) == "table" and e.kind == "protocol" then return nil end   -- the server ignored a range
    error(e, 0)
  end
  for _, r in ipairs(results) do
    if r.status ~= 206 then return nil end
  end
  return results[1], length
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
      local r = request_with_callbacks(session, o, state)
      if r.status < 200 or r.status > 299 then
        errors.raise("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r })
      end
      if report then report(delivered, delivered, true) end
      return { status = r.status, url = r.url }
    end

    local part, meta_path = path .. ".part", path .. ".part.meta"
    local meta = read_meta(meta_path)
    local offset = 0
    local size = core.file_size(part)
    if opts.resume and size and size > 0 and meta and meta.url == url and (meta.etag or meta.last_modified) then
      offset = size
    else
      os.remove(part)
      os.remove(meta_path)
      meta = nil
    end
    local result = { url = url, resumed_from = offset }

    if offset == 0 and opts.segments and opts.segments > 1 and not opts.on_chunk then
      local r, length = segmented(session, url, part, meta_path, opts, report)
      if r then
        local got = core.file_size(part)
        if got ~= length then errors.raise("protocol", string.format("the parts add up to %d bytes, not %d", got or 0, length), { url = url }) end
        result.status, result.bytes, result.segments = 200, got, math.floor(opts.segments)
        if report then report(got, length, true) end
        return verify_and_finish(part, path, meta_path, opts, result)
      end
      os.remove(part)   -- no ranges here: one stream instead
    end

    local r = single(session, url, part, meta_path, opts, offset, meta, report)
    if r.status == 416 and offset > 0 and meta and meta.length == offset then
      -- the part file already holds the whole thing
      result.status, result.bytes = 200, offset
      return verify_and_finish(part, path, meta_path, opts, result)
    end
    if r.status < 200 or r.status > 299 then
      errors.raise("status", string.format("the server answered %d %s", r.status, r.reason), { url = r.url, response = r })
    end
    local written, restarted, final_size = core.response_download(r._raw)
    final_size = final_size or core.file_size(part) or 0
    if restarted then result.resumed_from = 0 end
    local now_meta = read_meta(meta_path)
    if now_meta and now_meta.length and now_meta.length ~= final_size then
      errors.raise("protocol", string.format("the download stopped at %d of %d bytes", final_size, now_meta.length), { url = url })
    end
    result.status, result.bytes = r.status, final_size
    if report then report(final_size, final_size, true) end
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
