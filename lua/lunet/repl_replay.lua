--- How a line run at the prompt is written into the script `.save` makes, so that the script
--- does what the prompt did. The prompt runs each line as a chunk of its own, tried first as an
--- expression (`return LINE`), and keeps the first value the chunk returned in `_`. A script is
--- one chunk: its statements share locals, a `return` ends it, and a call keeps nothing. So:
---   an expression whose value the prompt kept   ->  _ = LINE
---   a statement that returned values            ->  _ = (function() LINE end)()
---   a statement with a `return` of its own       ->  ;(function() LINE end)()
---   a statement that declares top-level locals   ->  do LINE end   (they died with the line)
---   anything else                               ->  LINE (after a ';' if it opens with '(')
local M = {}

local OPENS = { ["function"] = true, ["do"] = true, ["if"] = true, ["repeat"] = true }
local CLOSES = { ["end"] = true, ["until"] = true }

-- The end of a long bracket opened at `i` ("[[", "[==["), or nil when there is none at `i`.
local function long_bracket_end(code, i)
  local level = code:match("^%[(=*)%[", i)
  if not level then return nil end
  local _, stop = code:find("]" .. level .. "]", i, true)
  return stop or #code
end

--- What the main function of `code` (a chunk that compiles) holds at its top level: whether it
--- has a `return` (outside nested functions) and whether it declares a local outside any block.
function M.scan(code)
  local found = { top_return = false, top_local = false }
  local stack, functions = {}, 0
  local i, n = 1, #code
  while i <= n do
    local c = code:sub(i, i)
    if c:find("%s") then
      i = i + 1
    elseif code:find("^%-%-", i) then
      i = (long_bracket_end(code, i + 2) or code:find("\n", i, true) or n) + 1
    elseif c == "[" and long_bracket_end(code, i) then
      i = long_bracket_end(code, i) + 1
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = code:sub(j, j)
        if d == "\\" then j = j + 2
        elseif d == c then break
        else j = j + 1 end
      end
      i = j + 1
    elseif c:find("[%a_]") then
      local word = code:match("^[%a_][%w_]*", i)
      if OPENS[word] then
        stack[#stack + 1] = word
        if word == "function" then functions = functions + 1 end
      elseif CLOSES[word] then
        if stack[#stack] == "function" then functions = functions - 1 end
        stack[#stack] = nil
      elseif word == "return" and functions == 0 then
        found.top_return = true
      elseif word == "local" and #stack == 0 then
        found.top_local = true
      end
      i = i + #word
    elseif c:find("%d") then
      i = i + #code:match("^%d[%w_.]*", i)   -- so that 1e5 or 0x1f is not read as a name
    else
      i = i + 1
    end
  end
  return found
end

local function is_expression(code) return load("return " .. code, "=line", "t") ~= nil end
local function is_statement(code) return load(code, "=line", "t") ~= nil end

--- The script text for a line that succeeded at the prompt; `kept` says whether the prompt
--- kept a value of it in `_`. Nil when replaying it would do nothing.
function M.line(code, kept)
  if is_expression(code) then
    if kept then return "_ = " .. code end
    if not is_statement(code) then return nil end   -- an expression of no value (`...`)
  else
    local found = M.scan(code)
    if kept then return "_ = (function()\n" .. code .. "\nend)()" end
    if found.top_return then return ";(function()\n" .. code .. "\nend)()" end
    if found.top_local then return "do\n" .. code .. "\nend" end
  end
  -- A line opening with '(' would otherwise continue the line before it as a call.
  if code:find("^%s*%(") then return ";" .. code end
  return code
end

return M
