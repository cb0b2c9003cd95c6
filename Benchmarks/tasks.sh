#!/usr/bin/env bash
# bench (e): 1,000,000 tasks beside 1,000,000 coroutines, in lunet and in lua5.4
# tasks.lua: task.source, one :next continuation, :resolve (the loop drains them), beside
# coroutines created and resumed in the same lunet process and in lua5.4 (both GC modes). Rounds
# of every process in turn; each one's run with the median CPU is shown. Goal: at least 500,000
# tasks per second.
#   BENCH_TASKS=N   tasks and coroutines (default 1000000; 100000 with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init tasks

TASKS_N=${BENCH_TASKS:-1000000}
TASKS_BATCH=1000 # tasks settled between two drains of the loop
TASK_REPEAT=3    # rounds of every process; each one's median CPU is reported
[[ $QUICK == 1 ]] && TASKS_N=${BENCH_TASKS:-100000} TASK_REPEAT=1

say "(e) $TASKS_N tasks and coroutines"
E_ROWS=()
declare -A E_RATE E_US E_RAN E_LABEL
# tasks_once PREFIX PICK CMD...: one run of tasks.lua, added to PREFIX's runs with the CPU of its
# PICK line. A command that fails once is not run again.
declare -A E_RUNS E_FAILED
tasks_once() {
  local prefix=$1 pick=$2 out rc cpu
  shift 2
  [[ -z ${E_FAILED[$prefix]:-} ]] || return
  out=$(timeout $LIMIT "$@" 2>"$TMP/tasks.err" </dev/null)
  rc=$?
  [[ $rc == 0 ]] || { say "$* failed (exit $rc): $(tail -3 "$TMP/tasks.err")"; E_FAILED[$prefix]=1; return; }
  cpu=$(awk -v p="$pick" '$1 == p { sub(/cpu=/, "", $4); print $4 }' <<<"$out")
  [[ -n $cpu ]] || { say "$* printed no '$pick' line: $out"; E_FAILED[$prefix]=1; return; }
  E_RUNS[$prefix]+="$cpu $(tr '\n' '|' <<<"$out")"$'\n'
}
# tasks_pick PREFIX: PREFIX's run with the median CPU gives the rows PREFIX_<name>, one a line.
tasks_pick() {
  local prefix=$1 best name n ran cpu
  [[ -n ${E_RUNS[$prefix]:-} ]] || return
  best=$(printf '%s' "${E_RUNS[$prefix]}" | sort -g -k1 | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }' | cut -d' ' -f2- | tr '|' '\n')
  while read -r name n ran cpu _; do
    [[ -n $name ]] || continue
    n=${n#n=} ran=${ran#ran=} cpu=${cpu#cpu=}
    E_RATE[${prefix}_$name]=$(calc '%.0f' "$n / $cpu")
    E_US[${prefix}_$name]=$(calc '%.3f' "$cpu / $n * 1e6")
    E_RAN[${prefix}_$name]=$ran
  done <<<"$best"
}
for ((round = 0; round < TASK_REPEAT; round++)); do
  tasks_once lunet tasks "$LUNET" "$HERE/tasks.lua" "$TASKS_N" "$TASKS_BATCH"
  tasks_once lua coroutines lua5.4 "$HERE/tasks.lua" "$TASKS_N" "$TASKS_BATCH"
  tasks_once luainc coroutines lua5.4 "$HERE/tasks.lua" "$TASKS_N" "$TASKS_BATCH" incremental
done
tasks_pick lunet
tasks_pick lua
tasks_pick luainc
E_LABEL[lunet_tasks]="lunet: task.source(); src.task:next(fn); src:resolve(i), drained every $TASKS_BATCH"
E_LABEL[lunet_coroutines]="lunet, same process: coroutine.resume(coroutine.create(f), i) (the prelude's resume)"
E_LABEL[lunet_coroutines_raw]="lunet, same process: the same with the raw resume (lunet.runtime.raw_resume)"
E_LABEL[lua_coroutines]="lua5.4: coroutine.resume(coroutine.create(f), i) (generational GC, lua.c's default)"
E_LABEL[luainc_coroutines]="lua5.4: the same after collectgarbage(\"incremental\") (lunet's GC mode)"
for k in lunet_tasks lunet_coroutines lunet_coroutines_raw lua_coroutines luainc_coroutines; do
  [[ -n ${E_RATE[$k]:-} ]] && E_ROWS+=("$k")
done
E_R_COR='' E_R_RAW='' E_T1=FAIL E_RATE_OK=''
if [[ -n ${E_RATE[lunet_tasks]:-} ]]; then
  [[ -n ${E_RATE[lunet_coroutines]:-} ]] && E_R_COR=$(calc '%.2f' "${E_RATE[lunet_tasks]} / ${E_RATE[lunet_coroutines]}")
  [[ -n ${E_RATE[lunet_coroutines_raw]:-} ]] && E_R_RAW=$(calc '%.2f' "${E_RATE[lunet_tasks]} / ${E_RATE[lunet_coroutines_raw]}")
  E_RATE_OK="${E_RATE[lunet_tasks]}/s"
  if [[ ${E_RAN[lunet_tasks]} == "$TASKS_N" ]]; then
    E_T1=$(passfail "${E_RATE[lunet_tasks]} >= 500000")
  else
    say "only ${E_RAN[lunet_tasks]} of $TASKS_N continuations ran"
  fi
fi

echo "(e) $TASKS_N tasks / coroutines                               per second     us each          ran"
for k in "${E_ROWS[@]}"; do
  case $k in
  lunet_tasks) l="lunet: source + :next + :resolve, drained" ;;
  lunet_coroutines) l="lunet: create + resume (prelude's resume)" ;;
  lunet_coroutines_raw) l="lunet: create + resume (raw resume)" ;;
  lua_coroutines) l="lua5.4: create + resume (generational GC)" ;;
  luainc_coroutines) l="lua5.4: create + resume (incremental GC)" ;;
  esac
  printf '    %-44s %14s %11s %12s\n' "$l" "${E_RATE[$k]}" "${E_US[$k]}" "${E_RAN[$k]}"
done
printf '    %-56s %s\n' "lunet tasks/coroutines = $(or_dash "$E_R_COR")x" "(same process; raw resume: $(or_dash "$E_R_RAW")x)"
goal "lunet tasks per second (one continuation each)" "$E_RATE_OK" ">= 500000/s" "$E_T1"
echo "    rates from os.clock() around each loop (CPU-bound: CPU time = wall time); a task counts"
echo "    only once its continuation ran (ran = continuations or coroutine bodies run); $TASK_REPEAT"
echo "    round(s) of every process in turn, each one's run with the median CPU is shown."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (e) $TASKS_N tasks beside $TASKS_N coroutines"
  echo "| Measure | Per second | µs each | Ran |"
  echo "|---|---:|---:|---:|"
  for k in "${E_ROWS[@]}"; do
    echo "| ${E_LABEL[$k]} | ${E_RATE[$k]} | ${E_US[$k]} | ${E_RAN[$k]} |"
  done
  echo
  echo "lunet tasks/coroutines in the same process: $(or_dash "$E_R_COR")× (with the raw resume: $(or_dash "$E_R_RAW")×)."
  echo
  echo "- \`Benchmarks/tasks.lua\`. Rates come from \`os.clock()\` around each loop (the"
  echo "  work is CPU-bound). Tasks are settled in batches of $TASKS_BATCH; after each batch the script"
  echo "  awaits the batch's last continuation task, so the loop drains the queue; the script counts"
  echo "  the continuations that ran. The coroutine rows create a coroutine and resume it once to"
  echo "  its end. lunet's scripts see the prelude's \`coroutine.resume\` (it passes host awaits up"
  echo "  through user coroutines); the raw row uses Lua's own. The stand-alone lua5.4 interpreter"
  echo "  switches Lua to generational GC at start-up, lunet leaves it incremental, hence two lua5.4"
  echo "  rows. The processes ran in $TASK_REPEAT round(s), each once a round; each one's run with the"
  echo "  median CPU is shown."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
