-- Assertions for the project's own Lua tests, and a way to run a test file on its own.
-- Under `lunet test` (scripts/test) each file uses the runner's test(); run directly
-- (`lunet Tests/lua/x_test.lua`) the harness's test() runs it and done() prints the summary.
-- Each test file starts with:
--   local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
--   local test = test or h.test
local H = { passed = 0, failed = 0, skipped = 0, n = 0 }

--- test(name, [opts,] fn) as `lunet test` takes it; of the opts only `skip` (a reason) matters here.
function H.test(name, opts, fn)
  if fn == nil then opts, fn = nil, opts end
  H.n = H.n + 1
  if opts and opts.skip then
    H.skipped = H.skipped + 1
    print("ok " .. H.n .. " - " .. name .. " # SKIP " .. tostring(opts.skip))
    return
  end
  local ok, err = xpcall(fn, function(e) return debug.traceback(tostring(e), 2) end)
  if ok then
    H.passed = H.passed + 1
    print("ok " .. H.n .. " - " .. name)
  else
    H.failed = H.failed + 1
    print("not ok " .. H.n .. " - " .. name)
    print("  # " .. string.gsub(err, "\n", "\n  # "))
  end
end

--- Asserts a == b (deep for tables), naming what was compared.
function H.eq(actual, expected, what)
  local function same(a, b)
    if a == b then return true end
    if type(a) ~= "table" or type(b) ~= "table" then return false end
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  if not same(actual, expected) then
    error(string.format("%s: expected %s, got %s", what or "value", H.show(expected), H.show(actual)), 2)
  end
end

function H.truthy(v, what)
  if not v then error((what or "value") .. " should be truthy, got " .. H.show(v), 2) end
  return v
end

--- Runs fn, which must fail with an error object of `kind`; returns the error.
function H.fails(kind, fn, what)
  local ok, err = pcall(fn)
  if ok then error((what or "call") .. " should have failed with kind " .. kind, 2) end
  if type(err) ~= "table" or err.kind ~= kind then
    error(string.format("%s should have failed with kind %s, got %s", what or "call", kind, tostring(err)), 2)
  end
  return err
end

function H.show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" then return tostring(v) end
  local ok, s = pcall(json.encode, v, { sort_keys = true })
  return ok and s or tostring(v)
end

--- The env variable set by scripts/test-servers; skips nothing: a missing server is a failure.
function H.env(name)
  local v = os.getenv(name)
  if not v then error("environment variable " .. name .. " is not set: run the tests with scripts/test", 2) end
  return v
end

--- "address" or "thread" when scripts/sanitize runs the tests with a sanitized lunet, else nil.
H.sanitizer = os.getenv("LUNET_SANITIZER")

--- Options for a test that runs lunet under a file-size limit (ulimit -f): skipped under
--- ThreadSanitizer, whose runtime writes a file of its own at start (/tmp/tsan.rodata.PID, the
--- shadow of read-only data, mapped from it): under the limit that file stays short, and the
--- first read of the mapping past its end is a SIGBUS inside the runtime ("BUS on unknown
--- address"), before any lunet code runs.
H.under_file_size_limit = { skip = H.sanitizer == "thread" and "ThreadSanitizer's runtime cannot start under ulimit -f (its rodata shadow file)" or nil }

--- A time bound in seconds: under a sanitizer (2-15x slower) it says nothing of lunet's speed.
function H.time_bound(seconds, limit, what)
  if H.sanitizer then return end
  H.truthy(seconds ~= nil and seconds <= limit, what)
end

--- A memory bound on a peak RSS in KB: under a sanitizer it says nothing of lunet's memory
--- (AddressSanitizer keeps freed memory in quarantine and maps shadow memory: 350 MB where
--- lunet holds under 100), so it is checked on every other build only.
function H.memory_bound(kb, limit, what)
  if H.sanitizer then return end
  H.truthy(kb ~= nil and kb < limit, what)
end

--- Runs a shell command; returns its exit code and output (stdout and stderr together).
function H.run(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"__exit=$?\"")
  local out = p:read("a")
  p:close()
  local code = tonumber(out:match("__exit=(%d+)%s*$"))
  return code, (out:gsub("__exit=%d+%s*$", ""))
end

--- os.tmpname() (a new, empty file /tmp/lua_XXXXXX), remembered: H.remove_temps() removes it and
--- whatever a test made from it (a directory in its place, path .. ".lua", ".part", ...). H.script,
--- H.temp_file and H.fresh_cache use it too. A file that makes temporary files registers, at its top,
---   h.cleanup(after_all, h.remove_temps)
--- so they go at the end of the file, whether its tests passed or failed.
H.temps = {}
function H.tmpname()
  local path = os.tmpname()
  H.temps[#H.temps + 1] = path
  return path
end

function H.remove_temps()
  for _, path in ipairs(H.temps) do
    -- The names os.tmpname makes are all as long, so path* is this path and names made from it.
    assert(path:match("^/.*[^/]$"), "not a temporary file's path: " .. path)
    os.execute("rm -rf '" .. path:gsub("'", "'\\''") .. "'*")
  end
  H.temps = {}
end

--- The lunet binary running this test.
function H.lunet()
  if H.lunet_path then return H.lunet_path end
  local i = -1
  while arg[i - 1] do i = i - 1 end
  local path = arg[i]
  -- A relative path (`.build/debug/lunet test ...` typed by hand) names nothing once a test's
  -- command changes directory: made absolute from the directory the run started in.
  if path:find("/", 1, true) and path:sub(1, 1) ~= "/" then
    local p = assert(io.popen("pwd"))
    path = p:read("l") .. "/" .. path
    p:close()
  end
  H.lunet_path = path
  return path
end

--- Writes `text` to a new temporary file whose name ends with `suffix` (".lua" if none); its path.
function H.script(text, suffix)
  local path = H.tmpname() .. (suffix or ".lua")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

--- Files, for tests that write and compare them.
function H.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- A new temporary file holding `content`; its path.
--- Writes `text` to `path` (made or replaced); returns the path.
function H.write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

function H.temp_file(content) return H.write_file(H.tmpname(), content) end

--- A new empty directory, removed with the temporary files.
function H.temp_dir()
  local dir = H.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "'"))
  return dir
end

--- A file's length in bytes (its apparent size), or nil when there is none.
function H.file_size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

function H.sha256sum(path)
  local _, out = H.run("sha256sum " .. path)
  return out:match("^(%x+)")
end

--- Writes `bytes` random bytes to `path`; returns its sha256.
function H.random_file(path, bytes)
  H.run(string.format("head -c %d /dev/urandom > %s", bytes, path))
  return H.sha256sum(path)
end

--- A log file's size once it has stopped growing (unchanged for 0.3 s, 5 s at most): nginx logs
--- a killed client's request when it notices the closed connection, maybe after the kill.
function H.settled_size(path)
  local last, still = H.file_size(path) or 0, 0
  for _ = 1, 100 do
    task.sleep(0.05)
    local now = H.file_size(path) or 0
    if now == last then still = still + 1 else still, last = 0, now end
    if still >= 6 then break end
  end
  return last
end

--- Starts Tests/servers/NAME (a test server that prints its port on its first line); returns the
--- pipe, its pid and the port. The pid comes from the shell, the port from the server: each on
--- a stream of its own, so their order cannot be mixed up.
local function start_with(python, name, ...)
  local dir = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../servers/"
  local pidfile = os.tmpname()
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = " '" .. a:gsub("'", "'\\''") .. "'" end
  local pipe = io.popen(python .. " " .. dir .. name .. table.concat(args) .. " & echo $! > " .. pidfile .. "; wait", "r")
  local port = pipe:read("l")
  local f = io.open(pidfile)
  local pid = f and f:read("l")
  if f then f:close() end
  os.remove(pidfile)
  assert(port and port:match("^%d+$"), "the test server " .. name .. " did not start")
  return pipe, pid, port
end

--- A URL of httpbin (`base`, LUNET_HTTPBIN) whose /base64/ endpoint serves `text`: a document
--- from a server, on httpbin's host (lunet.base64, in the URL alphabet httpbin decodes).
function H.served_by_httpbin(base, text)
  return base .. "/base64/" .. require("lunet.base64").encode(text):gsub("%+", "-"):gsub("/", "_")
end

function H.start_server(name, ...) return start_with("python3", name, ...) end

--- The tests' virtual environment (scripts/venv, which scripts/test runs): its python3.
function H.venv_python()
  return H.env("LUNET_VENV") .. "/bin/python3"
end

--- H.start_server, run by the virtual environment's python (for servers that need its peers).
function H.start_venv_server(name, ...) return start_with(H.venv_python(), name, ...) end

function H.stop_server(pipe, pid)
  if pid then os.execute("kill " .. pid .. " 2>/dev/null") end
  pipe:close()
end

--- A new, empty HTTP cache (http.cache(opts)) in a directory of its own under the temporary
--- directory (`dir = false` keeps it in memory); returns it and its directory. H.remove_caches()
--- removes every directory made so.
function H.fresh_cache(opts)
  if not H.cache_prefix then
    H.cache_prefix = H.tmpname()
    os.remove(H.cache_prefix)
  end
  opts = opts or {}
  if opts.dir == nil then opts.dir = H.cache_prefix .. "-" .. math.random(1e9) end
  local c = http.cache(opts)
  c:clear()
  return c, opts.dir
end

function H.remove_caches()
  if H.cache_prefix then os.execute("rm -rf " .. H.cache_prefix .. "*") end
end

--- Registers cleanup for the end of the file: after its last test, however the file is run.
--- Pass the file's `after_all` (nil when run on its own).
function H.cleanup(after_all, fn)
  if after_all then after_all(fn) else H.cleanups[#H.cleanups + 1] = fn end
end
H.cleanups = {}

function H.done()
  for _, fn in ipairs(H.cleanups) do pcall(fn) end
  if H.n == 0 then return end   -- the file ran under lunet test, whose runner reports
  print("1.." .. H.n)
  print(string.format("%d passed, %d failed", H.passed, H.failed) ..
    (H.skipped > 0 and string.format(", %d skipped", H.skipped) or ""))
  if H.failed > 0 then os.exit(1) end
end

return H
