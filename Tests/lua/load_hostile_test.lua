-- `lunet load` against ../shared/HOSTILE.md's classes that apply to it: secrets in a URL do not
-- reach the summary or its files, a server's control bytes are shown escaped on a terminal,
-- tag sets do not grow without bound, and the summary export is never left half written.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
if not LUNET:find("^/") then LUNET = os.getenv("PWD") .. "/" .. LUNET end
local NGINX = h.env("LUNET_NGINX")
local BIN = h.env("LUNET_HTTPBIN")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- `lunet load` on `source` with `args`: the exit status, stdout and stderr.
local function load(source, args)
  local script = h.temp_file(source, ".lua")
  local err = h.tmpname()
  local code, out = h.run("{ " .. q(LUNET) .. " load --quiet " .. q(script) .. " " .. (args or "") .. " 2>" .. q(err) .. "; }")
  return code, out, h.read_file(err) or ""
end

test("a URL's password and secret query values are masked in the summary, the export and --out json", function()
  local url = NGINX:gsub("^http://", "http://user:s3cretpw@") .. "/small.txt?access_token=tok3nvalue&page=2"
  local export, stream = h.tmpname(), h.tmpname()
  local code, out, err = load(string.format([[
options = { iterations = 4, vus = 1, thresholds = { ["http_req_duration{status:200}"] = { "max < 60000" } } }
return function(vu) assert(vu.session:get(%q).status == 200) end]], url),
    "--summary-export " .. q(export) .. " --out json=" .. q(stream))
  eq(code, 0, err .. out)
  local written = out .. err .. (h.read_file(export) or "") .. (h.read_file(stream) or "")
  truthy(not written:find("s3cretpw", 1, true), "the password is nowhere")
  truthy(not written:find("tok3nvalue", 1, true), "the token is nowhere")
  truthy((h.read_file(stream) or ""):find("page=2", 1, true), "the rest of the URL is the name:\n" .. (h.read_file(stream) or ""))
end)

test("a server's control bytes in an error are shown escaped on a terminal", function()
  local dir = h.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local terminals = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "terminal.lua").new(h, dir)
  local script = h.temp_file(string.format([[
options = { iterations = 1, vus = 1 }
return function(vu)
  local r = vu.session:get(%q)   -- ESC ] 2 ; pwned BEL (the window's title), and ESC [ 31m
  error("the server said: " .. r.body, 0)
end]], BIN .. "/base64/G10yO3B3bmVkByBhbmQgG1szMW1yZWQ="), ".lua")
  local t = terminals:open(q(LUNET) .. " load --quiet " .. q(script) .. "; echo __exit=$?; sleep 60")
  t:wait_for("__exit=", 20)
  local screen = t:screen(true)
  t:close()
  terminals:stop()
  truthy(screen:find("\\x1b]2;pwned\\x07", 1, true), "the title sequence shown, not obeyed:\n" .. screen)
  truthy(not screen:find("\27[31mred", 1, true), "no colour from the server:\n" .. screen)
end)

test("tag sets are bounded: a warning at 1,000, and past 10,000 new URLs share one name", function()
  local stream = h.tmpname()
  local code, out, err = load(string.format([[
options = { scenarios = { ids = { executor = "shared-iterations", vus = 32, iterations = 10300 } } }
return function(vu) vu.session:get(%q .. "?id=" .. vu.iteration .. "-" .. vu.id) end]], NGINX .. "/small.txt"),
    "--out json=" .. q(stream))
  eq(code, 0, err)
  truthy(err:find("1000 tag sets", 1, true) and err:find("tags = { name", 1, true), "the warning says how to group them:\n" .. err)
  local names, other = {}, 0
  for line in io.lines(stream) do
    local e = json.decode(line)
    if e.metric == "http_reqs" and e.data.tags and e.data.tags.name then
      names[e.data.tags.name] = true
      if e.data.tags.name == "(other names)" then other = other + e.data.count end
    end
  end
  local n = 0
  for _ in pairs(names) do n = n + 1 end
  eq(n, 10001, "10,000 names and the shared one")
  eq(other, 300, "the requests past the bound, under the shared name")
  truthy(out:find("http_reqs.-10300", 1), "every request counted:\n" .. out)
end)

test("the summary export is written whole or not at all: a write cut short leaves the old one", h.under_file_size_limit, function()
  local export = h.temp_file("old\n")
  -- ulimit -f 1: the process may write 512 bytes to a file, and is killed (SIGXFSZ) by the
  -- write that goes past them, as a full disk or a kill would cut it off mid-export.
  local script = h.temp_file(string.format([[
options = { iterations = 1, vus = 1 }
return function(vu) vu.session:get(%q) end]], NGINX .. "/small.txt"), ".lua")
  local err = h.tmpname()
  h.run("{ ulimit -f 1; " .. q(LUNET) .. " load --quiet --summary-export " .. q(export) .. " " .. q(script) .. " >/dev/null 2>" .. q(err) .. "; }")
  eq(h.read_file(export), "old\n", "the old export, whole")
  -- Killed by SIGXFSZ, or told EFBIG where that signal is ignored: then it says so.
  local said = h.read_file(err) or ""
  truthy(said == "" or said:find("cannot write the summary export " .. export, 1, true), "the failure is named:\n" .. said)
  os.execute("rm -f " .. q(export) .. ".lunet-*.tmp")
end)

h.done()
