-- lunet load k8s and lunet load collect against hostile input (/work/shared/HOSTILE.md): values
-- from the command line that end up in the manifests (YAML syntax, shell syntax, control bytes,
-- very long values) are refused with the value shown escaped or come back exactly and validate;
-- collect against a stand-in kubectl (hostile pod names, logs holding escape sequences, a huge
-- log, lunet's own line after the result) and against the real kubectl talking to a server on
-- 127.0.0.1 that accepts and never answers.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local VENV = h.env("LUNET_VENV")
local k8s = require "lunet.load.k8s"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function writer()
  local w = { parts = {} }
  function w:write(...) for _, s in ipairs({ ... }) do self.parts[#self.parts + 1] = tostring(s) end return self end
  function w:flush() end
  function w:text() return table.concat(self.parts) end
  return w
end

local new_dir, put = h.temp_dir, h.write_file   -- a new directory; files made in it
local function exists(path) local f = io.open(path, "rb") if f then f:close() end return f ~= nil end

local function k8s_run(args)
  local out, err = writer(), writer()
  local code = k8s.main(args, out, err)
  return code, out:text(), err:text()
end

-- The Job of a YAML stream, read back by PyYAML (as JSON).
local function job_of(yaml_text)
  local path = h.temp_file(yaml_text)
  local code, out = h.run(q(VENV .. "/bin/python3") .. " -c " .. q([[
import sys, json, yaml
print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1], "rb")) if d and d.get("kind") == "Job"][0]))]]) .. " " .. q(path))
  eq(code, 0, "PyYAML reads the manifests: " .. out)
  return json.decode(out)
end

local function validate(yaml_text)
  local path = h.temp_file(yaml_text)
  return h.run(q(VENV .. "/bin/kubernetes-validate") .. " --strict --kubernetes-version 1.37.0 " .. q(path))
end

-- A message shown on a terminal holds no control byte but its line feeds.
local function no_controls(s, what) truthy(not s:find("[%z\1-\9\11-\31\127]") and not s:find("\194[\128-\159]"), what .. ": raw control bytes in " .. h.show(s)) end

-- k8s ------------------------------------------------------------------------------------------

local SYNTAX = { "#x", "x #y", "a: b", "a:b", "'", '"', "\\", "{a}", "[a]", "&anchor", "*alias", "!tag", "%YAML", "|", ">",
                 "- item", "-", "---", "...", "?", "@sha256:0", "~", "null", "yes", "0755", "1e3", "é", "\u{2028}", "\u{85}",
                 "$(touch /tmp/lunet-k8s-pwned)", "`id`", "; rm -rf /", "a\nb: c", "x\r\ny", "tab\there", string.rep("L", 20000) }

test("values that are YAML or shell syntax come back exactly from the manifests, which validate", function()
  local dir = new_dir()
  local script = put(dir .. "/-x.lua", "return function() end")   -- a name starting with '-'
  local extra = { "--vus" }
  for _, v in ipairs(SYNTAX) do extra[#extra + 1] = v end
  for _, image in ipairs({ 'reg/lunet:"1"', "reg/x#frag", "&a", "*a", "-image", "{x}", "x:y", "!tag", "é\u{2028}", string.rep("i", 10000) }) do
    local args = { script, "--shards", "2", "--image", image, "--" }
    table.move(extra, 1, #extra, #args + 1, args)
    local code, out, err = k8s_run(args)
    eq(code, 0, err)
    local job = job_of(out)
    local c = job.spec.template.spec.containers[1]
    eq(c.image, image, "the image as given")
    eq(c.command[3], "/lunet/script/-x.lua", "the script")
    eq(table.move(c.command, 10, #c.command, 1, {}), extra, "each word after -- as given, one word each")
    if image == "&a" then
      local vcode, vout = validate(out)
      eq(vcode, 0, "kubernetes-validate: " .. vout)
    end
  end
end)

test("names, paths and values Kubernetes or a shell would misread: refused, named, shown escaped", function()
  local dir = new_dir()
  local script = put(dir .. "/s.lua", "return function() end")
  local shelly = put(dir .. "/a;b$(id).csv", "1")
  local evil = put(dir .. "/e\27]0;x\7.lua", "return function() end")
  local base = { script, "--shards", "2", "--image", "img" }
  local function with(...) return table.move({ ... }, 1, select("#", ...), #base + 1, table.move(base, 1, #base, 1, {})) end
  local cases = {
    { with("--name", "a;b"), "--name 'a;b' is not a DNS-1123 label" },
    { with("--name", "$(id)"), "--name '$(id)'" },
    { with("--name", "-a"), "--name '-a'" },
    { with("--name", "a\nb"), "--name 'a\\x0ab'" },
    { with("--name", "a\27[2Jb"), "--name 'a\\x1b[2Jb'" },
    { with("--name", "a.b"), "--name 'a.b'" },
    { with("--namespace", string.rep("n", 64)), "at most 63" },
    { with("--namespace", "ns\27]52;c;cHduZWQ=\7"), "--namespace 'ns\\x1b]52;c;cHduZWQ=\\x07'" },
    { with("--namespace", "ns\194\155"), "--namespace 'ns\\u{9b}'" },
    { { script, "--shards", "2", "--image", "img\n- evil" }, "--image 'img\\x0a- evil' has a space or a control character" },
    { { script, "--shards", "2", "--image", "img\0" }, "--image 'img\\x00'" },
    { { script, "--shards", "2", "--image", "img\27[31m" }, "--image 'img\\x1b[31m'" },
    { { script, "--shards", "2\27[2J", "--image", "i" }, "got '2\\x1b[2J'" },
    { with("--file", shelly), "cannot hold a file named 'a;b$(id).csv'" },
    { { evil, "--shards", "2", "--image", "i" }, "a ConfigMap cannot hold a file named 'e\\x1b]0;x\\x07.lua'" },
    { with("--cpu", "1\27[2J"), "got '1\\x1b[2J'" },
    { with("--", "--report", "r.html"), "'--report' after --: a file written in a pod is lost with it" },
    { with("--", "--report=r.html"), "lunet load collect --report" },
    { with("--", "--out=json=x"), "a file written in a pod is lost" },
    { with("--", "--vus", "\255"), "after -- is not UTF-8 text" },
  }
  for _, case in ipairs(cases) do
    local code, out, err = k8s_run(case[1])
    local what = h.show(case[1])
    eq(code, 2, what .. ": " .. err)
    eq(out, "", what .. ": nothing on stdout")
    truthy(err:find(case[2], 1, true), what .. ": '" .. case[2] .. "' in: " .. h.show(err))
    no_controls(err, what)
  end
end)

test("a --file that never ends (/dev/zero) or is huge: refused at the ConfigMap's bound, memory bounded", function()
  local dir = new_dir()
  local script = put(dir .. "/s.lua", "return function() end")
  local big = dir .. "/big.csv"
  assert(os.execute("head -c 50000000 /dev/zero > " .. q(big)))
  for _, file in ipairs({ "/dev/zero", big }) do
    -- ulimit: a lunet that reads it all fails on memory instead of taking the machine's (not
    -- under a sanitizer, whose runtime reserves more address space than any such limit).
    local t0 = os.time()
    local limit = h.sanitizer and "" or "ulimit -v 4000000; "
    local code, out = h.run("(" .. limit .. "cd / && timeout 60 /usr/bin/time -f 'maxrss=%M' " .. q(h.lunet()) .. " load k8s " .. q(script)
      .. " --shards 2 --image i --file " .. q(file) .. " >/dev/null)")
    eq(code, 2, file .. ": " .. out)
    truthy(out:find("a ConfigMap holds at most 900 KiB", 1, true), file .. ": " .. out)
    local rss = tonumber(out:match("maxrss=(%d+)"))
    h.memory_bound(rss, 64 * 1024, file .. ": kB at most: " .. tostring(rss))
    truthy(os.time() - t0 < 30, "in bounded time")
  end
end)

test("--shard and --start-at values with escape sequences are shown escaped in their errors", function()
  local shard = require "lunet.load.shard"
  local _, err = shard.parse("1\27[2J/2")
  truthy(err:find("got '1\\x1b[2J/2'", 1, true), h.show(err))
  no_controls(err, "--shard")
  _, err = shard.parse_time("\27]0;x\7")
  truthy(err:find("got '\\x1b]0;x\\x07'", 1, true), h.show(err))
  no_controls(err, "--start-at")
end)

-- collect ----------------------------------------------------------------------------------------

-- A stand-in kubectl: records its arguments (one line, each in brackets) in `calls`; `get` prints
-- pods.json; `logs` prints logs/POD through `tail -n` and `head -c` when asked --tail and
-- --limit-bytes, as the kubelet does; with files `stderr` and `status` it writes the first to
-- stderr and exits with the second.
local function fake_kubectl(dir, pods, logs)
  assert(os.execute("mkdir -p " .. q(dir .. "/logs")))
  put(dir .. "/kubectl", [[#!/bin/sh
dir=$(dirname "$0")
line=; tail=; limit=
for a in "$@"; do
  line="$line[$a]"
  case "$a" in --tail=*) tail=${a#--tail=} ;; --limit-bytes=*) limit=${a#--limit-bytes=} ;; esac
done
printf '%s\n' "$line" >> "$dir/calls"
if [ -f "$dir/status" ]; then cat "$dir/stderr" >&2; exit "$(cat "$dir/status")"; fi
case "$1" in
  get) cat "$dir/pods.json" ;;
  logs) for last; do :; done
        if [ -n "$tail" ]; then tail -n "$tail" "$dir/logs/$last"; else cat "$dir/logs/$last"; fi |
        if [ -n "$limit" ]; then head -c "$limit"; else cat; fi ;;
esac
]])
  assert(os.execute("chmod +x " .. q(dir .. "/kubectl")))
  put(dir .. "/pods.json", json.encode({ apiVersion = "v1", kind = "List", items = pods }))
  for name, text in pairs(logs) do put(dir .. "/logs/" .. name, text) end
  return dir .. "/kubectl"
end

local function pod(name, index, phase, shards)
  return { metadata = { name = name, creationTimestamp = "2026-01-01T00:00:00Z", annotations = { ["batch.kubernetes.io/job-completion-index"] = tostring(index) } },
           spec = { containers = { { name = "lunet", command = { "lunet", "load", "/lunet/script/s.lua", "--shards", tostring(shards or 1) } } } },
           status = { phase = phase } }
end

local function calls_of(dir)
  local calls = {}
  for line in (h.read_file(dir .. "/calls") or ""):gmatch("[^\n]+") do
    local words = {}
    for w in line:gmatch("%[(.-)%]") do words[#words + 1] = w end
    calls[#calls + 1] = words
  end
  return calls
end

local function collect_run(args)
  local out, err = writer(), writer()
  local code = require("lunet.load.collect").main(args, out, err)
  return code, out:text(), err:text()
end

-- A real shard's log, as a pod's is (stdout and stderr together): a run of one shard whose
-- threshold is crossed, so lunet says so on stderr after the result line.
local real_log
local function shard_log()
  if real_log then return real_log end
  local script = put(new_dir() .. "/s.lua", 'options = { thresholds = { iterations = { "count > 1000000" } } }\nprint("\\27]0;from the script\\7")\nreturn function() end\n')
  local code, out = h.run("cd / && JOB_COMPLETION_INDEX=0 " .. q(h.lunet()) .. " load " .. q(script) .. " --shards 1 --iterations 1 --vus 1 --quiet --result-line")
  eq(code, 99, "the shard crossed its threshold: " .. out)
  real_log = out
  return out
end

test("collect: a shard that crossed a threshold (lunet's line after the result) is merged", function()
  local log = shard_log()
  truthy(log:match("\nlunet load: thresholds crossed:[^\n]*\n$"), "lunet's own line comes last in the log: " .. h.show(log:sub(-300)))
  local dir = new_dir()
  local kubectl = fake_kubectl(dir, { pod("run-0-a", 0, "Failed") }, { ["run-0-a"] = log })
  local code, out, err = collect_run({ "run", "--kubectl", kubectl })
  eq(code, 99, "merged, and the threshold judged crossed: " .. err)
  truthy(out:find("iterations", 1, true), "the summary: " .. out)
  -- Only that line of lunet's may follow the result: a result the script printed, followed by
  -- lunet's message that the run failed, is not a result.
  put(dir .. "/logs/run-0-a", log:match("{[^\n]*\n") .. "lunet load: setup raised: boom\n")
  code, _, err = collect_run({ "run", "--kubectl", kubectl })
  truthy(code == 2 and err:find("not a result line", 1, true), "refused: " .. err)
end)

test("collect: a log, kubectl's message or its output holding escape sequences is shown escaped", function()
  local dir = new_dir()
  local kubectl = fake_kubectl(dir, { pod("run-0-a", 0, "Succeeded") }, { ["run-0-a"] = "ok\n\27]0;pwned\7 \27[2J not a result\n" })
  local code, _, err = collect_run({ "run", "--kubectl", kubectl })
  eq(code, 2, err)
  truthy(err:find("\\x1b]0;pwned\\x07 \\x1b[2J not a result", 1, true), "the line shown escaped: " .. h.show(err))
  no_controls(err, "the log's line")
  put(dir .. "/stderr", "error: \27]52;c;cHduZWQ=\7 denied\r\n\27[2Jagain\n")
  put(dir .. "/status", "1")
  code, _, err = collect_run({ "run", "--kubectl", kubectl })
  eq(code, 2, err)
  truthy(err:find("\\x1b]52;c;cHduZWQ=\\x07 denied", 1, true), "kubectl's message shown escaped: " .. h.show(err))
  no_controls(err, "kubectl's message")
  os.remove(dir .. "/status")
  put(dir .. "/pods.json", "\27[2J<html>not json")
  code, _, err = collect_run({ "run", "--kubectl", kubectl })
  truthy(code == 2 and err:find("\\x1b[2J<html>not json", 1, true), "kubectl's output shown escaped: " .. h.show(err))
  no_controls(err, "kubectl's output")
end)

test("collect: pod names kubectl would read as options, or a shell as syntax, are refused", function()
  for _, name in ipairs({ "--kubeconfig=/dev/null", "-n", "$(touch pwned)", "a;b", "a b", "A", "a\n-b", string.rep("a", 254) }) do
    local dir = new_dir()
    local kubectl = fake_kubectl(dir, { pod(name, 0, "Succeeded") }, {})
    local code, out, err = collect_run({ "run", "--kubectl", kubectl })
    eq(code, 2, h.show(name) .. ": " .. err)
    eq(out, "", "nothing merged")
    truthy(err:find("is not a Kubernetes name", 1, true), h.show(name) .. ": " .. h.show(err))
    no_controls(err, h.show(name))
    eq(#calls_of(dir), 1, h.show(name) .. ": no kubectl logs")
  end
  for _, t in ipairs({ "soon", "0s", "-1s" }) do
    local code, _, err = collect_run({ "run", "--timeout", t })
    truthy(code == 2 and err:find("--timeout", 1, true), t .. ": " .. err)
  end
end)

test("collect: --kubectl with spaces, quotes and shell syntax in its path runs that file, nothing else", function()
  local base = new_dir()
  local dir = base .. "/k b;touch M1 $(touch M2) `touch M3` 'q\" & touch M4"
  local kubectl = fake_kubectl(dir, { pod("run-0-a", 0, "Succeeded") }, { ["run-0-a"] = shard_log() })
  local code, _, err = collect_run({ "run", "--kubectl", kubectl })
  eq(code, 99, err)
  eq(calls_of(dir)[1][1], "get", "the stand-in ran")
  for _, m in ipairs({ "M1", "M2", "M3", "M4" }) do
    truthy(not exists(m) and not exists(base .. "/" .. m) and not exists("/tmp/" .. m), m .. " was not made")
  end
end)

test("collect: a huge log is read as it comes, keeping only its end: memory bounded", function()
  local dir = new_dir()
  local kubectl = fake_kubectl(dir, { pod("run-0-a", 0, "Failed") }, {})
  local noise = put(dir .. "/noise", string.rep(string.rep("x", 1023) .. "\n", 1024))   -- 1 MiB
  local log = dir .. "/logs/run-0-a"
  assert(os.execute("for i in $(seq 64); do cat " .. q(noise) .. "; done > " .. q(log)))   -- 64 MiB of output, then the result
  local f = assert(io.open(log, "ab"))
  f:write(shard_log())
  f:close()
  local t0 = os.time()
  local code, out = h.run("cd / && /usr/bin/time -f 'maxrss=%M' " .. q(h.lunet()) .. " load collect run --kubectl " .. q(kubectl))
  truthy(code == 99 and out:find("iterations", 1, true), "merged: " .. out:sub(-2000))
  local rss = tonumber(out:match("maxrss=(%d+)"))
  h.memory_bound(rss, 48 * 1024, "kB at most: " .. tostring(rss) .. " (the log is 64 MiB)")
  truthy(os.time() - t0 < 30, "in bounded time")
  -- A line longer than collect keeps (lowered here) is refused, its length said, shown cut.
  local collect = require "lunet.load.collect"
  local saved = collect.MAX_LINE_BYTES
  collect.MAX_LINE_BYTES = 1024 * 1024
  put(log, "start\n" .. string.rep("\27y", 2 * 1024 * 1024))   -- 4 MiB and no line end
  local ok, c2, _, err = pcall(collect_run, { "run", "--kubectl", kubectl })
  collect.MAX_LINE_BYTES = saved
  assert(ok, c2)
  truthy(c2 == 2 and err:find("the last line of its log is over 1 MiB (4194304 bytes), not a result line: \\x1by", 1, true) and #err < 2000, h.show(err:sub(1, 500)))
  no_controls(err, "the long line")
end)

test("collect: a kubectl whose server accepts and never answers gives up after --timeout",
  not exists("/usr/bin/kubectl") and { skip = "no kubectl here" } or {}, function()
  local dir = new_dir()
  local server = put(dir .. "/silent.py", [[
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
while True:
    held.append(s.accept()[0])
]])
  local kubectl = put(dir .. "/kubectl", "#!/bin/sh\nKUBECONFIG=" .. q(dir .. "/kubeconfig") .. " HOME=" .. q(dir) .. " exec kubectl \"$@\"\n")
  os.execute("chmod +x " .. q(kubectl))
  local t0 = os.time()
  local code, out = h.run("(cd " .. q(dir) .. [[ && { python3 silent.py port & } && pid=$!; for i in $(seq 50); do [ -s port ] && break; sleep 0.1; done
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:%s"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n' "$(cat port)" > kubeconfig
timeout 120 ]] .. q(h.lunet()) .. " load collect run --timeout 1s --kubectl " .. q(kubectl) .. "; status=$?; kill $pid; exit $status)")
  local took = os.time() - t0
  eq(code, 2, out)
  -- kubectl's own timeout, or lunet's stop of a kubectl that retried past --timeout and 5 s more.
  truthy(out:find("lunet load collect: 'kubectl get", 1, true) and (out:find("Timeout", 1, true) or out:find("deadline", 1, true)
    or out:find("did not finish within --timeout 1 s", 1, true)), out)
  truthy(took < 15, "gave up in " .. took .. " s")
end)

h.done()

-- Issue 46, item 6: --timeout bounds kubectl itself, not only its request to the API server.
test("collect: a kubectl that hangs on its own is stopped at --timeout and a few seconds, with a message", function()
  local dir = new_dir()
  local kubectl = fake_kubectl(dir, { pod("run-0-a", 0, "Succeeded") }, { ["run-0-a"] = "x\n" })
  put(kubectl, "#!/bin/sh\nexec sleep 120\n")
  local t0 = os.time()
  local code, _, err = collect_run({ "run", "--kubectl", kubectl, "--timeout", "2s" })
  local took = os.time() - t0
  eq(code, 2, err)
  truthy(err:find("did not finish within --timeout 2 s", 1, true), err)
  truthy(took <= 12, "bounded: " .. took .. " s")
end)
