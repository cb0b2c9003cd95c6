-- lunet load on Kubernetes (issue 37), in-process: `lunet load k8s`'s manifests (lunet.load.k8s)
-- validated strictly against Kubernetes' own schemas by kubernetes-validate and read back by
-- PyYAML (both from the tests' venv), hostile scripts and files byte for byte; its usage
-- errors; `lunet load collect` (lunet.load.collect) against a stand-in kubectl that records
-- what it was asked, with a stand-in merge that records what it was handed; and the
-- Containerfile's essentials.
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local VENV = h.env("LUNET_VENV")
local ROOT = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "../../"
local k8s = require "lunet.load.k8s"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end

local function writer()
  local w = { parts = {} }
  function w:write(...) for _, s in ipairs({ ... }) do self.parts[#self.parts + 1] = tostring(s) end return self end
  function w:flush() end
  function w:text() return table.concat(self.parts) end
  return w
end

-- Runs `lunet load k8s ARGS`: its exit status, stdout and stderr.
local function k8s_run(args)
  local out, err = writer(), writer()
  local code = k8s.main(args, out, err)
  return code, out:text(), err:text()
end

local new_dir, put = h.temp_dir, h.write_file   -- a new directory; files made in it

-- The documents of a YAML stream as PyYAML reads them, through JSON; each ConfigMap gets `hex`:
-- its files' bytes in hex (data as UTF-8, binaryData decoded), to compare byte for byte. Read
-- twice, by PyYAML's Python parser and by libyaml (the C parser that kubectl's, go-yaml, was
-- ported from), which must agree.
local READ_BACK = [[
import sys, json, yaml, base64
loaders = [yaml.SafeLoader] + ([yaml.CSafeLoader] if yaml.__with_libyaml__ else [])
read = [[d for d in yaml.load_all(open(sys.argv[1], "rb"), Loader=L) if d is not None] for L in loaders]
if len(loaders) < 2 or read[0] != read[1]: sys.exit("libyaml missing, or it read the stream differently")
docs = read[0]
for d in docs:
    if d.get("kind") == "ConfigMap":
        d["hex"] = {k: v.encode("utf-8").hex() for k, v in (d.get("data") or {}).items()}
        d["hex"].update({k: base64.b64decode(v).hex() for k, v in (d.get("binaryData") or {}).items()})
print(json.dumps(docs))
]]
local function read_back(yaml_text)
  local path = h.temp_file(yaml_text)
  local code, out = h.run(q(VENV .. "/bin/python3") .. " -c " .. q(READ_BACK) .. " " .. q(path))
  eq(code, 0, "PyYAML reads the manifests: " .. out)
  local docs = json.decode(out)
  eq(#docs, 2, "two documents")
  return docs[1], docs[2]
end

-- kubernetes-validate --strict on a YAML text for Kubernetes `version`: its status and output.
local function validate(yaml_text, version)
  local path = h.temp_file(yaml_text)
  return h.run(q(VENV .. "/bin/kubernetes-validate") .. " --strict --kubernetes-version " .. version .. " " .. q(path))
end

local function manifests(extra)
  local dir = new_dir()
  local script = put(dir .. "/checkout.lua", "return function(vu) vu.session:get('http://127.0.0.1:1/') end\n")
  local args = { script, "--shards", "3", "--image", "registry.example/lunet:1.0", "--namespace", "perf" }
  table.move(extra or {}, 1, #(extra or {}), #args + 1, args)
  local code, out, err = k8s_run(args)
  eq(code, 0, "lunet load k8s: " .. err)
  return out, err
end

test("the manifests validate strictly against Kubernetes 1.33 and 1.37; broken ones do not", function()
  local yaml = manifests({ "--file", put(new_dir() .. "/users.csv", "id\n1\n"), "--", "--vus", "10" })
  -- 1.33: backoffLimitPerIndex is GA from there; 1.37: the newest schemas kubernetes-validate has.
  for _, version in ipairs({ "1.33.0", "1.37.0" }) do
    local code, out = validate(yaml, version)
    eq(code, 0, "kubernetes-validate " .. version .. ":\n" .. out .. "\n" .. yaml)
    truthy(out:find("configmap/", 1, true) and out:find("job/", 1, true), "both checked: " .. out)
  end
  -- The check can fail: a field Kubernetes does not know, and a number written as a string.
  local unknown = yaml:gsub("\n  completionMode:", "\n  completionModes:")
  local code, out = validate(unknown, "1.37.0")
  truthy(code ~= 0 and out:find("completionModes", 1, true), "an unknown field fails: " .. out)
  local typed = yaml:gsub("\n  completions: 3\n", '\n  completions: "3"\n')
  truthy(typed ~= yaml, "the mistake was made")
  code, out = validate(typed, "1.37.0")
  truthy(code ~= 0 and out:find("did not validate", 1, true), "a string for a number fails: " .. out)
end)

-- Texts YAML is easy to get wrong with: each must come back from the ConfigMap byte for byte.
local HOSTILE = {
  ["trailing.txt"] = "trailing spaces   \nand\ttabs\t\n",
  ["markers.txt"] = "# a comment\n---\n...\nkey: value\n- item\n? k\n: v\n| pipe\n> fold\n&anchor *alias !tag %YAML\n",
  ["nofinal.txt"] = "first line\nno final newline",
  ["crlf.txt"] = "windows\r\nline ends\r\n",
  ["indented.txt"] = "    starts indented\nthen not\n",
  ["leading.txt"] = "\n\nafter two empty lines\n",
  ["trailing-lines.txt"] = "three line breaks at the end\n\n\n",
  ["spaces-last.txt"] = "the last line is spaces\n   ",
  ["spaces-line.txt"] = "a line of spaces\n  \nand on\n",
  ["tab-line.txt"] = "\t\n\tx\n",
  ["unicode.txt"] = "é ✓ 𝄞 line separator \u{2028} next line \u{85} bom \u{FEFF} end\n",
  ["controls.txt"] = "nul \0 escape \27[31m del \127 bell \7\n",
  ["binary.bin"] = "\255\254\0\1 not UTF-8 \128\n",
  ["quotes.txt"] = "\"double\" 'single' \\backslash\\ \\n not a newline\n",
  ["empty.txt"] = "",
  ["newline.txt"] = "\n",
  ["newlines.txt"] = "\n\n",
  ["yes"] = "yes",
  ["0755"] = "0755",
  ["null"] = "~",
  ["one-line.txt"] = "1e3",
}

test("the script and its files round-trip exactly through the YAML, hostile texts included", function()
  local dir = new_dir()
  local texts, args = {}, nil
  local script_text = "-- # a script\n---\nreturn function() end   \n\tlocal x = 1\r\nno final newline"
  local script = put(dir .. "/script.lua", script_text)
  texts["script.lua"] = script_text
  args = { script, "--shards", "2", "--image", "lunet" }
  for name, text in pairs(HOSTILE) do
    args[#args + 1] = "--file"
    args[#args + 1] = put(dir .. "/" .. name, text)
    texts[name] = text
  end
  -- And texts made at random of the pieces YAML cares about (the seed is printed on failure).
  local seed = os.time()
  math.randomseed(seed)
  local pieces = { "a", " ", "  ", "\t", "\n", "\n", "\n  \n", "\r", "\r\n", "#", "-", "---", "...", ":", "\"", "'", "\\", "é",
                   "\u{2028}", "\u{85}", "\u{9F}", "\u{FEFF}", "\u{FFFE}", "\0", "\27", "\127", "\255", "|", ">" }
  for i = 1, 150 do
    local parts = {}
    for j = 1, math.random(0, 12) do parts[j] = pieces[math.random(#pieces)] end
    local name = "random-" .. i
    texts[name] = table.concat(parts)
    args[#args + 1] = "--file"
    args[#args + 1] = put(dir .. "/" .. name, texts[name])
  end
  local code, out, err = k8s_run(args)
  eq(code, 0, err)
  local cm = read_back(out)
  local expected = {}
  for name, text in pairs(texts) do expected[name] = hex(text) end
  for name, want in pairs(expected) do eq(cm.hex[name], want, name .. " (seed " .. seed .. ")") end
  eq(cm.hex, expected, "every file, nothing else")
  truthy(cm.binaryData and cm.binaryData["binary.bin"], "a file that is not UTF-8 goes in binaryData")
  local code2, vout = validate(out, "1.37.0")
  eq(code2, 0, "and the ConfigMap still validates: " .. vout)
end)

test("the Job: Indexed, N pods at once, no retry, the command, start-at now + --start-in", function()
  local before = os.time()
  local yaml = manifests({ "--start-in", "2m", "--cpu", "500m", "--memory", "1Gi", "--name", "checkout-run", "--", "--vus", "10", "--duration", "5m" })
  local after = os.time()
  local cm, job = read_back(yaml)
  eq({ cm.kind, job.kind, job.apiVersion }, { "ConfigMap", "Job", "batch/v1" }, "a ConfigMap, then a Job")
  eq({ cm.metadata.name, job.metadata.name, job.metadata.namespace }, { "checkout-run", "checkout-run", "perf" }, "names")
  eq(cm.immutable, true, "the ConfigMap is immutable")
  local s = job.spec
  eq({ s.completionMode, s.completions, s.parallelism, s.backoffLimitPerIndex, s.maxFailedIndexes, s.backoffLimit },
     { "Indexed", 3, 3, 0, 3, 3 }, "Indexed, completions = parallelism = N, no retry, every index runs")
  eq(s.ttlSecondsAfterFinished, 86400, "the pods and their logs stay a day")
  local labels = { ["app.kubernetes.io/name"] = "lunet-load", ["app.kubernetes.io/instance"] = "checkout-run" }
  eq({ job.metadata.labels, cm.metadata.labels, s.template.metadata.labels }, { labels, labels, labels }, "labels")
  local pod = s.template.spec
  eq(pod.restartPolicy, "Never", "restartPolicy")
  eq(#pod.containers, 1, "one container")
  local c = pod.containers[1]
  eq(c.image, "registry.example/lunet:1.0", "the image")
  local start_at = c.command[7]
  truthy(start_at >= k8s.rfc3339(before + 120) and start_at <= k8s.rfc3339(after + 120), "start-at " .. start_at .. " is now + 2m")
  truthy(start_at:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), "RFC 3339 in UTC: " .. start_at)
  eq(c.command, { "lunet", "load", "/lunet/script/checkout.lua", "--shards", "3", "--start-at", start_at, "--quiet", "--result-line",
                  "--vus", "10", "--duration", "5m" }, "the command (the shard comes from JOB_COMPLETION_INDEX)")
  eq(c.resources, { requests = { cpu = "500m", memory = "1Gi" }, limits = { cpu = "500m", memory = "1Gi" } }, "resources")
  eq(c.volumeMounts, { { name = "script", mountPath = "/lunet/script", readOnly = true } }, "the script mounted read-only")
  eq(c.workingDir, "/lunet/script", "the script's files beside it")
  eq(pod.volumes, { { name = "script", configMap = { name = "checkout-run", defaultMode = 292 } } }, "the ConfigMap as the volume")
  eq(pod.securityContext.runAsNonRoot, true, "not root")
  eq(c.securityContext, { allowPrivilegeEscalation = false, capabilities = { drop = { "ALL" } }, readOnlyRootFilesystem = true },
     "no privilege escalation, no capabilities, a read-only root file system (scripts/test-image runs the image so)")
end)

test("--out prometheus=URL: every pod pushes to it, the Job's name its testid, credentials from a Secret; valid manifests", function()
  local yaml = manifests({ "--name", "checkout-run", "--out", "prometheus=http://prometheus.monitoring:9090/api/v1/write",
                           "--out-secret", "lunet-rw", "--", "--vus", "10" })
  local _, job = read_back(yaml)
  local c = job.spec.template.spec.containers[1]
  eq(c.env, { { name = "LUNET_OUT", value = "prometheus" },
              { name = "LUNET_PROMETHEUS_RW_SERVER_URL", value = "http://prometheus.monitoring:9090/api/v1/write" },
              { name = "LUNET_PROMETHEUS_RW_TESTID", value = "checkout-run" } }, "the output through the environment")
  eq(c.envFrom, { { secretRef = { name = "lunet-rw" } } }, "the receiver's credentials from the Secret, never in the manifest")
  local code, out = validate(yaml, "1.37.0")
  eq(code, 0, out)
  -- Without --out, no env at all; and what a pod cannot keep is refused, naming why.
  local _, plain = read_back(manifests({}))
  eq(plain.spec.template.spec.containers[1].env, nil, "no environment without --out")
  local dir = new_dir()
  local script = put(dir .. "/s.lua", "return function() end\n")
  local function refused(extra, pattern)
    local args = { script, "--shards", "2", "--image", "i" }
    table.move(extra, 1, #extra, #args + 1, args)
    local rc, stdout, err = k8s_run(args)
    eq({ rc, stdout }, { 2, "" }, table.concat(extra, " "))
    truthy(err:find(pattern, 1, true), err)
  end
  refused({ "--out", "json=r.json" }, "--out takes prometheus=URL here, got 'json=r.json' (a file written in a pod is lost with it)")
  refused({ "--out", "prometheus=http://u:pw@p/w" }, "the URL holds credentials")
  refused({ "--out-secret", "s" }, "--out-secret without --out prometheus=URL")
  refused({ "--out", "prometheus=http://p/w", "--out-secret", "Bad_Name" }, "--out-secret 'Bad_Name' is not a DNS-1123 label")
  refused({ "--", "--out", "prometheus=http://p/w" }, "give --out prometheus=URL to lunet load k8s")
end)

test("the default Job name: the script's name made a DNS label, a suffix, short enough for N", function()
  local dir = new_dir()
  local code, out = k8s_run({ put(dir .. "/My_Load.Test.lua", "return function() end"), "--shards", "2", "--image", "x" })
  eq(code, 0, out)
  local _, job = read_back(out)
  truthy(job.metadata.name:match("^lunet%-load%-my%-load%-test%-[a-z0-9][a-z0-9][a-z0-9][a-z0-9][a-z0-9]$"), job.metadata.name)
  code, out = k8s_run({ put(dir .. "/" .. string.rep("long-", 20) .. ".lua", "return function() end"), "--shards", "1000", "--image", "x" })
  eq(code, 0, out)
  _, job = read_back(out)
  truthy(#job.metadata.name <= 59 and job.metadata.name:match("^lunet%-load%-long%-.*[a-z0-9]$"), "NAME-999 is a host name of at most 63: " .. job.metadata.name)
end)

test("usage errors exit 2, name the problem, and print nothing on stdout", function()
  local dir = new_dir()
  local script = put(dir .. "/s.lua", "return function() end")
  local a, b = new_dir(), new_dir()
  local dup1, dup2 = put(a .. "/data.csv", "1"), put(b .. "/data.csv", "2")
  local big = put(dir .. "/big.bin", string.rep("x", 950 * 1024))
  local spaced = put(dir .. "/my file.csv", "1")
  local base = { script, "--shards", "2", "--image", "img" }
  local function with(...)
    local args = table.move(base, 1, #base, 1, {})
    for _, v in ipairs({ ... }) do args[#args + 1] = v end
    return args
  end
  local cases = {
    { with("--name", "Bad_Name"), "--name 'Bad_Name' is not a DNS-1123 label" },
    { { script, "--shards", "1000", "--image", "i", "--name", string.rep("a", 60) }, "at most 59 characters" },
    { { script, "--shards", "0", "--image", "i" }, "--shards takes a whole number from 1 to 1000, got '0'" },
    { { script, "--shards", "1001", "--image", "i" }, "got '1001'" },
    { { script, "--shards", "two", "--image", "i" }, "got 'two'" },
    { { script, "--image", "i" }, "--shards N is needed" },
    { { script, "--shards", "2" }, "--image IMAGE is needed" },
    { { script, "--shards", "2", "--image", "my image" }, "has a space" },
    { with("--file", dup1, "--file", dup2), "two files named 'data.csv'" },
    { with("--file", big), "a ConfigMap holds at most 900 KiB" },
    { with("--file", dir .. "/missing.csv"), "cannot read --file" },
    { with("--file", spaced), "cannot hold a file named 'my file.csv'" },
    { with("--namespace", "Perf"), "--namespace 'Perf' is not a DNS-1123 label" },
    { with("--cpu", "lots"), "--cpu takes a Kubernetes quantity" },
    { with("--memory", "512MB"), "--memory takes a Kubernetes quantity" },
    { with("--start-in", "soon"), "--start-in: 'soon' is not a duration" },
    { with("--", "--shard", "1/2"), "JOB_COMPLETION_INDEX" },
    { with("--", "--summary-export", "x.json"), "lunet load collect --summary-export" },
    { with("--shard", "1/2"), "unknown option '--shard'; did you mean '--shards'?" },
    { { "--shards", "2", "--image", "i" }, "which script?" },
    { { dir .. "/none.lua", "--shards", "2", "--image", "i" }, "cannot read the script" },
  }
  for _, case in ipairs(cases) do
    local code, out, err = k8s_run(case[1])
    local what = table.concat(case[1], " ")
    eq(code, 2, what)
    eq(out, "", what .. ": nothing on stdout")
    truthy(err:find("lunet load k8s: ", 1, true) and err:find(case[2], 1, true), what .. ": '" .. case[2] .. "' in: " .. err)
  end
end)

-- collect ------------------------------------------------------------------------------------------

-- A stand-in kubectl in a directory of its own: each call's arguments appended to `calls`
-- (one line, each argument in brackets), `get` prints pods.json, `logs` prints logs/POD; with a
-- file `fail` there it says so on stderr and exits 1.
local function fake_kubectl(pods, logs)
  local dir = new_dir()
  assert(os.execute("mkdir " .. q(dir .. "/logs")))
  put(dir .. "/kubectl", [[#!/bin/sh
dir=$(dirname "$0")
line=
for a in "$@"; do line="$line[$a]"; done
printf '%s\n' "$line" >> "$dir/calls"   # one write: the logs calls run side by side
if [ -f "$dir/fail" ]; then echo "error: You must be logged in to the server (Unauthorized)" >&2; exit 1; fi
case "$1" in
  get) cat "$dir/pods.json" ;;
  logs) for last; do :; done; cat "$dir/logs/$last" ;;
esac
]])
  assert(os.execute("chmod +x " .. q(dir .. "/kubectl")))
  put(dir .. "/pods.json", json.encode({ apiVersion = "v1", kind = "List", items = pods }))
  for name, text in pairs(logs) do put(dir .. "/logs/" .. name, text) end
  return dir
end

local function pod(name, index, phase, created, shards)
  return { metadata = { name = name, creationTimestamp = created, annotations = { ["batch.kubernetes.io/job-completion-index"] = tostring(index) } },
           spec = { containers = { { name = "lunet", command = { "lunet", "load", "/lunet/script/s.lua", "--shards", tostring(shards or 3) } } } },
           status = { phase = phase } }
end

local function result(i) return json.encode({ type = "Result", shard = i, metrics = { http_reqs = 10 + i } }) end

-- Three indexes; index 1 failed once and succeeded in a second pod; index 2 failed (a shard that
-- crossed a threshold still prints its result). Listed out of order.
local PODS = {
  pod("run-2-zzzzz", 2, "Failed", "2026-01-01T00:00:02Z"),
  pod("run-1-bbbbb", 1, "Failed", "2026-01-01T00:00:01Z"),
  pod("run-0-aaaaa", 0, "Succeeded", "2026-01-01T00:00:00Z"),
  pod("run-1-ccccc", 1, "Succeeded", "2026-01-01T00:05:00Z"),
}
local LOGS = {
  ["run-0-aaaaa"] = "lunet load: s.lua, 1 scenario\n\n  checks....: 100%\n" .. result(0) .. "\n",
  ["run-1-ccccc"] = "lunet load: shard 2/3\n" .. result(1) .. "\n\n",
  ["run-1-bbbbb"] = "killed\n",
  -- lunet load writes this on stderr after the result line, and a pod's log holds both.
  ["run-2-zzzzz"] = "lunet load: 1 iteration of default failed\n" .. result(2) .. "\nlunet load: thresholds crossed: checks rate > 0.99;\n",
}

-- Runs collect with `args`, a stand-in merge recording what it is handed and returning
-- `merge_status`; returns the status, stdout, stderr, the merge's call (or nil) and the calls
-- kubectl got (each a list of arguments; the logs calls sorted, as they run side by side).
local function collect_run(dir, args, merge_status)
  local got
  local saved = package.loaded["lunet.load.merge"]
  package.loaded["lunet.load.merge"] = { run = function(sources, opts, out, err)
    got = { sources = sources, opts = opts }
    out:write("merged\n")
    return merge_status or 0
  end }
  local out, err = writer(), writer()
  local ok, code = pcall(require("lunet.load.collect").main, args, out, err)
  package.loaded["lunet.load.merge"] = saved
  assert(ok, code)
  local calls = {}
  for line in (h.read_file(dir .. "/calls") or ""):gmatch("[^\n]+") do
    local words = {}
    for w in line:gmatch("%[(.-)%]") do words[#words + 1] = w end
    calls[#calls + 1] = words
  end
  table.sort(calls, function(x, y) return table.concat(x, " ") < table.concat(y, " ") end)
  return code, out:text(), err:text(), got, calls
end

test("collect: each index's pod, its log's last line, handed to merge in index order", function()
  local dir = fake_kubectl(PODS, LOGS)
  local code, out, err, got, calls = collect_run(dir, { "run", "--namespace", "perf", "--kubectl", dir .. "/kubectl",
    "--report", "r.html", "--summary-export", "s.json" }, 99)
  eq(code, 99, "merge's exit status: " .. err)
  eq(out, "merged\n", "merge's output")
  eq(calls, {
    { "get", "--request-timeout=300s", "-n", "perf", "pods", "-l", "job-name=run", "-o", "json" },
    { "logs", "--request-timeout=300s", "-n", "perf", "run-0-aaaaa" },
    { "logs", "--request-timeout=300s", "-n", "perf", "run-1-ccccc" },
    { "logs", "--request-timeout=300s", "-n", "perf", "run-2-zzzzz" },
  }, "kubectl's calls: the pods by the Job's label, then the chosen pods' logs, each with a time limit")
  eq(got.sources, {
    { name = "run index 0 (pod run-0-aaaaa)", text = result(0) },
    { name = "run index 1 (pod run-1-ccccc)", text = result(1) },
    { name = "run index 2 (pod run-2-zzzzz)", text = result(2) },
  }, "the sources, by index: the succeeded pod of index 1")
  eq(got.opts, { report = "r.html", summary_export = "s.json" }, "the options")
  truthy(err:find("index 1 took 2 pods; pod run-1-ccccc succeeded", 1, true), err)
  truthy(err:find("failed index: 2 (pod run-2-zzzzz)", 1, true), "the failed index named: " .. err)
end)

test("collect: without --namespace, kubectl's own; the exit status of merge passes through", function()
  local dir = fake_kubectl(PODS, LOGS)
  local code, _, err, got, calls = collect_run(dir, { "run", "--kubectl", dir .. "/kubectl", "--timeout", "1m30s" }, 0)
  eq(code, 0, err)
  eq(calls[1], { "get", "--request-timeout=90s", "pods", "-l", "job-name=run", "-o", "json" }, "no -n; --timeout")
  eq(calls[2], { "logs", "--request-timeout=90s", "run-0-aaaaa" }, "no -n")
  eq(got.opts, {}, "no report, no export")
end)

test("collect: a missing index, a log without a result line, kubectl failing: exit 2, named", function()
  local kubectl = function(dir) return dir .. "/kubectl" end
  local cases = {
    { { PODS[3], PODS[1] }, LOGS, "job run in namespace perf has no pod for index 1 of 3" },
    { { PODS[3], PODS[4] }, LOGS, "no pod for index 2 of 3" },   -- the pods' --shards 3 says how many
    { PODS, { ["run-0-aaaaa"] = "checks....: 100%\n", ["run-1-ccccc"] = result(1), ["run-2-zzzzz"] = result(2) },
      "job run index 0 (pod run-0-aaaaa, Succeeded): the last line of its log is not a result line" },
    { PODS, { ["run-0-aaaaa"] = "\n\n", ["run-1-ccccc"] = result(1), ["run-2-zzzzz"] = result(2) },
      "job run index 0 (pod run-0-aaaaa, Succeeded): its log is empty" },
    { PODS, { ["run-0-aaaaa"] = '{"type":"Interval"}\n', ["run-1-ccccc"] = result(1), ["run-2-zzzzz"] = result(2) },
      "not a result line" },
    { PODS, { ["run-0-aaaaa"] = result(0), ["run-1-ccccc"] = result(1) },   -- kubectl logs fails for index 2
      "job run index 2 (pod run-2-zzzzz, Failed): 'kubectl logs -n perf run-2-zzzzz' failed (exit 1)" },
    { {}, LOGS, "no pods of job run in namespace perf" },
    { { PODS[3], PODS[4], pod("run-2-yyyyy", 2, "Running", "2026-01-01T00:00:09Z") }, LOGS,
      "job run index 2 (pod run-2-yyyyy) is Running: wait for the Job to end" },
    { PODS, LOGS, "'kubectl get -n perf pods -l job-name=run -o json' failed (exit 1): error: You must be logged in to the server (Unauthorized)", true },
  }
  for i, case in ipairs(cases) do
    local dir = fake_kubectl(case[1], case[2])
    if case[4] then put(dir .. "/fail", "") end
    local code, out, err, got = collect_run(dir, { "run", "-n", "perf", "--kubectl", kubectl(dir) })
    eq(code, 2, "case " .. i .. ": " .. err)
    eq(out, "", "case " .. i .. ": nothing on stdout")
    eq(got, nil, "case " .. i .. ": nothing merged")
    truthy(err:find("lunet load collect: ", 1, true) and err:find(case[3], 1, true), "case " .. i .. ": '" .. case[3] .. "' in: " .. err)
  end
  local code, _, err = collect_run(new_dir(), { "run", "--kubectl", "/nonexistent/kubectl" })
  eq(code, 2, err)
  truthy(err:find("cannot run kubectl ('/nonexistent/kubectl'): not found", 1, true), err)
  code, _, err = collect_run(new_dir(), { "Run_1" })
  eq(code, 2, err)
  truthy(err:find("the Job 'Run_1' is not a Kubernetes name", 1, true), err)
  code, _, err = collect_run(new_dir(), {})
  truthy(code == 2 and err:find("which Job?", 1, true), err)
end)

-- The image ----------------------------------------------------------------------------------------

test("the Containerfile: Debian 12 slim, the release binary copied in, a user that is not root", function()
  local text = assert(h.read_file(ROOT .. "Containerfile"), "Containerfile at the repository's root")
  local lines = {}
  for line in text:gsub("\\\n", " "):gmatch("[^\n]+") do
    if not line:match("^%s*#") and line:find("%S") then lines[#lines + 1] = line end
  end
  local function find(instruction)
    local found = {}
    for _, l in ipairs(lines) do
      local rest = l:match("^%s*" .. instruction .. "%s+(.*)$")
      if rest then found[#found + 1] = rest end
    end
    return found
  end
  eq(find("FROM"), { "${BASE}" }, "one stage, from the BASE argument")
  eq(find("ARG")[1], "BASE=debian:12-slim", "Debian 12 slim unless scripts/build-image gives its own Debian 12 base")
  local arg = find("ARG")[2] or ""
  local var, default = arg:match("^([%w_]+)=(%S+)$")
  eq(default, ".build/release/lunet", "the binary's path is a build argument, scripts/build-release's by default")
  local copy = find("COPY")[1] or ""
  truthy(copy:find("${" .. var .. "}", 1, true) and copy:match("%s/usr/local/bin/lunet$"), "the binary copied onto PATH: " .. copy)
  local install = table.concat(find("RUN"), " ")
  truthy(install:find("libcurl4", 1, true) and install:find("libsnappy1v5", 1, true) and install:find("ca-certificates", 1, true),
    "libcurl and libsnappy (opened with dlopen) and CA certificates installed")
  local users = find("USER")
  truthy(#users >= 1, "a USER")
  local user = users[#users]
  truthy(user:match("^%d+") and not user:match("^0[:%s]") and user ~= "0" and not user:match("^root"), "the last USER is numeric (runAsNonRoot can check it) and not root: " .. user)
  eq(find("ENTRYPOINT"), { '["lunet"]' }, "the entrypoint")
end)

local release = ROOT .. ".build/release/lunet"
test("the release binary needs no library the image lacks (ldd: only libc's)",
  h.file_size(release) == nil and { skip = "no release build here (scripts/build-release lunet)" } or {}, function()
  local code, out = h.run("ldd " .. q(release))
  eq(code, 0, out)
  for line in out:gmatch("[^\n]+") do
    local lib = line:match("^%s*(%S+)")
    truthy(lib:match("^linux%-vdso") or lib:match("^/lib") or lib:match("^lib[cm]%.so") or lib:match("^ld%-linux"),
      "a library the Containerfile would have to install: " .. line)
  end
end)

h.done()
