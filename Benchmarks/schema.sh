#!/usr/bin/env bash
# bench (l): JSON Schema validation in-process, lunet.schema beside Python's jsonschema 4.26
# One ~1 MB document, generated the same every run (an array of orders: a UUID, a customer with
# name, e-mail and phone, a date-time, a status from an enum, 1 to 4 line items with a SKU
# pattern, an integer quantity and a bounded price, a total, notes that may be null, unique
# tags with a pattern) and its draft 2020-12 schema ($defs and $refs, required,
# additionalProperties false, enum, patterns, bounds, minItems, uniqueItems, formats as
# annotations, which both validators default to). Each validator is built once, then validates
# the decoded document again and again for at least SCHEMA_SECONDS of CPU: lunet's
# schema.compile(s):validate(doc), and jsonschema's Draft202012Validator(s).validate(doc) in
# the tests' venv (scripts/venv). Milliseconds of CPU (os.clock / time.process_time) and of
# wall time per validation; SCHEMA_ROUNDS rounds that run each process in turn, the median
# figure. Goal (issue 38): lunet at least 10x faster (CPU per validation).
#   SCHEMA_ORDERS=n (default 2200: about 1 MB), SCHEMA_SECONDS=s (default 1), SCHEMA_ROUNDS=n (3)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init schema

ORDERS=${SCHEMA_ORDERS:-2200}
SECONDS_EACH=${SCHEMA_SECONDS:-1}
ROUNDS=${SCHEMA_ROUNDS:-3}
GOAL=10
[[ $QUICK == 1 ]] && ORDERS=500 SECONDS_EACH=0.3 ROUNDS=1
VENV=$("$ROOT/scripts/venv" 2>/dev/null)
PY=${VENV:+$VENV/bin/python3}
[[ -n $PY && -x $PY ]] && "$PY" -c 'import jsonschema' 2>/dev/null || { say "no jsonschema in the venv (scripts/venv failed): its row is left empty"; PY=; }
V_PY=$([[ -n $PY ]] && "$PY" -c 'import importlib.metadata as m, sys; print("jsonschema", m.version("jsonschema"), "on Python", sys.version.split()[0])')

cat >"$TMP/schema.json" <<'JSON'
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "array",
  "items": { "$ref": "#/$defs/order" },
  "$defs": {
    "order": {
      "type": "object",
      "required": ["id", "customer", "created", "status", "items", "total"],
      "additionalProperties": false,
      "properties": {
        "id": { "type": "string", "format": "uuid" },
        "customer": { "$ref": "#/$defs/customer" },
        "created": { "type": "string", "format": "date-time" },
        "status": { "enum": ["pending", "paid", "shipped", "delivered", "cancelled"] },
        "items": { "type": "array", "minItems": 1, "maxItems": 50, "items": { "$ref": "#/$defs/item" } },
        "total": { "type": "number", "minimum": 0 },
        "notes": { "type": ["string", "null"], "maxLength": 500 },
        "tags": { "type": "array", "uniqueItems": true, "items": { "type": "string", "pattern": "^[a-z][a-z0-9-]*$" } }
      }
    },
    "customer": {
      "type": "object",
      "required": ["name", "email"],
      "properties": {
        "name": { "type": "string", "minLength": 1, "maxLength": 100 },
        "email": { "type": "string", "format": "email" },
        "phone": { "type": "string", "pattern": "^\\+[0-9]{2} [0-9]{3} [0-9]{6,8}$" }
      }
    },
    "item": {
      "type": "object",
      "required": ["sku", "quantity", "price"],
      "additionalProperties": false,
      "properties": {
        "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" },
        "name": { "type": "string", "maxLength": 200 },
        "quantity": { "type": "integer", "minimum": 1, "maximum": 1000 },
        "price": { "type": "number", "exclusiveMinimum": 0, "maximum": 100000 }
      }
    }
  }
}
JSON

# The document: a fixed linear congruential generator, so every run has the same bytes.
cat >"$TMP/gen.lua" <<'LUA'
local n, path = tonumber(arg[1]), arg[2]
local seed = 20240601
local function rnd(m) seed = (seed * 1103515245 + 12345) % 2147483648; return seed % m end
local function hex(k) local t = {} for i = 1, k do t[i] = string.format("%x", rnd(16)) end return table.concat(t) end
local WORDS = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett" }
local STATUS = { "pending", "paid", "shipped", "delivered", "cancelled" }
local orders = json.array()
for i = 1, n do
  local items, total = json.array(), 0
  for j = 1, 1 + rnd(4) do
    local price = (100 + rnd(99900)) / 100
    local qty = 1 + rnd(20)
    items[j] = { sku = string.char(65 + rnd(26), 65 + rnd(26), 65 + rnd(26)) .. "-" .. string.format("%04d", rnd(10000)),
      name = WORDS[1 + rnd(10)] .. " " .. WORDS[1 + rnd(10)] .. " widget", quantity = qty, price = price }
    total = total + qty * price
  end
  local tags = json.array()
  for j = 1, rnd(3) do tags[j] = WORDS[1 + (i + j) % 10] .. "-" .. j end
  orders[i] = {
    id = hex(8) .. "-" .. hex(4) .. "-4" .. hex(3) .. "-a" .. hex(3) .. "-" .. hex(12),
    customer = { name = WORDS[1 + rnd(10)] .. " " .. WORDS[1 + rnd(10)], email = WORDS[1 + rnd(10)] .. i .. "@example.com",
      phone = string.format("+%02d %03d %07d", rnd(100), rnd(1000), rnd(10000000)) },
    created = string.format("2024-%02d-%02dT%02d:%02d:%02dZ", 1 + rnd(12), 1 + rnd(28), rnd(24), rnd(60), rnd(60)),
    status = STATUS[1 + rnd(5)], items = items, total = math.floor(total * 100 + 0.5) / 100,
    notes = rnd(3) == 0 and json.null or ("deliver to the " .. WORDS[1 + rnd(10)] .. " door"), tags = tags,
  }
end
local text = json.encode(orders)
local f = assert(io.open(path, "wb"))
f:write(text)
f:close()
print("bytes=" .. #text .. " orders=" .. n)
LUA

cat >"$TMP/run.lua" <<'LUA'
local schema = require "lunet.schema"
local ok, core = pcall(require, "lunet.core")
local now = ok and type(core) == "table" and core.now or os.clock
local function read(p) local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s end
local s, doc, secs = json.decode(read(arg[1])), json.decode(read(arg[2])), tonumber(arg[3])
local v = schema.compile(s)
local valid, errors = v:validate(doc)
assert(valid, errors and errors[1] and (errors[1].path .. ": " .. errors[1].message))
local n, c0, w0 = 0, os.clock(), now()
repeat v:validate(doc); n = n + 1 until os.clock() - c0 >= secs
print(string.format("reps=%d cpu=%.6f wall=%.6f valid=%s", n, os.clock() - c0, now() - w0, tostring(valid)))
LUA

cat >"$TMP/run.py" <<'PY'
import json, sys, time
from jsonschema import Draft202012Validator
schema, doc, secs = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
v = Draft202012Validator(schema)
errors = list(v.iter_errors(doc))
assert not errors, errors[0]
n, c0, w0 = 0, time.process_time(), time.perf_counter()
while True:
    v.validate(doc)
    n += 1
    if time.process_time() - c0 >= secs:
        break
print("reps=%d cpu=%.6f wall=%.6f valid=True" % (n, time.process_time() - c0, time.perf_counter() - w0))
PY

say "(l) JSON Schema validation, lunet.schema and jsonschema"
DOC=$TMP/doc.json
line=$(timeout $LIMIT "$LUNET" "$TMP/gen.lua" "$ORDERS" "$DOC" 2>"$TMP/gen.err")
[[ $line == bytes=* ]] || { say "cannot generate the document: $line $(tail -3 "$TMP/gen.err")"; exit 1; }
BYTES=$(field bytes "$line")

# schema_run KEY CMD...: one run; appends its CPU and wall ms per validation to $TMP/KEY.{cpu,wall}.
schema_run() {
  local key=$1 out
  shift
  out=$(timeout $LIMIT "$@" "$TMP/schema.json" "$DOC" "$SECONDS_EACH" 2>"$TMP/$key.err" </dev/null) ||
    { say "$key failed: $(tail -3 "$TMP/$key.err")"; return 1; }
  [[ $(field valid "$out") == true || $(field valid "$out") == True ]] || { say "$key: $out"; return 1; }
  calc '%.4f\n' "$(field cpu "$out") * 1000 / $(field reps "$out")" >>"$TMP/$key.cpu"
  calc '%.4f\n' "$(field wall "$out") * 1000 / $(field reps "$out")" >>"$TMP/$key.wall"
}
KEYS=(lunet)
[[ -n $PY ]] && KEYS+=(python)
declare -A FAILED CPU WALL
for ((round = 1; round <= ROUNDS; round++)); do
  for k in "${KEYS[@]}"; do
    [[ -z ${FAILED[$k]:-} ]] || continue
    case $k in
    lunet) schema_run lunet "$LUNET" "$TMP/run.lua" ;;
    python) schema_run python "$PY" "$TMP/run.py" ;;
    esac || FAILED[$k]=1
  done
done
for k in lunet python; do
  [[ -z ${FAILED[$k]:-} && -s $TMP/$k.cpu ]] || continue
  CPU[$k]=$(calc '%.2f' "$(median <"$TMP/$k.cpu")") WALL[$k]=$(calc '%.2f' "$(median <"$TMP/$k.wall")")
done
declare -A LABEL=([lunet]="lunet.schema (compiled once)" [python]="jsonschema Draft202012Validator (built once)")

echo "(l) JSON Schema validation of a $BYTES-byte document ($ORDERS orders)   CPU ms   wall ms"
for k in lunet python; do
  [[ -n ${CPU[$k]:-} ]] && printf '    %-62s %8s %9s\n' "${LABEL[$k]}" "${CPU[$k]}" "${WALL[$k]}"
done
ratio_goal "jsonschema/lunet CPU per validation" "${CPU[python]:-}" "${CPU[lunet]:-}" ">=" "$GOAL"
echo "    ms per validation of the decoded document; the median of $ROUNDS round(s), each running both"
echo "    processes for at least $SECONDS_EACH s of CPU. ${V_PY:-jsonschema missing}."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (l) JSON Schema validation: lunet.schema beside Python's jsonschema"
  echo "| Validator | CPU ms per validation | wall ms per validation |"
  echo "|---|---:|---:|"
  for k in lunet python; do
    [[ -n ${CPU[$k]:-} ]] && echo "| ${LABEL[$k]} | ${CPU[$k]} | ${WALL[$k]} |"
  done
  echo
  echo "- The document: $BYTES bytes, $ORDERS orders (generated by the benchmark with a fixed seed),"
  echo "  each with a UUID, a customer, a date-time, a status, 1 to 4 line items, a total, notes and"
  echo "  tags; its draft 2020-12 schema uses \$defs and \$ref, required, additionalProperties false,"
  echo "  enum, pattern, numeric bounds, minItems/maxItems, uniqueItems and formats (annotations, the"
  echo "  default of both). Both validate the decoded document; decoding is not timed."
  echo "- ${V_PY:-jsonschema missing}: \`Draft202012Validator(schema)\` built once, \`validate(doc)\` timed."
  echo "  lunet: \`schema.compile(schema)\` once, \`v:validate(doc)\` timed. CPU: os.clock() and"
  echo "  time.process_time() around whole calls, at least $SECONDS_EACH s each; $ROUNDS round(s), the median."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
