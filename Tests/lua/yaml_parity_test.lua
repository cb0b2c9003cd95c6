-- yaml.decode against files as OpenAPI and Kubernetes repositories have them, and parity with
-- PyYAML's libyaml parser (from the tests' venv) on those files and on documents PyYAML writes in
-- every style (split from yaml_test.lua).
local h = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "harness.lua")
local test = test or h.test
h.cleanup(after_all, h.remove_temps)
local eq, truthy = h.eq, h.truthy
local yaml = require "lunet.yaml"

local differ = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "yaml_differ.lua")

-- Hand-written files as OpenAPI and Kubernetes repositories have them: $refs, enums, examples,
-- multi-line descriptions, anchors and merge keys, flow and block styles, a stream.
local PETSTORE = [==[
%YAML 1.2
---
openapi: 3.0.3   # what OpenAPI files look like by hand
info:
  version: "1.0.0"
  description: |
    A sample API that uses a petstore as an example.

    It shows `$ref`, enums and examples:
      - indented lines stay as they are
  license: {name: MIT, url: 'https://opensource.org/licenses/MIT'}
servers:
- url: https://petstore.example.com/v1
  description: >-
    The production server, folded
    onto one line.
x-parameters:
  limit: &limit
    name: limit
    in: query
    schema: {type: integer, format: int32, minimum: 1, maximum: 100, default: 20}
paths:
  /pets:
    get:
      operationId: listPets
      tags: [pets]
      parameters:
        - *limit
        - <<: *limit
          name: offset
          description: "How many to skip,\
            \ from the start"
      responses:
        200:
          description: A paged array of pets
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pets"}
              example: [{id: 1, name: Rex, tag: dog}, {id: 2, name: Tom, tag: ~}]
        default: &error
          description: unexpected error
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Error'}
    post:
      responses: {'201': {description: Null response}, default: *error}
components:
  schemas:
    Pet:
      required:
      - id
      properties:
        status:
          enum:
          - available
          - sold
        weight: {type: number, example: 12.5, minimum: 0.0, exclusiveMaximum: 1e3}
        born: {type: string, format: date, example: 2020-01-31}
        nickname: !!str 007
    Pets: {type: array, maxItems: 0x64, items: {$ref: "#/components/schemas/Pet"}}
    Error: {properties: {message: {type: string, nullable: true, default: null}}}
...
]==]
local KUBERNETES = [==[
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: &labels {app: web, tier: frontend}}
spec:
  replicas: 3
  template:
    metadata: {labels: {<<: *labels, version: "1.2"}}
    spec:
      containers:
        - &container
          name: web
          image: registry.example.com/shop/web:1.2.0
          args: ["--port=8080", --verbose, '--name=it''s']
          env:
            - {name: GREETING, value: "Hello,\tworld \u263A \x41"}
            - name: MULTI
              value: >+
                first
                second

          resources: {requests: &requests {cpu: 250m, memory: 64Mi}}
        - <<: *container
          name: sidecar
          args: []
          resources: {limits: *requests}
---
kind: ConfigMap
data:
  config.json: |
    {"debug": false,
     "tabs": "a	b"}
  script.sh: |-
      #!/bin/sh
      echo "indented two more"
...
--- {kind: Secret, data: {token: !!binary "c2VjcmV0"}}
]==]

test("hand-written OpenAPI and Kubernetes files", function()
  local api = yaml.decode(PETSTORE)
  local get = api.paths["/pets"].get
  eq({ get.parameters[2].name, get.parameters[2]["in"], get.parameters[2].description, get.parameters[1].name },
    { "offset", "query", "How many to skip, from the start", "limit" }, "an alias, and a merge that overrides a key")
  eq(get.responses["200"].content["application/json"].example[2].tag, json.null, "~ in flow")
  eq(api.paths["/pets"].post.responses.default.description, "unexpected error", "an aliased response")
  eq(api.info.description, "A sample API that uses a petstore as an example.\n\nIt shows `$ref`, enums and examples:\n  - indented lines stay as they are\n", "a literal block")
  eq(api.servers[1].description, "The production server, folded onto one line.", "a folded block")
  local pet = api.components.schemas.Pet.properties
  eq({ pet.weight.exclusiveMaximum, math.type(pet.weight.minimum), pet.born.example, pet.nickname, api.components.schemas.Pets.maxItems },
    { 1000.0, "float", "2020-01-31", "007", 100 }, "scalars")
  local docs = yaml.decode_all(KUBERNETES)
  eq(#docs, 3, "three documents")
  local containers = docs[1].spec.template.spec.containers
  eq({ containers[2].name, containers[2].image, #containers[2].args, containers[2].resources.limits.cpu },
    { "sidecar", "registry.example.com/shop/web:1.2.0", 0, "250m" }, "a merged container")
  eq(containers[1].env[1].value, "Hello,\tworld \u{263A} A", "escapes")
  eq(containers[1].env[2].value, "first second\n\n", "folded, kept")
  eq(docs[2].data["script.sh"], '#!/bin/sh\necho "indented two more"', "a stripped literal")
end)

-- PyYAML's libyaml parser with YAML 1.2's core schema and keys as written (as lunet.yaml reads
-- them; docs/yaml.md lists the differences from PyYAML's YAML 1.1) on edge cases, the files
-- given and documents PyYAML writes in every style. Writes [{yaml, stream?, json | error}].
local GEN = [==[
import json, math, random, re, sys, yaml
class Core(yaml.CSafeLoader): pass
Core.yaml_implicit_resolvers = {}
for tag, rx, first in [("bool", "true|True|TRUE|false|False|FALSE", "tTfF"), ("null", "~|null|Null|NULL|", "~nN"),
        ("int", "[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"), ("merge", "<<", "<"),
        ("float", r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)", "-+0123456789.")]:
    Core.add_implicit_resolver("tag:yaml.org,2002:" + tag, re.compile("^(?:%s)$" % rx), list(first) + [""] * (tag == "null"))
def scalar(f): return lambda loader, node: f(loader.construct_scalar(node))
Core.add_constructor("tag:yaml.org,2002:int", scalar(lambda v: int(v[2:], 16) if v[:2] == "0x" else int(v[2:], 8) if v[:2] == "0o" else int(v)))
Core.add_constructor("tag:yaml.org,2002:float", scalar(lambda v: float(v.lower().replace(".inf", "inf").replace(".nan", "nan"))))
Core.add_constructor("tag:yaml.org,2002:binary", scalar(lambda v: "".join(v.split())))
def mapping(loader, node):
    loader.flatten_mapping(node)
    return {k.value: loader.construct_object(v, deep=True) for k, v in node.value}
Core.add_constructor("tag:yaml.org,2002:map", mapping)
def plain(v):  # non-finite floats as strings, integers beyond 64 bits as floats (as lunet reads them)
    if isinstance(v, float) and not math.isfinite(v): return "$nan" if v != v else "$inf" if v > 0 else "$-inf"
    if type(v) is int and not -2**63 <= v < 2**63: return float(v)
    if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
    return [plain(x) for x in v] if isinstance(v, list) else v
# PyYAML writes the integer 12 in a quoted style as `! "12"` and reads it back as 12; YAML 1.2 reads
# the non-specific tag as "a string". The corpus has no "! " in its strings: dropping the tag tells
# PyYAML what YAML 1.2 means.
NON_SPECIFIC = re.compile(r"(?:^|(?<=[\s\[{,]))! (?=[\"'|>])", re.M)
def case(text, stream=False):
    try:
        docs = list(yaml.load_all(NON_SPECIFIC.sub("", text), Loader=Core))
        return {"yaml": text, "stream": stream, "json": plain(docs if stream else docs[0] if docs else None)}
    except Exception as e:
        return {"yaml": text, "error": str(e).replace("\n", " ")}
EDGE = ["- - - x\n    - y\n  - z\n", "a:\n  - b\n  -\n    c: d\n", "? a\n: 1\n? b\n", "a: >2\n   lead\n  next\n", "q: \"a\n  b\n\n  c\"\n",
    "- a #c\n- b#c\n", "{a: [1,\n  2], b: {c: d,\n e: f}}\n", "{? a: b, c}", "[a: b, ? c : d]", "&a x: &b y\n*b : *a\n", "a: &m {x: 1}\nb:\n  <<: [*m, {x: 2, y: 3}]\n",
    "%TAG !e! tag:yaml.org,2002:\n---\na: !e!int 5\n", "---\n--- a\n---\n", "a: -1\nb: +2\nc: 0.\nd: -.5e-3\ne: 1_000\n", "- [a, b]: c\n", "a: b\n- c\n", "a:\n  b: 1\n c: 2\n",
    "a: *nope\n", "a: |x\n  y\n", "\"a\nb\": c\n", "a: [b, c]]\n", "? - a\n: c\n", "a: 'x'\n\nb: \"y\"\n\n\n", "a: b #c\n  d\n", "a:\n- b\n  c\n", "[\n---\n]"]
WORDS = ["pet", "id", "Ünïcødé", "日本語", "emoji 🎉", "a b", "x:y", "a: b", "#x", "a #b", "- x", "? q", "@at", "`tick", "%pct", "'q'", '"dq"', "b\\s",
    "tab\there", "line\nbreak", " lead", "trail ", "", "null", "~", "true", "False", "yes", "on", "1.5", "12", "0x1F", "0o17", "1e3", ".inf", "-.5", "<<",
    "*star", "&amp", "!bang", "|pipe", ">gt", "{b}", "[b]", "a,b", "-", "---", "...", "ctl\u0007", "esc\x1b"]
rnd = random.Random(int(sys.argv[1]))
def text():
    return rnd.choice(WORDS) if rnd.random() < 0.5 else "\n".join(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 8))) for _ in range(rnd.choice([1, 1, 3])))
def scalar_value():
    return rnd.choice([text, text, lambda: rnd.choice([0, -7, 2**31, 2**63 - 1, -2**63, 10**20, 0.5, -1.25, 1e300, 1e-7, 2.0, float("inf"), True, False, None]),
        lambda: bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 60))), lambda: str(rnd.randint(0, 99999))])()
def value(depth, shared):
    r = rnd.random()
    if depth > 5 or r < 0.4: return scalar_value()
    if r < 0.5 and shared: return rnd.choice(shared)
    v = ({(rnd.randint(100, 599) if rnd.random() < 0.15 else text().replace("\n", " ")): value(depth + 1, shared) for _ in range(rnd.randint(0, 6))}
         if r < 0.75 else [value(depth + 1, shared) for _ in range(rnd.randint(0, 6))])
    if rnd.random() < 0.1: shared.append(v)
    return v
def dump(data):
    opts = dict(default_flow_style=rnd.choice([False, True, None]), width=rnd.choice([10, 20, 40, 80, 200]), allow_unicode=rnd.random() < 0.5,
        explicit_start=rnd.random() < 0.5, indent=rnd.choice([2, 3, 4]), sort_keys=rnd.random() < 0.5)
    r = rnd.random()
    if r < 0.1: opts["canonical"] = True
    elif r < 0.35: opts["default_style"] = rnd.choice(['"', "'", "|", ">"])
    return yaml.dump(data, Dumper=rnd.choice([yaml.CSafeDumper, yaml.SafeDumper]), **opts)
cases = [case(t, True) for t in EDGE] + [case(open(p, encoding="utf-8").read(), True) for p in sys.argv[4:]]
cases += [case(dump(value(0, []))) for _ in range(int(sys.argv[2]))]
json.dump(cases, open(sys.argv[3], "w"), ensure_ascii=False)
]==]

local PYTHON = os.getenv("LUNET_VENV") and os.getenv("LUNET_VENV") .. "/bin/python3"
local NO_PYYAML = not PYTHON and "LUNET_VENV is not set (scripts/test makes the venv)"
  or (h.run(PYTHON .. " -c 'import yaml'") ~= 0 and "the venv has no PyYAML (scripts/venv installs it)") or nil

test("parity with PyYAML's libyaml parser", { skip = NO_PYYAML }, function()
  local out = h.tmpname()
  local code, log = h.run(string.format("%s %s 38 300 %s %s %s", PYTHON, h.script(GEN, ".py"), out, h.temp_file(PETSTORE), h.temp_file(KUBERNETES)))
  eq(code, 0, "the parity script: " .. log)
  local cases, bad = json.decode(h.read_file(out)), {}
  for i, c in ipairs(cases) do
    local ok, v = pcall(c.stream and yaml.decode_all or yaml.decode, c.yaml)
    local d = (c.error and ok and "accepted; PyYAML: " .. c.error) or (not c.error and (not ok and tostring(v) or differ(v, c.json)))
    if d then bad[#bad + 1] = string.format("case %d: %s\n%s", i, d, c.yaml) end
  end
  eq(#cases, 328, "the documents")
  truthy(#bad == 0, #bad .. " documents read differently:\n" .. table.concat(bad, "\n----\n", 1, math.min(#bad, 3)))
end)

h.done()
