-- scripts/bench, the driver over Benchmarks/*.sh: it lists every benchmark file, refuses a
-- name it does not know, runs one benchmark alone, and --write-docs rewrites only the marked parts
-- of the doc. The one benchmark run is `startup --quick` with this lunet (a few seconds; no
-- server, no build, no installs), its doc a scratch copy.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps) -- removes what h.tmpname() made, passed or failed
local eq, truthy = h.eq, h.truthy
local LUNET = h.lunet()
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)Tests/lua/") or "./")
local BENCH = ROOT .. "scripts/bench"

local function lines(s)
  local t = {}
  for l in s:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

test("--list names every benchmark file in Benchmarks, each once, with its letter", function()
  local _, ls = h.run("cd " .. ROOT .. "Benchmarks && ls *.sh")
  local want = {}
  for _, f in ipairs(lines(ls)) do
    if not f:match("^lib") then want[#want + 1] = f:gsub("%.sh$", "") end
  end
  table.sort(want)
  local code, out = h.run(BENCH .. " --list")
  eq(code, 0, "--list exits 0: " .. out)
  local got = {}
  for _, l in ipairs(lines(out)) do
    local name, letter = l:match("^(%S+)%s+%(([a-y])%) %S")
    truthy(name, "a line 'NAME (letter) what it measures': " .. l)
    got[#got + 1] = name
  end
  table.sort(got)
  eq(got, want, "the benchmarks listed")
  truthy(#want >= 9, "startup to streams are all there: " .. table.concat(want, " "))
end)

test("a name that is not a benchmark is refused before anything runs", function()
  local code, out = h.run(BENCH .. " startup no_such_bench")
  eq(code, 2, "exit status: " .. out)
  truthy(out:find("no benchmark 'no_such_bench'", 1, true), "the message names it: " .. out)
end)

test("one benchmark runs alone and --write-docs rewrites only its marked parts", function()
  local doc = h.temp_file(table.concat({
    "# Benchmarks",
    "Hand-written before the parts.",
    "<!-- bench:goals -->",
    "| Benchmark | Figure | Goal | Measured | Result |",
    "|---|---|---|---|---|",
    "| `startup` | a stale start-up row | ≤ 9× | 1.00× | PASS |",
    "| `json` | lunet/lua-cjson decode ~100 KB | ≥ 1× | 1.70× | PASS |",
    "<!-- /bench:goals -->",
    "<!-- bench:startup -->",
    "stale start-up figures",
    "<!-- /bench:startup -->",
    "Hand-written after the start-up part.",
    "<!-- bench:json -->",
    "json figures from an earlier run",
    "<!-- /bench:json -->",
    "",
  }, "\n"))
  local code, out = h.run("BENCH_DEPS=0 BENCH_DOC=" .. doc .. " LUNET_BIN=" .. LUNET .. " " .. BENCH ..
    " --quick --write-docs startup </dev/null")
  eq(code, 0, "exit status: " .. out)
  truthy(out:find("\n    lua5.4 -e 'print(1)' ", 1, true) and out:find("\n    lunet -e 'print(1)' ", 1, true),
    "the lunet row beside lua5.4's: " .. out)
  if not h.sanitizer then -- a sanitized lunet's start-up may fail its leak check, and then has no figure
    truthy(out:find("lunet/lua5%.4 start%-up %(median wall%) = [%d.]+x +goal <= 2x +%u%u%u%u\n"),
      "the goal row, a ratio and PASS or FAIL: " .. out)
  end
  truthy(not out:find("get_process", 1, true), "no other benchmark ran: " .. out)
  local text = h.read_file(doc)
  os.remove(doc)
  truthy(text:find("Hand-written before the parts.\n", 1, true) and text:find("\nHand-written after the start-up part.\n", 1, true),
    "the hand-written lines stay: " .. text)
  truthy(not text:find("stale start-up", 1, true) and text:find("\n## %(a%) Start%-up"), "the start-up part is new: " .. text)
  truthy(text:find("json figures from an earlier run", 1, true), "the json part, not run, stays: " .. text)
  truthy(text:find("\n| `json` | lunet/lua-cjson decode ~100 KB | ≥ 1× | 1.70× | PASS |\n", 1, true),
    "the json goal row stays: " .. text)
  truthy(text:find("\n| `startup` | lunet/lua5.4 start-up (median wall) | ≤ 2× |", 1, true),
    "the start-up goal row is this run's: " .. text)
  truthy(text:find("<!-- bench:machine -->", 1, true), "a machine part is added: " .. text)
end)

test("concurrent runs quick, alone and with BENCH_BEFORE beside it", function()
  -- Its own nginx and a few hundred GETs per client: the script's paths, not its figures.
  for _, before in ipairs({ "", "BENCH_BEFORE=" .. LUNET .. " " }) do
    local code, out = h.run(before .. "BENCH_DEPS=0 BENCH_CONCURRENT_REQUESTS=300 LUNET_BIN=" .. LUNET .. " " .. BENCH ..
      " --quick concurrent </dev/null")
    eq(code, 0, "exit status (" .. before .. "): " .. out)
    truthy(out:find("lunet: s:get_async, a window of 64", 1, true), "lunet's rows: " .. out)
    -- With a C compiler, the floor and the floor set up as lunet's requests, and lunet's ratio to it.
    if out:find("C + libcurl multi (libcurl's floor)", 1, true) then
      truthy(out:find("the same, set up as lunet's requests", 1, true) and out:find("lunet async/lean libcurl floor CPU per request = ", 1, true),
        "the lean floor's row and ratio: " .. out)
    end
    eq(out:find("lunet before (BENCH_BEFORE): async", 1, true) ~= nil, before ~= "", "the before rows only when asked: " .. out)
  end
end)
