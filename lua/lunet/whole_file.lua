--- A file written whole or not at all: the content goes to a temporary file beside it, which is
--- closed (where a full disk or a file-size limit shows) and only then renamed into place. A
--- failure removes the temporary file and leaves the old file as it was. For reports and
--- exports (`lunet test`'s, `lunet load`'s), whose readers must never see half of one.
local M = {}

--- Writes `content` to `path`; true, or nil and the reason.
function M.write(path, content)
  local temp = string.format("%s.lunet-%d.tmp", path, math.random(1, 1e9))
  local f, err = io.open(temp, "wb")
  -- The reason without the temporary file's name, which the caller never gave ("No such file
  -- or directory" for a path in a missing directory): callers name `path` themselves.
  if not f then return nil, (tostring(err):gsub("^.-%.lunet%-%d+%.tmp: ", "")) end
  local ok, werr = f:write(content)
  local closed, cerr = f:close()
  if not (ok and closed) then os.remove(temp) return nil, werr or cerr end
  local renamed, rerr = os.rename(temp, path)
  if not renamed then os.remove(temp) return nil, rerr end
  return true
end

return M
