-- The HTTP cache as Lua sees it: http.cache{...} objects, and the process-wide default one that
-- `cache = true` gives a session.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local errors = require "lunet.errors"

local M = {}

local Cache = {}
Cache.__index = Cache
Cache.__name = "lunet.Cache"

--- c:rule{ host = "*.cdn.example.com", ttl = seconds }: GETs to matching hosts are kept and
--- served for ttl seconds, whatever their headers say.
function Cache:rule(r)
  if type(r) ~= "table" or type(r.host) ~= "string" or type(r.ttl) ~= "number" then
    errors.argument(1, "rule", "{ host = \"*.example.com\", ttl = seconds } expected")
  end
  core.cache_rule(self._core, r.host, r.ttl)
  return self
end

function Cache:stats() return core.cache_stats(self._core) end
function Cache:clear() core.cache_clear(self._core) end
function Cache:purge(url)
  if type(url) ~= "string" then errors.argument(1, "purge", "a URL expected, got " .. type(url)) end
  return core.cache_purge(self._core, url)
end
--- What is stored: { url, status, size, age, ttl, fresh, memory, disk } each.
function Cache:entries() return core.cache_entries(self._core) end

function Cache:__tostring()
  local s = self:stats()
  return string.format("cache (%d hits, %d misses; memory %d entries %d bytes; disk %d entries %d bytes%s)",
    s.hits, s.misses, s.memory_entries, s.memory_bytes, s.disk_entries, s.disk_bytes, s.dir and (" in " .. s.dir) or "")
end

--- http.cache{ dir = path | false, memory = "32MB", disk = "512MB" }
function M.new(opts, parse_size)
  opts = opts or {}
  if type(opts) ~= "table" then errors.argument(1, "cache", "options table expected, got " .. type(opts)) end
  for k in pairs(opts) do
    if k ~= "dir" and k ~= "memory" and k ~= "disk" then errors.raise("argument", "unknown option '" .. tostring(k) .. "' in the cache") end
  end
  local cfg = { dir = opts.dir, memory = parse_size(opts.memory or "32MB", "memory"), disk = parse_size(opts.disk or "512MB", "disk") }
  return setmetatable({ _core = core.cache_new(cfg) }, Cache)
end

function M.is(v) return getmetatable(v) == Cache end

local default
--- The cache `cache = true` means: the XDG cache directory, 32 MB in memory, 512 MB on disk.
function M.default(parse_size)
  if not default then default = M.new({}, parse_size) end
  return default
end

return M
