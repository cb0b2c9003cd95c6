--- Tracebacks as a user reads them: the frames of lunet's own Lua (lua/lunet/*), and the C
--- functions it called, fold into one line per stretch, `[lunet]: in method 'await'`, as Lua
--- shows a C function as one `[C]` line. LUNET_TRACEBACK=full keeps every frame (for a bug in
--- lunet itself).
local M = {}

--- Whether LUNET_TRACEBACK=full asks for every frame.
function M.full()
  return os.getenv("LUNET_TRACEBACK") == "full"
end

local function kind(line)
  if line:find("^%s*lua/lunet/") then return "lunet" end
  if line:find("^%s*%[C%]:") then return "C" end
  if line:find("^%s*%(%.%.%.tail calls%.%.%.%)") then return "tail" end
  return "user"
end

-- The name a folded stretch goes by: the function the user's code called into, when it has one
-- a user could know (`http.get`, `await`), as `in function 'error'` names a C function.
local function called_as(line)
  local what, name = line:match(":%d+: in (%a+) '([^']*)'")
  if what == "function" or what == "method" or what == "field" then
    return string.format("in %s '%s'", what, name)
  end
  return "in ?"
end

--- Which of `lines` (frames as debug.traceback writes them, innermost first) are lunet's own: its
--- Lua frames, C functions they called, and the tail calls that led into them.
local function internal_marks(lines)
  local kinds, marks = {}, {}
  for i, line in ipairs(lines) do kinds[i] = kind(line) end
  for i, k in ipairs(kinds) do
    if k == "lunet" then
      marks[i] = true
    elseif k == "C" then
      local j = i + 1                        -- the frame that called it
      while kinds[j] == "C" or kinds[j] == "tail" do j = j + 1 end
      marks[i] = kinds[j] == "lunet"
    elseif k == "tail" then
      marks[i] = marks[i - 1] == true
    else
      marks[i] = false
    end
  end
  return marks
end

-- `text` cut after its last "stack traceback:" line (a message may quote another traceback).
local function split(text)
  local at, stop
  repeat
    local a, b = text:find("\nstack traceback:\n", (at or 0) + 1, true)
    if a then at, stop = a, b end
  until not a
  if not at then return nil end
  return text:sub(1, stop - 1), text:sub(stop + 1)
end

--- The frames of traceback `text` (the lines after "stack traceback:") a user is shown.
function M.frames(text)
  local lines = {}
  local _, frames = split(text)
  if not frames then return lines end
  for line in (frames .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  if M.full() then return lines end
  local marks, out = internal_marks(lines), {}
  local i = 1
  while i <= #lines do
    if marks[i] then
      -- Named by its outermost frame, or by the outermost that has a name (a stretch at the
      -- bottom of a VU's stack ends in an anonymous function: `in method 'iterate'` says more).
      local outermost, named
      while marks[i] do
        if kind(lines[i]) == "lunet" then
          outermost = lines[i]
          if called_as(lines[i]) ~= "in ?" then named = lines[i] end
        end
        i = i + 1
      end
      local as = called_as(outermost or "")
      out[#out + 1] = "\t[lunet]: " .. (as == "in ?" and named and called_as(named) or as)
    else
      out[#out + 1] = lines[i]
      i = i + 1
    end
  end
  return out
end

--- `text` (a message and a traceback, as debug.traceback makes them) with lunet's frames folded.
function M.user(text)
  if M.full() then return text end
  local head = split(text)
  if not head then return text end
  return head .. "\n" .. table.concat(M.frames(text), "\n")
end

return M
