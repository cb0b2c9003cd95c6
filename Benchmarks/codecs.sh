#!/usr/bin/env bash
# bench (j): XML and protobuf decode and encode in-process, lunet beside a baseline lunet (2b1fb1c)
# Issue 21 moved the codecs into a module of their own and split them; its goal is that XML and
# protobuf stay within 5% of their speed before (commit 2b1fb1c, the last one before the move).
# So this measures the lunet under test beside a BASELINE lunet built from that commit, in the
# same run: an XML catalog and a protobuf Catalog message of about CODECS_SIZE bytes each
# (more_codecs_gen.lua, more_codecs.proto), each decoded into Lua tables and encoded back again
# and again for at least CODECS_SECONDS of CPU (more_codecs.lua, os.clock() around whole calls):
#   xml             xml.decode / xml.encode
#   protobuf        protobuf.decode / protobuf.encode, no schema, default options
#   protobuf_guess  the same with { guess = true } (every nested message opened)
#   schema          schema:decode / schema:encode with the descriptor set protoc makes
# in CODECS_ROUNDS rounds that alternate the two binaries; each figure is the median of its
# rounds. Goals: lunet at least 0.95x the baseline's rate, each codec both ways. Python's
# xml.etree (C accelerated) is shown beside XML when python3 is there (no goal); no protobuf
# peer is installed here (python3-protobuf is not), so protobuf has none.
#
# The baseline: BENCH_BASELINE=path names a lunet binary; otherwise it is built once (a few
# minutes) from `git archive 2b1fb1c` into .build/bench-baseline/2b1fb1c/ with the release
# flags of scripts/build-release, and reused from there. CODECS_BASELINE_REV picks another commit.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init codecs

CODECS_SIZE=${CODECS_SIZE:-1000000}     # bytes of each document (about)
CODECS_SECONDS=${CODECS_SECONDS:-0.5}   # least CPU time per measure
CODECS_ROUNDS=${CODECS_ROUNDS:-5}       # rounds alternating lunet and the baseline
CODECS_BASELINE_REV=${CODECS_BASELINE_REV:-2b1fb1c}
[[ $QUICK == 1 ]] && CODECS_SIZE=300000 CODECS_SECONDS=0.2 CODECS_ROUNDS=1
CODECS=(xml protobuf protobuf_guess schema)

# --- the baseline lunet --------------------------------------------------------------------------
# baseline_binary: sets BASELINE (a lunet executable) or returns 1.
baseline_binary() {
  if [[ -n ${BENCH_BASELINE:-} ]]; then
    BASELINE=$(cd "$ROOT" && realpath -- "$BENCH_BASELINE" 2>/dev/null)
    [[ -n $BASELINE && -x $BASELINE ]] || { say "BENCH_BASELINE=$BENCH_BASELINE is not an executable"; return 1; }
    return 0
  fi
  local dir="$ROOT/.build/bench-baseline/$CODECS_BASELINE_REV"
  BASELINE="$dir/src/.build/release/lunet"
  [[ -x $BASELINE && -e $dir/.built ]] && return 0
  say "building the baseline lunet from $CODECS_BASELINE_REV into $dir (once; a few minutes)"
  rm -rf "$dir/src" "$dir/.built"
  mkdir -p "$dir/src"
  # The commit's files only (no worktree, no checkout): the build caches under $dir/src/.build.
  (cd "$ROOT" && git archive "$CODECS_BASELINE_REV") | tar -x -C "$dir/src" || {
    say "cannot take commit $CODECS_BASELINE_REV out of git"
    return 1
  }
  # The flags of scripts/build-release (the static-libstdc++ linker script of this checkout:
  # older commits lack it, and start-up is not measured here).
  (cd "$dir/src" && timeout 3600 swift build -c release --static-swift-stdlib \
    -Xswiftc -L -Xswiftc "$ROOT/scripts/link" --product lunet) </dev/null >"$dir/build.log" 2>&1 || {
    say "the baseline build failed: $(tail -5 "$dir/build.log")"
    return 1
  }
  touch "$dir/.built"
}

# --- the documents -----------------------------------------------------------------------------------
say "(j) XML and protobuf, lunet beside the $CODECS_BASELINE_REV baseline"
HAVE_PROTOC=0
have protoc && HAVE_PROTOC=1
if [[ $HAVE_PROTOC == 1 ]]; then
  timeout $LIMIT protoc --descriptor_set_out="$TMP/codecs.pb" -I "$HERE" more_codecs.proto 2>"$TMP/protoc.err" ||
    { say "protoc failed: $(tail -3 "$TMP/protoc.err")"; HAVE_PROTOC=0; }
fi
if [[ $HAVE_PROTOC == 0 ]]; then
  # The generator writes the protobuf document with schema:encode: it needs the descriptor set.
  say "protoc missing (scripts/deps bench installs protobuf-compiler): XML only"
  CODECS=(xml)
  printf '' >"$TMP/codecs.pb"
fi
line=$(cd "$TMP" && timeout $LIMIT "$LUNET" "$HERE/more_codecs_gen.lua" "$CODECS_SIZE" "$TMP" "$TMP/codecs.pb" 2>"$TMP/gen.err")
[[ $line == xml_bytes=* ]] || { say "cannot generate the documents: $line $(tail -3 "$TMP/gen.err")"; exit 1; }
declare -A J_FILE J_BYTES J_ITEMS
J_FILE[xml]="$TMP/doc.xml" J_BYTES[xml]=$(field xml_bytes "$line") J_ITEMS[xml]=$(field xml_items "$line")
for c in protobuf protobuf_guess schema; do
  J_FILE[$c]="$TMP/doc.pb" J_BYTES[$c]=$(field pb_bytes "$line") J_ITEMS[$c]=$(field pb_items "$line")
done

BASELINE=
baseline_binary || BASELINE=
V_BASELINE="baseline missing"
[[ -n $BASELINE ]] && V_BASELINE="$(first_line "$BASELINE" --version | awk '{ print $1, $2 }') built from $CODECS_BASELINE_REV"
V_ETREE="python3 missing"
have python3 && V_ETREE="Python $(python3 -c 'import sys; print(sys.version.split()[0])' 2>/dev/null) xml.etree.ElementTree"

# --- measuring, in alternating rounds ------------------------------------------------------------
# codec_run KEY CODEC CMD...: runs `CMD... more_codecs.lua CODEC FILE SECONDS DESCRIPTORS` once and
# appends its decode and encode MB/s to $TMP/rate.KEY.CODEC.{decode,encode}.
codec_run() {
  local key=$1 codec=$2 out line op
  shift 2
  out=$(timeout $LIMIT "$@" "$codec" "${J_FILE[$codec]}" "$CODECS_SECONDS" "$TMP/codecs.pb" 2>"$TMP/run.err" </dev/null) ||
    { say "$key $codec failed: $(tail -3 "$TMP/run.err")"; return 1; }
  for op in decode encode; do
    line=$(grep "^$op " <<<"$out")
    [[ -n $line ]] || { say "$key $codec printed no $op line: $out"; return 1; }
    calc '%.6f\n' "$(field bytes "$line") * $(field reps "$line") / $(field cpu "$line") / 1e6" >>"$TMP/rate.$key.$codec.$op"
    echo "$(field out "$line")" >"$TMP/out.$key.$codec"
  done
}
declare -A J_FAILED
for ((round = 1; round <= CODECS_ROUNDS; round++)); do
  say "round $round of $CODECS_ROUNDS"
  for c in "${CODECS[@]}"; do
    for key in lunet baseline; do
      [[ -z ${J_FAILED[$key.$c]:-} ]] || continue
      bin=$LUNET
      [[ $key == baseline ]] && bin=$BASELINE
      [[ -n $bin ]] || continue
      codec_run "$key" "$c" "$bin" "$HERE/more_codecs.lua" || J_FAILED[$key.$c]=1
    done
    if [[ $c == xml ]] && have python3 && [[ -z ${J_FAILED[etree.xml]:-} ]]; then
      codec_run etree xml python3 "$HERE/more_codecs_peer.py" || J_FAILED[etree.xml]=1
    fi
  done
done
declare -A J_RATE J_MS
for key in lunet baseline etree; do
  for c in "${CODECS[@]}"; do
    for op in decode encode; do
      f="$TMP/rate.$key.$c.$op"
      [[ -z ${J_FAILED[$key.$c]:-} && -s $f ]] || continue
      J_RATE[$key.$c.$op]=$(calc '%.1f' "$(median <"$f")")
      J_MS[$key.$c.$op]=$(calc '%.3f' "${J_BYTES[$c]} / (${J_RATE[$key.$c.$op]} * 1e6) * 1000")
    done
  done
done

# --- rows and goals --------------------------------------------------------------------------------
codec_name() {
  case $1 in
  xml) echo "XML" ;;
  protobuf) echo "protobuf, no schema" ;;
  protobuf_guess) echo "protobuf, no schema, guess" ;;
  schema) echo "protobuf, schema" ;;
  esac
}
declare -A J_LABEL=([lunet]="lunet (this build)" [baseline]="lunet $CODECS_BASELINE_REV (baseline)" [etree]="python3 xml.etree")
echo "(j) XML and protobuf, decode and encode in-process   decode MB/s  encode MB/s  decode ms  encode ms"
echo "    baseline: $V_BASELINE; peer: $V_ETREE"
for c in "${CODECS[@]}"; do
  printf '    %s: %s bytes, %s items\n' "$(codec_name "$c")" "${J_BYTES[$c]}" "${J_ITEMS[$c]}"
  for key in lunet baseline etree; do
    [[ -n ${J_RATE[$key.$c.decode]:-} ]] || continue
    printf '      %-44s %11s %12s %10s %10s\n' "${J_LABEL[$key]}" "${J_RATE[$key.$c.decode]}" \
      "${J_RATE[$key.$c.encode]}" "${J_MS[$key.$c.decode]}" "${J_MS[$key.$c.encode]}"
  done
done
declare -A J_RATIO
for c in "${CODECS[@]}"; do
  for op in decode encode; do
    l=${J_RATE[lunet.$c.$op]:-} b=${J_RATE[baseline.$c.$op]:-}
    J_RATIO[$c.$op]=
    [[ -n $l && -n $b ]] && J_RATIO[$c.$op]=$(calc '%.2f' "$l / $b")
    ratio_goal "lunet/baseline $(codec_name "$c") $op" "$l" "$b" ">=" 0.95
  done
done
echo "    MB/s = 10^6 bytes of the source document per CPU second (os.clock() around whole calls, at"
echo "    least ${CODECS_SECONDS} s each; encode rates count the source document's bytes too); ms = one call;"
echo "    the median of $CODECS_ROUNDS round(s) alternating the binaries. The goal: within 5% of the baseline."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (j) XML and protobuf: lunet beside its $CODECS_BASELINE_REV baseline"
  echo "| Document | Codec | Decode MB/s | Encode MB/s | Decode ms | Encode ms | lunet/baseline decode | lunet/baseline encode |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  for c in "${CODECS[@]}"; do
    for key in lunet baseline etree; do
      [[ -n ${J_RATE[$key.$c.decode]:-} ]] || continue
      rd='' re=''
      [[ $key == lunet ]] && rd="$(or_dash "${J_RATIO[$c.decode]}")×" re="$(or_dash "${J_RATIO[$c.encode]}")×"
      echo "| $(codec_name "$c") (${J_BYTES[$c]} bytes, ${J_ITEMS[$c]} items) | ${J_LABEL[$key]} | ${J_RATE[$key.$c.decode]} | ${J_RATE[$key.$c.encode]} | ${J_MS[$key.$c.decode]} | ${J_MS[$key.$c.encode]} | $rd | $re |"
    done
  done
  echo
  echo "- Baseline: $V_BASELINE (the last commit before the codecs moved out of LunetLua), built with the"
  echo "  same release flags. Peer: $V_ETREE (XML only; no protobuf peer is installed here)."
  echo "- The documents come from \`Benchmarks/more_codecs_gen.lua\`: an XML catalog (a default and a"
  echo "  prefixed namespace, attributes, entity and character references, CDATA, UTF-8, indentation) and a"
  echo "  \`lunet.bench.Catalog\` message of \`Benchmarks/more_codecs.proto\` (varints, zigzag, fixed64,"
  echo "  doubles, floats, enums, strings, bytes, nested and repeated messages, packed numbers, a map)."
  echo "- \`Benchmarks/more_codecs.lua\` decodes the document again and again for at least"
  echo "  ${CODECS_SECONDS} s of CPU, then encodes the decoded tables the same way; \"no schema\" is"
  echo "  \`protobuf.decode\` with default options (nested messages stay strings), \"guess\" opens every"
  echo "  nested message, \"schema\" is \`schema:decode\`/\`schema:encode\`. MB/s are 10^6 bytes of the source"
  echo "  document per CPU second, for encoding too."
  echo "- $CODECS_ROUNDS round(s), each running every codec in both binaries in turn (and the peer); the median."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
