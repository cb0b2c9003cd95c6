--- A command line as a POSIX shell (bash) splits it into words, for `lunet import curl`: what
--- browsers' "Copy as cURL" (bash form) and API docs paste. Single quotes keep everything; double
--- quotes keep everything but \" \\ \$ \` and a backslash before a newline; bash's $'...' reads
--- C escapes (\n \t \r \\ \' \" \xHH \uHHHH \UHHHHHHHH \NNN \e \a \b \f \v); an unquoted backslash
--- keeps the next character, and before a newline joins the lines. Pure; raises
--- { import = message } naming the place (line and column) of an unclosed quote. Variables,
--- globs, $(...) and backquotes are not expanded: they are named as left as written.
local M = {}

local C_ESCAPES = { n = "\n", t = "\t", r = "\r", ["\\"] = "\\", ["'"] = "'", ['"'] = '"', e = "\27", E = "\27",
                    a = "\a", b = "\b", f = "\f", v = "\v", ["?"] = "?" }

-- Line and column of byte i of text.
local function place(text, i)
  local line, col = 1, 1
  for j = 1, i - 1 do
    if text:sub(j, j) == "\n" then line, col = line + 1, 1 else col = col + 1 end
  end
  return string.format("line %d, column %d", line, col)
end

local function fail(text, i, what) error({ import = string.format("%s at %s", what, place(text, i)) }, 0) end

-- $'...' from i (just past the opening quote): its text and the index past the closing quote.
local function ansi_c(text, i, start)
  local out = {}
  while true do
    local c = text:sub(i, i)
    if c == "" then fail(text, start, "a $'...' quote is not closed") end
    if c == "'" then return table.concat(out), i + 1 end
    if c == "\\" then
      local e = text:sub(i + 1, i + 1)
      if C_ESCAPES[e] then out[#out + 1] = C_ESCAPES[e]; i = i + 2
      elseif e == "x" then
        local hex = text:match("^%x%x?", i + 2)
        if not hex then out[#out + 1] = "\\x"; i = i + 2
        else out[#out + 1] = string.char(tonumber(hex, 16)); i = i + 2 + #hex end
      elseif e == "u" or e == "U" then
        local hex = text:match(e == "u" and "^%x%x?%x?%x?" or "^%x%x?%x?%x?%x?%x?%x?%x?", i + 2)
        if not hex then out[#out + 1] = "\\" .. e; i = i + 2
        else out[#out + 1] = utf8.char(tonumber(hex, 16)); i = i + 2 + #hex end
      elseif e:match("[0-7]") then
        local oct = text:match("^[0-7][0-7]?[0-7]?", i + 1)
        out[#out + 1] = string.char(tonumber(oct, 8) % 256); i = i + 1 + #oct
      else out[#out + 1] = "\\" .. e; i = i + 2 end
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
end

--- The words of `text`: a list of strings, and a list of notes on what a shell would have
--- expanded and was left as written ("$HOME at line 1, column 9").
function M.split(text)
  local words, notes = {}, {}
  local cur, in_word = {}, false
  local i, n = 1, #text
  local function finish()
    if in_word then words[#words + 1] = table.concat(cur) end
    cur, in_word = {}, false
  end
  while i <= n do
    local c = text:sub(i, i)
    if c == "\\" and text:sub(i + 1, i + 1) == "\n" then i = i + 2
    elseif c == "\\" and text:sub(i + 1, i + 2) == "\r\n" then i = i + 3
    elseif c:match("[ \t\r\n]") then finish(); i = i + 1
    elseif c == "#" and not in_word then   -- a comment, to the end of the line
      i = (text:find("\n", i, true) or n) + 1
    elseif c == "\\" then cur[#cur + 1] = text:sub(i + 1, i + 1); in_word = true; i = i + 2
    elseif c == "'" then
      local close = text:find("'", i + 1, true)
      if not close then fail(text, i, "a '...' quote is not closed") end
      cur[#cur + 1] = text:sub(i + 1, close - 1); in_word = true; i = close + 1
    elseif c == "$" and text:sub(i + 1, i + 1) == "'" then
      local s
      s, i = ansi_c(text, i + 2, i)
      cur[#cur + 1] = s; in_word = true
    elseif c == '"' then
      local j, start = i + 1, i
      while true do
        local d = text:sub(j, j)
        if d == "" then fail(text, start, 'a "..." quote is not closed') end
        if d == '"' then break end
        if d == "\\" and text:sub(j + 1, j + 1):match('["\\$`]') then cur[#cur + 1] = text:sub(j + 1, j + 1); j = j + 2
        elseif d == "\\" and text:sub(j + 1, j + 1) == "\n" then j = j + 2
        else
          if (d == "$" and text:sub(j + 1, j + 1):match("[%w_{(]")) or d == "`" then
            notes[#notes + 1] = string.format("%s at %s is left as written (no shell expands it here)", d, place(text, j))
          end
          cur[#cur + 1] = d; j = j + 1
        end
      end
      in_word = true; i = j + 1
    else
      if (c == "$" and text:sub(i + 1, i + 1):match("[%w_{(]")) or c == "`" then
        notes[#notes + 1] = string.format("%s at %s is left as written (no shell expands it here)", c, place(text, i))
      end
      cur[#cur + 1] = c; in_word = true; i = i + 1
    end
  end
  finish()
  return words, notes
end

return M
