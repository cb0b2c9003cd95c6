--- The end of a `lunet load` run or merge, the same for both: the first failures and the
--- summary (escaped on a terminal: an error message can hold what a server sent), then the
--- files asked for, each written whole or not at all, and last the result line.
local core = select(2, ...)   -- lunet.core, from the module's loader (lunet_wrap_module_chunk)
local json = require "lunet.json"
local summary = require "lunet.load.summary"

local M = {}


--- FILE with TEXT, whole or not at all (lunet.whole_file); true, or false and the reason.
function M.write_whole(path, text) return require("lunet.whole_file").write(path, text) end

--- Whether a file can be written at `path` when the run ends: the path is no directory, and
--- its directory is there and takes a new file. True, or nil and the reason; `lunet load` asks
--- before the run, so that a run is not lost to a path mistyped.
function M.can_write(path)
  local f = io.open(path, "rb")
  if f then
    local _, err = f:read(0)   -- a directory opens, and reading it says what it is
    f:close()
    if err then return nil, err end
  end
  local probe = string.format("%s.lunet-%d.tmp", path, math.random(1, 1e9))
  local p, perr = io.open(probe, "wb")
  if not p then return nil, (tostring(perr):gsub("^.*: ", "")) end
  p:close()
  os.remove(probe)
  return true
end

--- Writes what `o` asks for: o.failures (a list in order: message, count, scenario,
--- traceback), o.view (lunet.load.summary's), o.notes (lines under the summary: a live
--- output's account), o.summary_export, o.report (a path) with
--- o.report_model (a function making lunet.load.report_model's model), o.result_line (a
--- record printed as the last line of standard output). Returns false when a file could not be
--- written (each said on stderr), else true.
function M.conclude(o, stdout, stderr)
  local output = require "lunet.output"
  local err_text, out_text = output.for_fd(2), output.for_fd(1)
  for i = 1, math.min(3, #(o.failures or {})) do
    local f = o.failures[i]
    stderr:write(string.format("lunet load: %d iteration%s of %s failed: %s\n", f.count, f.count == 1 and "" or "s",
      f.scenario, err_text(f.traceback and require("lunet.traceback").user(f.traceback) or f.message)))
  end
  local view = o.view
  local width = tonumber(os.getenv("COLUMNS")) or 80   -- what the shell says, when it exports it
  local histogram = M.histogram(view.registry, width)   -- numbers and bars only: never escaped
  stdout:write("\n", out_text(summary.text(view)), histogram and ("\n\n" .. histogram) or "", "\n\n")
  for _, note in ipairs(o.notes or {}) do stdout:write("     ", out_text(note), "\n") end
  if o.notes then stdout:write("\n") end
  stdout:flush()
  local all_written = true
  local function write(what, path, content)
    local ok, err = M.write_whole(path, content)
    if not ok then
      stderr:write("lunet load: cannot write ", what, " ", path, ": ", tostring(err), "\n")
      all_written = false
    end
  end
  if o.summary_export then write("the summary export", o.summary_export, json.encode(summary.export(view)) .. "\n") end
  if o.report then write("the report", o.report, require("lunet.load.report").html(o.report_model())) end
  if o.result_line then
    stdout:write(json.encode(o.result_line), "\n")
    stdout:flush()
  end
  return all_written
end

--- The latency histogram under the summary (as `hey` draws one), all requests' durations.
function M.histogram(registry, width)
  local m = registry.metrics.http_req_duration
  if not m then return nil end
  local total = require("lunet.load.hdr").new()
  for _, s in pairs(m.sinks) do total:merge(s) end
  if total.count == 0 then return nil end
  local lines = require("lunet.load.histogram_text").lines(total, { width = math.max(60, math.min(width, 100)), buckets = 10,
                                       color = core.isatty(1) and not os.getenv("NO_COLOR") })
  if #lines == 0 then return nil end
  return "     http_req_duration histogram:\n" .. table.concat(lines, "\n")
end

return M
