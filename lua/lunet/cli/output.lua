--- Where a one-shot command's output goes: standard output, or `-o FILE`, which is written to a
--- temporary file beside FILE and renamed into place only once everything is written (a failed
--- request or a full disk leaves no half-written FILE, and an old FILE stays as it was).
---
--- A body printed byte for byte (not formatted) is written as it arrives, so it may be of any
--- size: `max_body` bounds bodies held in memory, and this one never is. When the body is all
--- that is printed it goes straight to the output; when heads come before it, it waits in a
--- temporary file (memory stays flat) and is copied after them.
local M = {}

local BLOCK = 1 << 20

--- The output for `path` (nil: standard output). Returns it, or nil and a message.
function M.open(path)
  if not path then
    return {
      write = function(_, s)
        local ok, err = io.stdout:write(s)
        if not ok then error(err, 0) end
      end,
      commit = function() io.stdout:flush() return true end,
      abort = function() io.stdout:flush() end,
    }
  end
  local temp = string.format("%s.lunet-%d.tmp", path, math.random(1, 1e9))
  local f, err = io.open(temp, "wb")
  if not f then return nil, string.format("-o %s: %s", path, err) end
  local out = { file = f }
  function out.write(_, s)
    local ok, werr = f:write(s)
    if not ok then error(string.format("-o %s: %s", path, werr), 0) end
  end
  function out.commit()
    local ok, cerr = f:close()
    if not ok then os.remove(temp) return false, string.format("-o %s: %s", path, cerr or "the write failed") end
    local renamed, rerr = os.rename(temp, path)
    if not renamed then os.remove(temp) return false, string.format("-o %s: %s", path, rerr) end
    return true
  end
  function out.abort()
    pcall(f.close, f)
    os.remove(temp)
  end
  return out
end

--- Where a raw 2xx body goes while it arrives: straight into `out` when `direct`, else into
--- a temporary file that `copy_to` writes into `out` later. `sink.write` is an on_chunk.
function M.body_sink(out, direct)
  if direct then
    return { write = function(chunk) out:write(chunk) end, copy_to = function() end, streamed = true }
  end
  local spool = assert(io.tmpfile())
  local sink = { streamed = true }
  function sink.write(chunk)
    local ok, err = spool:write(chunk)
    if not ok then error("cannot keep the body while the heads are printed: " .. tostring(err), 0) end
  end
  function sink.copy_to(to)
    spool:seek("set", 0)
    while true do
      local block = spool:read(BLOCK)
      if not block then break end
      to:write(block)
    end
    spool:close()
  end
  return sink
end

return M
