#!/usr/bin/env bash
# bench (f): JSON decode and encode in-process, lunet's json beside lua-cjson in lua5.4
# A ~100 KB and a ~5 MB document (more_json_gen.lua: objects, arrays, strings with escapes and
# UTF-8, integers, floats, booleans, null), generated once; each decoded into Lua tables and
# encoded back, again and again for at least 0.5 s of CPU, timed with os.clock() in the process
# (more_json.lua): lunet's json.decode / json.encode, and lua-cjson's in lua5.4 (cjson cannot load
# into lunet, which has its own Lua), in both GC modes. MB/s of the document's bytes; JSON_REPEAT
# rounds that run each process in turn (lunet, lua-cjson, lua-cjson incremental, lunet, ...), the
# median figure. Goals (issue 21): lunet at least twice lua-cjson's speed both ways, on each
# document, beside the faster lua-cjson row. JSON_ROUNDS=n: n rounds instead of 5 (a noisy machine).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init json

JSON_SMALL=100000  # bytes of the small document (about)
JSON_LARGE=5000000 # bytes of the large document (about)
JSON_SECONDS=0.5   # least CPU time per measure
JSON_REPEAT=${JSON_ROUNDS:-5} # rounds, each running every process once; the median is reported
JSON_GOAL=2        # lunet/lua-cjson at least this, each way, each document
[[ $QUICK == 1 ]] && JSON_LARGE=1000000 JSON_SECONDS=0.2 JSON_REPEAT=1

HAVE_CJSON=0
timeout $LIMIT lua5.4 -e 'require "cjson"' 2>/dev/null && HAVE_CJSON=1
V_CJSON="lua-cjson missing"
[[ $HAVE_CJSON == 1 ]] && V_CJSON="lua-cjson $(timeout $LIMIT lua5.4 -e 'print(require("cjson")._VERSION)' 2>/dev/null | sed 's/^lua-cjson //')"
V_CJSON_PKG=$(timeout $LIMIT dpkg-query -W -f='${Version}' lua-cjson 2>/dev/null)
[[ -n $V_CJSON_PKG ]] && V_CJSON="$V_CJSON (Debian $V_CJSON_PKG)"

say "(f) JSON, lunet and lua-cjson"
declare -A F_FILE F_BYTES F_RECORDS
F_OK=1
for d in small large; do
  case $d in small) sz=$JSON_SMALL ;; large) sz=$JSON_LARGE ;; esac
  F_FILE[$d]="$TMP/doc-$d.json"
  line=$(timeout $LIMIT lua5.4 "$HERE/more_json_gen.lua" "$sz" "${F_FILE[$d]}" 2>"$TMP/gen.err")
  if [[ $line != bytes=* ]]; then
    say "cannot generate the $d document: $line $(tail -3 "$TMP/gen.err")"
    F_OK=0
    continue
  fi
  F_BYTES[$d]=$(field bytes "$line") F_RECORDS[$d]=$(field records "$line")
done
F_ROWS=()
declare -A F_DEC F_ENC F_DEC_MS F_ENC_MS F_OUT F_LABEL F_FAILED
# json_run KEY DOC GC CODEC CMD...: runs `CMD... more_json.lua FILE SECONDS GC` once and appends
# its decode and encode figures to $TMP/rate.KEY_DOC.{dec,enc}. The script must say it measured
# CODEC (it picks lunet's json when it finds one, else lua-cjson: a lunet that hid its json global
# once had lunet measure lua-cjson).
json_run() {
  local key=$1 doc=$2 gc=$3 codec=$4 out line
  shift 4
  out=$(timeout $LIMIT "$@" "$HERE/more_json.lua" "${F_FILE[$doc]}" "$JSON_SECONDS" "$gc" 2>"$TMP/json.err" </dev/null)
  local rc=$?
  [[ $rc == 0 ]] || { say "$key on the $doc document failed (exit $rc): $(tail -3 "$TMP/json.err")"; return 1; }
  [[ $(grep -c " codec=$codec " <<<"$out") == 2 ]] || { say "$key did not measure $codec: $out"; return 1; }
  line=$(grep '^decode ' <<<"$out")
  [[ -n $line ]] || { say "$key printed no decode line: $out"; return 1; }
  calc '%.6f\n' "$(field bytes "$line") * $(field reps "$line") / $(field cpu "$line") / 1e6" >>"$TMP/rate.${key}_$doc.dec"
  line=$(grep '^encode ' <<<"$out")
  [[ -n $line ]] || { say "$key printed no encode line: $out"; return 1; }
  calc '%.6f\n' "$(field bytes "$line") * $(field reps "$line") / $(field cpu "$line") / 1e6" >>"$TMP/rate.${key}_$doc.enc"
  F_OUT[${key}_$doc]=$(field out "$line")
}
# json_figures KEY DOC: the medians of its rounds, and one call's milliseconds at those rates.
json_figures() {
  local r=${1}_$2 dec enc
  [[ -z ${F_FAILED[$r]:-} && -s $TMP/rate.$r.dec && -s $TMP/rate.$r.enc ]] || return 0
  dec=$(median <"$TMP/rate.$r.dec") enc=$(median <"$TMP/rate.$r.enc")
  F_DEC[$r]=$(calc '%.1f' "$dec") F_ENC[$r]=$(calc '%.1f' "$enc")
  F_DEC_MS[$r]=$(calc '%.3f' "${F_BYTES[$2]} / ($dec * 1e6) * 1000")
  F_ENC_MS[$r]=$(calc '%.3f' "${F_BYTES[$2]} / ($enc * 1e6) * 1000")
  F_ROWS+=("$r")
}
F_LABEL[lunet]="lunet json.decode / json.encode"
F_LABEL[cjson]="lua5.4 + lua-cjson (generational GC)"
F_LABEL[cjsoninc]="lua5.4 + lua-cjson, incremental GC"
# Alternating rounds: every process once a round, so that drift in the machine's other work
# falls on lunet and lua-cjson alike.
F_KEYS=(lunet)
[[ $HAVE_CJSON == 1 ]] && F_KEYS+=(cjson cjsoninc)
if [[ $F_OK == 1 ]]; then
  for ((round = 1; round <= JSON_REPEAT; round++)); do
    for d in small large; do
      for k in "${F_KEYS[@]}"; do
        [[ -z ${F_FAILED[${k}_$d]:-} ]] || continue
        case $k in
        lunet) json_run lunet $d default lunet "$LUNET" ;;
        cjson) json_run cjson $d default cjson lua5.4 ;;
        cjsoninc) json_run cjsoninc $d incremental cjson lua5.4 ;;
        esac || F_FAILED[${k}_$d]=1
      done
    done
  done
  for d in small large; do
    for k in "${F_KEYS[@]}"; do json_figures $k $d; done
  done
fi
# Goals: lunet at least JSON_GOAL times lua-cjson's speed both ways, on each document. The peer of
# record is the faster of the two lua-cjson rows (lua5.4's own generational GC, or lunet's incremental).
declare -A F_R F_T F_RGEN
for d in small large; do
  for op in dec enc; do
    k=${op}_$d
    F_R[$k]='' F_RGEN[$k]='' F_T[$k]=FAIL
    if [[ $op == dec ]]; then
      l=${F_DEC[lunet_$d]:-} g=${F_DEC[cjson_$d]:-} i=${F_DEC[cjsoninc_$d]:-}
    else
      l=${F_ENC[lunet_$d]:-} g=${F_ENC[cjson_$d]:-} i=${F_ENC[cjsoninc_$d]:-}
    fi
    [[ -n $l && -n $g ]] || continue
    best=$g
    [[ -n $i && $(passfail "$i > $g") == PASS ]] && best=$i
    F_R[$k]=$(calc '%.2f' "$l / $best")
    F_RGEN[$k]=$(calc '%.2f' "$l / $g")
    F_T[$k]=$(passfail "$l >= $JSON_GOAL * $best")
  done
done

doc_name() { case $1 in small) echo "~100 KB" ;; large) echo "~$(calc '%.0f' "$JSON_LARGE / 1e6") MB" ;; esac; }
op_name() { case $1 in dec) echo decode ;; enc) echo encode ;; esac; }
echo "(f) JSON, decode and encode in-process           decode MB/s  encode MB/s  decode ms  encode ms"
echo "    $V_CJSON"
for d in small large; do
  [[ -n ${F_BYTES[$d]:-} ]] && printf '    %s\n' "$(doc_name $d) document: ${F_BYTES[$d]} bytes, ${F_RECORDS[$d]} records"
  for k in lunet cjson cjsoninc; do
    r=${k}_$d
    [[ -n ${F_DEC[$r]:-} ]] || continue
    printf '      %-44s %11s %12s %10s %10s\n' "${F_LABEL[$k]}" "${F_DEC[$r]}" "${F_ENC[$r]}" "${F_DEC_MS[$r]}" "${F_ENC_MS[$r]}"
  done
done
for d in small large; do
  for op in dec enc; do
    k=${op}_$d
    goal "lunet/lua-cjson $(op_name $op) $(doc_name $d)" "${F_R[$k]:+${F_R[$k]}x}" ">= ${JSON_GOAL}x" "${F_T[$k]}"
  done
done
echo "    MB/s = 10^6 bytes of the source document per CPU second (os.clock() around whole calls, at"
echo "    least ${JSON_SECONDS} s each; encode rates count the source document's bytes too, so both codecs"
echo "    are credited for the same work); ms = one call; the median of $JSON_REPEAT round(s) that run"
echo "    each process in turn. The goal compares with the faster lua-cjson row."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (f) JSON: lunet beside lua-cjson"
  echo "| Document | Codec | Decode MB/s | Encode MB/s | Decode ms | Encode ms | Encoded bytes |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for d in small large; do
    for k in lunet cjson cjsoninc; do
      r=${k}_$d
      [[ -n ${F_DEC[$r]:-} ]] || continue
      echo "| $(doc_name $d) (${F_BYTES[$d]} bytes) | ${F_LABEL[$k]} | ${F_DEC[$r]} | ${F_ENC[$r]} | ${F_DEC_MS[$r]} | ${F_ENC_MS[$r]} | ${F_OUT[$r]} |"
    done
  done
  echo
  echo -n "lunet beside lua5.4's default (generational) GC alone:"
  for d in small large; do
    for op in dec enc; do
      k=${op}_$d
      echo -n " $(op_name $op) $(doc_name $d) $(or_dash "${F_RGEN[$k]}")×;"
    done
  done | sed 's/;$/./'
  echo
  echo
  echo "- $V_CJSON. The documents come from \`Benchmarks/more_json_gen.lua\` (the same bytes every run):"
  echo "  an object holding an array of records that mix nested objects and arrays, strings with"
  echo "  escapes (\`\\\"\`, \`\\\\\`, \`\\/\`, \`\\n\`, \`\\t\`, \`\\u00e9\`, a surrogate pair) and raw UTF-8, small and"
  echo "  64-bit integers, floats with and without exponents, booleans and \`null\`; ${F_RECORDS[small]:-?} and ${F_RECORDS[large]:-?} records."
  echo "- \`Benchmarks/more_json.lua\` decodes the document again and again for at least"
  echo "  ${JSON_SECONDS} s of CPU (\`os.clock()\` around whole calls), then encodes the decoded tables the"
  echo "  same way; in lunet with \`json.decode\`/\`json.encode\`, in lua5.4 with \`cjson.decode\`/\`cjson.encode\`"
  echo "  (lua-cjson cannot be loaded into lunet, which has its own Lua). MB/s are 10^6 bytes of the"
  echo "  source document per CPU second, for encoding too, so both codecs are credited for the same"
  echo "  work; \"Encoded bytes\" is what one encode wrote (lua-cjson writes 14 significant digits and"
  echo "  escapes \`/\`; lunet writes the shortest round-tripping form)."
  echo "- lua5.4 runs Lua's generational GC (lua.c switches to it), lunet the incremental one, hence a"
  echo "  second lua-cjson row; the goal compares with the faster of the two."
  echo "- $JSON_REPEAT round(s), each running every process once in turn (lunet, lua-cjson, lua-cjson"
  echo "  incremental, on each document); the median figure is shown. The goal (issue 21): at least"
  echo "  ${JSON_GOAL}× the faster lua-cjson row, each way, on each document."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
