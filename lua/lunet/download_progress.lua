--- The download progress bar's text (pure: tested without the network or a terminal). Any
--- rate a body arrives at, 0 and fractions of a byte a second included, and any count a server
--- sends (more than it announced, or nothing at all), makes a line; none raises.
local M = {}

local UNITS = { "B", "KB", "MB", "GB", "TB" }

--- `n` bytes for a person: "512 B", "1.5 MB". A fraction of a byte is shown whole (a rate of
--- 0.4 B/s is "0 B"); a negative count or NaN as 0.
function M.human(n)
  if n ~= n or n < 0 then n = 0 end
  local i = 1
  while n >= 1024 and i < #UNITS do
    n = n / 1024
    i = i + 1
  end
  if i == 1 then return string.format("%d %s", math.floor(n), UNITS[i]) end
  return string.format("%.1f %s", n, UNITS[i])
end

--- The seconds left at `rate` bytes a second for `left` bytes: "12s", or "?" when nothing
--- arrives (rate 0) or the wait is past 99 hours.
function M.eta(left, rate)
  if not (rate > 0) then return "?" end
  local s = math.max(0, left) / rate + 0.5
  if s ~= s or s >= 99 * 3600 then return "?" end
  return string.format("%ds", math.floor(s))
end

--- One line of the bar: `done` bytes of `total` (nil or 0 when the length is not known) after
--- `elapsed` seconds.
function M.line(done, total, elapsed)
  local rate = done / math.max(elapsed, 1e-3)
  if total and total > 0 then
    local width = 24
    local filled = math.max(0, math.min(width, math.floor(done / total * width)))
    return string.format("\r[%s%s] %s / %s  %s/s  ETA %s ", string.rep("#", filled), string.rep(" ", width - filled),
      M.human(done), M.human(total), M.human(rate), M.eta(total - done, rate))
  end
  return string.format("\r%s  %s/s ", M.human(done), M.human(rate))
end

return M
