--- Text from a server made safe to show on a terminal: control bytes (ESC starts the sequences
--- that move the cursor, recolour, retitle the window or write to the clipboard) are shown
--- escaped, as \x1b, instead of being obeyed. Bytes a body needs to read as text stay: a line
--- feed, a tab, a CR before a line feed. C1 controls written in UTF-8 (U+0080-U+009F, which
--- some terminals take as CSI) are shown as \u{9b}. Plain text passes unchanged, uncopied.
local M = {}

local byte, char, format, find, sub, concat = string.byte, string.char, string.format, string.find, string.sub, table.concat

local function escaped(s, keep_lines)
  if not find(s, "[%c\194]") then return s end
  local out, i = {}, 1
  while true do
    local j = find(s, "[%c\194]", i)
    if not j then
      out[#out + 1] = sub(s, i)
      break
    end
    out[#out + 1] = sub(s, i, j - 1)
    local c = byte(s, j)
    if keep_lines and (c == 10 or c == 9 or (c == 13 and byte(s, j + 1) == 10)) then
      out[#out + 1] = char(c)
    elseif c == 194 then
      local d = byte(s, j + 1)
      if d and d >= 128 and d <= 159 then
        out[#out + 1] = format("\\u{%x}", d)
        j = j + 1
      else
        out[#out + 1] = "\194"
      end
    else
      out[#out + 1] = format("\\x%02x", c)
    end
    i = j + 1
  end
  return concat(out)
end

--- `s` for a terminal, keeping its line feeds, tabs and CR LF pairs.
function M.text(s) return escaped(s, true) end

--- `s` as one line for a terminal: every control byte escaped, line feeds too.
function M.line(s) return escaped(s, false) end

return M
