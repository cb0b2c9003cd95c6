--- `lunet load k8s SCRIPT.lua --shards N --image IMAGE ...`: the Kubernetes manifests that run a
--- load test as N shards at once (issue 37): a ConfigMap holding the script and its files, and an
--- Indexed Job whose N pods each run `lunet load SCRIPT --shards N --start-at T --result-line`.
--- Kubernetes gives each pod its shard in JOB_COMPLETION_INDEX, which `lunet load` reads, and all
--- of them start at the same moment T (now + --start-in, time for the pods to be scheduled and
--- the image pulled). Printed as YAML for `kubectl apply -f -`; `lunet load collect JOB` merges
--- the shards' results once the Job is done (lunet.load.collect).
--- main(args, stdout, stderr) returns the exit status: 0, or 2 for a usage error (the problem
--- said on stderr, nothing on stdout).
local options = require "lunet.load.options"

local M = {}

M.usage = [=[
usage: lunet load k8s SCRIPT.lua --shards N --image IMAGE [options] [-- LUNET LOAD OPTIONS...]
  --shards N           pods, each running 1/N of the load (1 to 1000)
  --image IMAGE        the image with lunet in it (Containerfile builds one)
  --namespace NS, -n   the namespace of the ConfigMap and the Job (default: kubectl's)
  --start-in D         when the shards start, from now (default 60s: pods need to be scheduled)
  --file PATH          a file the script reads, beside it in the pod (again for more)
  --name NAME          the Job's and the ConfigMap's name (default lunet-load-SCRIPT-xxxxx)
  --cpu Q              CPU each pod asks for and is limited to (default 1)
  --memory Q           memory each pod asks for and is limited to (default 512Mi)
  --out prometheus=URL every pod pushes its metrics live to this Prometheus remote write,
                       labelled with the Job's name as testid and its shard
  --out-secret NAME    a Secret whose keys become the pods' environment: the receiver's
                       LUNET_PROMETHEUS_RW_BEARER_TOKEN, or _USERNAME and _PASSWORD
  -- ...               the rest goes to each pod's lunet load (--vus 50 --duration 5m)
Prints the manifests on stdout: lunet load k8s ... | kubectl apply -f -
then, when the Job is done: lunet load collect NAME [--namespace NS]]=]

-- What a ConfigMap may hold: Kubernetes refuses an object over 1 MiB; what is left is for its
-- metadata and YAML's own overhead.
M.MAX_CONFIGMAP_BYTES = 900 * 1024
M.MAX_SHARDS = 1000
local MOUNT = "/lunet/script"

-- A usage error; the values in it are shown with their control bytes escaped (\x1b, \x0a): a
-- name holding an escape sequence or a line break is shown, never obeyed on the terminal.
local function usage_error(fmt, ...)
  local args = table.pack(...)
  for i = 1, args.n do
    if type(args[i]) == "string" then args[i] = require("lunet.terminal_safe").line(args[i]) end
  end
  error({ usage = string.format(fmt, table.unpack(args, 1, args.n)) }, 0)
end

-- The manifests are written by lunet.yaml's emitter (yaml.encode_all, yaml.map: ordered keys).
local yaml = require "lunet.yaml"
local map = yaml.map
M.yaml = yaml.encode_all
M.map = map

-- The command line -------------------------------------------------------------------------------

local TAKES = { ["--shards"] = "shards", ["--image"] = "image", ["--namespace"] = "namespace", ["-n"] = "namespace",
                ["--start-in"] = "start_in", ["--file"] = "files", ["--name"] = "name", ["--cpu"] = "cpu", ["--memory"] = "memory",
                ["--out"] = "out", ["-o"] = "out", ["--out-secret"] = "out_secret" }

-- What each pod's lunet load is given by the Job itself, or what would be lost in the pod.
local RESERVED_EXTRA = {
  ["--shard"] = "the shard comes from JOB_COMPLETION_INDEX", ["--shards"] = "give it to lunet load k8s",
  ["--start-at"] = "use --start-in", ["--result-line"] = "the Job asks for it",
  ["--out"] = "give --out prometheus=URL to lunet load k8s (a file written in a pod is lost with it)",
  ["-o"] = "give --out prometheus=URL to lunet load k8s (a file written in a pod is lost with it)",
  ["--summary-export"] = "lunet load collect --summary-export writes the merged one",
  ["--report"] = "a file written in a pod is lost with it; lunet load collect --report writes the merged one",
}

--- The command line: { script, shards, image, namespace, start_in, files, name, cpu, memory,
--- extra, help }, values as given (checked by M.check).
function M.parse_args(args)
  return require("lunet.cli.argv").read(args, { takes = TAKES, flags = { ["--help"] = "help", ["-h"] = "help" },
    lists = { files = true }, rest = "extra",
    help = "lunet load k8s --help; options for each pod's lunet load go after --" },
    function(message) usage_error("%s", message) end,
    function(c, a)
      if c.script then usage_error("one script only: '%s' and '%s'", c.script, a) end
      c.script = a
    end)
end

-- A DNS-1123 label: what Kubernetes takes as a namespace, and as a Job's name (its pods' host
-- names are NAME-INDEX, a label too, so a Job's name must leave room for "-" and the index).
local function check_label(v, what, max)
  if v == "" or #v > max or not v:match("^[a-z0-9][a-z0-9-]*$") or v:sub(-1) == "-" then
    usage_error("%s '%s' is not a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most %d characters%s",
      what, v, max, max < 63 and " (its pods' host names, NAME-INDEX, must be labels too)" or "")
  end
end

-- What a ConfigMap takes as a key (Kubernetes' IsConfigMapKey): the file's name in the pod.
local function check_key(key, path)
  if key == nil then usage_error("'%s' names no file", path) end
  if #key > 253 or not key:match("^[-._a-zA-Z0-9]+$") or key == "." or key:sub(1, 2) == ".." then
    usage_error("'%s': a ConfigMap cannot hold a file named '%s' (letters, digits, '-', '_' and '.' only, at most 253, not starting with '..'): rename it", path, key)
  end
end

-- A resource quantity as a Kubernetes user writes one: 500m or 1.5 CPUs, 512Mi or 2G of memory.
local CPU_UNITS = { [""] = true, m = true }
local MEMORY_UNITS = { [""] = true, k = true, M = true, G = true, T = true, P = true, E = true,
                       Ki = true, Mi = true, Gi = true, Ti = true, Pi = true, Ei = true }
local function check_quantity(v, what, units, example)
  local number, unit = v:match("^(%d+%.?%d*)(%a*)$")
  if not number or not units[unit] or tonumber(number) == 0 then
    usage_error("%s takes a Kubernetes quantity such as %s, got '%s'", what, example, v)
  end
end

-- The Job's default name: lunet-load-SCRIPT-xxxxx, the script's name made a label, cut to fit.
local function default_name(key, max)
  local base = key:gsub("%.lua$", ""):lower():gsub("[^a-z0-9]+", "-"):gsub("^%-+", "")
  local suffix = {}
  for i = 1, 5 do
    local n = math.random(1, 36)
    suffix[i] = ("abcdefghijklmnopqrstuvwxyz0123456789"):sub(n, n)
  end
  base = base:sub(1, max - #"lunet-load-" - 6):gsub("%-+$", "")
  return "lunet-load-" .. (base ~= "" and base .. "-" or "") .. table.concat(suffix)
end

-- --out prometheus=URL (the only output a pod's run can keep: it leaves the pod as it runs) and
-- --out-secret NAME; the URL checked as lunet load checks it (no credentials in it: they
-- would be in the manifest).
local function check_out(c)
  if c.out_secret then check_label(c.out_secret, "--out-secret", 253) end
  if not c.out then
    if c.out_secret then usage_error("--out-secret without --out prometheus=URL") end
    return
  end
  local url = c.out:match("^prometheus=(.+)$")
  if not url then usage_error("--out takes prometheus=URL here, got '%s' (a file written in a pod is lost with it)", c.out) end
  local ok, err = require("lunet.load.prometheus").config(url, function() return nil end)
  if not ok then usage_error("%s", err) end
  c.prometheus_url = url
end

--- The command line checked, with its defaults; raises { usage = message } on a problem.
function M.check(c)
  if not c.script then usage_error("which script? lunet load k8s SCRIPT.lua --shards N --image IMAGE") end
  if c.shards == nil then usage_error("--shards N is needed: how many pods share the load") end
  local n = c.shards:match("^%d+$") and tonumber(c.shards)
  if not (n and n >= 1 and n <= M.MAX_SHARDS) then
    usage_error("--shards takes a whole number from 1 to %d, got '%s'", M.MAX_SHARDS, c.shards)
  end
  c.shards = math.tointeger(n)
  if c.image == nil or c.image == "" then usage_error("--image IMAGE is needed: the image each pod runs lunet from (Containerfile builds one)") end
  if c.image:find("[%s%c]") then usage_error("--image '%s' has a space or a control character", c.image) end
  if not utf8.len(c.image) then usage_error("--image is not UTF-8 text") end
  if c.namespace then check_label(c.namespace, "--namespace", 63) end
  local start_in, err = options.duration(c.start_in or "60s", "--start-in")
  if not start_in then usage_error("%s", err) end
  c.start_in = math.ceil(start_in)
  c.cpu, c.memory = c.cpu or "1", c.memory or "512Mi"
  check_quantity(c.cpu, "--cpu", CPU_UNITS, "1, 2 or 500m")
  check_quantity(c.memory, "--memory", MEMORY_UNITS, "512Mi or 2Gi")
  check_out(c)
  for _, a in ipairs(c.extra) do
    local name = a:match("^(%-[%w-]*)") and (a:match("^(%-%-[%w-]+)=") or a)
    if name and RESERVED_EXTRA[name] then usage_error("'%s' after --: %s", a, RESERVED_EXTRA[name]) end
    if not utf8.len(a) then usage_error("'%s' after -- is not UTF-8 text", a) end
  end
  local max_name = 63 - #("-" .. (c.shards - 1))
  c.key = c.script:match("[^/]+$")
  check_key(c.key, c.script)
  if c.name then check_label(c.name, "--name", max_name) else c.name = default_name(c.key, max_name) end
  return c
end

-- The ConfigMap's contents ---------------------------------------------------------------------------

local function too_big(bytes)
  usage_error("the script and its files come to %s KiB; a ConfigMap holds at most %d KiB here (Kubernetes' limit is 1 MiB for the whole object): make the data smaller, or put it in the image",
    bytes and tostring(math.ceil(bytes / 1024)) or "more than 900", M.MAX_CONFIGMAP_BYTES // 1024)
end

-- A file's bytes, read no further than `room` allows (a huge file, or /dev/zero, is refused
-- after that many bytes, not read whole first).
local function read_file(path, what, room)
  local f, err = io.open(path, "rb")
  if not f then usage_error("cannot read %s: %s", what, tostring(err)) end
  local text, rerr = f:read(math.max(room, 0) + 1)
  f:close()
  if rerr then usage_error("cannot read %s '%s': %s", what, path, tostring(rerr)) end
  text = text or ""   -- nil: an empty file
  if #text > room then too_big(nil) end
  return text
end

local base64 = require("lunet.base64").encode

--- The files the pods get: { data = map of UTF-8 texts, binary = map of base64, bytes = size
--- in the ConfigMap }, the script first, then each --file in order.
function M.contents(c)
  local data, binary, seen, bytes = {}, {}, {}, 0
  local function add(path, key, what)
    check_key(key, path)
    if seen[key] then usage_error("two files named '%s' ('%s' and '%s'): a ConfigMap holds one of each name, beside the script in the pod", key, seen[key], path) end
    seen[key] = path
    local text = read_file(path, what, M.MAX_CONFIGMAP_BYTES - bytes)
    local into, value = data, text
    if not utf8.len(text) then into, value = binary, base64(text) end   -- data holds UTF-8 text only
    into[#into + 1] = key
    into[#into + 1] = value
    bytes = bytes + #value
  end
  add(c.script, c.key, "the script")
  for _, path in ipairs(c.files) do add(path, path:match("[^/]+$"), "--file") end
  if bytes > M.MAX_CONFIGMAP_BYTES then too_big(bytes) end
  return { data = map(table.unpack(data)), binary = #binary > 0 and map(table.unpack(binary)) or nil, bytes = bytes }
end

-- The manifests ------------------------------------------------------------------------------------

local function labels(c) return map("app.kubernetes.io/name", "lunet-load", "app.kubernetes.io/instance", c.name) end

local function metadata(c) return map("name", c.name, "namespace", c.namespace, "labels", labels(c)) end

local function configmap(c, files)
  -- Immutable: no pod's script changes under it, and the kubelets do not watch it (a thousand
  -- pods' watches weigh on the API server). A new run gets a new name (the default's suffix).
  return map("apiVersion", "v1", "kind", "ConfigMap", "metadata", metadata(c), "immutable", true,
             "data", files.data, "binaryData", files.binary)
end

--- RFC 3339 in UTC, whole seconds: what `lunet load --start-at` takes.
function M.rfc3339(t) return os.date("!%Y-%m-%dT%H:%M:%SZ", t) end

-- Each pod's command: the script from the ConfigMap, the shard count, the moment all start.
local function command(c, start_at)
  local words = { "lunet", "load", MOUNT .. "/" .. c.key, "--shards", tostring(c.shards), "--start-at", M.rfc3339(start_at), "--quiet", "--result-line" }
  table.move(c.extra, 1, #c.extra, #words + 1, words)
  return words
end

local function pod_template(c, start_at)
  local resources = map("cpu", c.cpu, "memory", c.memory)
  local container = map(
    "name", "lunet", "image", c.image, "command", command(c, start_at),
    "workingDir", MOUNT,   -- the script opens its files by name, as beside it at home
    "resources", map("requests", resources, "limits", resources),   -- equal: Guaranteed, steady CPU
    -- lunet load writes nothing in the pod (its results leave on stdout, --out prometheus over
    -- the network): the root file system read-only, and no writable volume (scripts/test-image
    -- runs the image so, with no tmpfs either).
    "securityContext", map("allowPrivilegeEscalation", false, "capabilities", map("drop", { "ALL" }),
                           "readOnlyRootFilesystem", true),
    "volumeMounts", { map("name", "script", "mountPath", MOUNT, "readOnly", true) },
    "env", c.prometheus_url and {
      map("name", "LUNET_OUT", "value", "prometheus"),
      map("name", "LUNET_PROMETHEUS_RW_SERVER_URL", "value", c.prometheus_url),
      map("name", "LUNET_PROMETHEUS_RW_TESTID", "value", c.name),   -- one test id for every shard
    } or nil,
    "envFrom", c.out_secret and { map("secretRef", map("name", c.out_secret)) } or nil)
  return map("metadata", map("labels", labels(c)), "spec", map(
    "restartPolicy", "Never",   -- a failed shard is not run again late: its index fails
    "automountServiceAccountToken", false,   -- the load needs no access to the API
    -- The "restricted" Pod Security Standard (Containerfile's user is numeric, 10001).
    "securityContext", map("runAsNonRoot", true, "seccompProfile", map("type", "RuntimeDefault")),
    "containers", { container },
    "volumes", { map("name", "script", "configMap", map("name", c.name, "defaultMode", 292)) }))   -- 0444
end

local function job(c, start_at)
  return map("apiVersion", "batch/v1", "kind", "Job", "metadata", metadata(c), "spec", map(
    "completionMode", "Indexed", "completions", c.shards, "parallelism", c.shards,
    -- A shard that fails is not retried: a new pod would start after start-at, out of step
    -- with the others. Every index runs to its end whatever the others do (maxFailedIndexes =
    -- N: a shard that crossed a threshold must not stop the rest), and backoffLimit, which
    -- counts failures over all indexes, can never be the one that ends the Job: at most one
    -- failure an index, N in all.
    "backoffLimitPerIndex", 0, "maxFailedIndexes", c.shards, "backoffLimit", c.shards,
    "ttlSecondsAfterFinished", 86400,   -- the pods, and so their logs, kept a day for collect
    "template", pod_template(c, start_at)))
end

--- The manifests' YAML for the checked command line `c`, starting the shards at `start_at`
--- (seconds since the epoch).
function M.manifests(c, start_at)
  local files = M.contents(c)
  return string.format("# lunet load k8s: %d shard%s of %s, starting at %s. kubectl apply -f this; once the Job is done:\n#   lunet load collect %s%s\n",
    c.shards, c.shards == 1 and "" or "s", c.key, M.rfc3339(start_at), c.name, c.namespace and (" --namespace " .. c.namespace) or "")
    .. M.yaml({ configmap(c, files), job(c, start_at) })
end

M.now = os.time

--- Runs `lunet load k8s` with args (the words after `k8s`); returns the exit status.
function M.main(args, stdout, stderr)
  local ok, result = pcall(function()
    local c = M.parse_args(args or {})
    if c.help then return c end
    M.check(c)
    c.start_at = M.now() + c.start_in
    c.text = M.manifests(c, c.start_at)
    return c
  end)
  if not ok then
    if type(result) == "table" and result.usage then stderr:write("lunet load k8s: ", result.usage, "\n") return 2 end
    error(result, 0)
  end
  if result.help then stdout:write(M.usage, "\n") return 0 end
  stdout:write(result.text)
  stderr:write(string.format("lunet load k8s: job %s, %d shard%s starting at %s (in %d s): pipe this to kubectl apply -f -\n",
    result.name, result.shards, result.shards == 1 and "" or "s", M.rfc3339(result.start_at), result.start_in))
  return 0
end

return M
