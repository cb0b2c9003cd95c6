#!/usr/bin/env bash
# bench (h): a 1 GiB download to a file, `lunet -e 'http.download(URL, PATH)'` beside curl
# needs: nginx
# A file of random bytes in nginx's root (/dl/: sendfile on), downloaded to a file under /tmp:
# lunet beside `curl -s -o PATH URL`, and lunet's durable download (`durable = true`: the file
# synced before it is renamed into place, the directory after) beside curl followed by
# `sync PATH`, its peer in what it guarantees; DL_RUNS runs each, alternating; median wall time
# -> MB/s; peak RSS (GNU time). Goals: lunet at least 90% of curl's throughput, the durable
# download at least 90% of curl's with sync (issue 35), lunet's peak RSS under 64 MB.
#   BENCH_DOWNLOAD_BYTES=N   the size of the download (default 1073741824, 1 GiB; 100 MiB with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init download
bench_nginx

DL_BYTES=${BENCH_DOWNLOAD_BYTES:-1073741824}
DL_RUNS=3     # runs of each command, alternating
DL_LIMIT=600  # seconds: the downloads and making the big file run under `timeout $DL_LIMIT`
[[ $QUICK == 1 ]] && DL_BYTES=${BENCH_DOWNLOAD_BYTES:-104857600} DL_RUNS=1
M_DISK=$(timeout $LIMIT df -hP /tmp | awk 'NR == 2 { print $1 " (" $6 ")" }')

DL_URL="$BASE/dl/big.bin"
DL_SRC="$WWW/big.bin"
mkdir -p "$TMP/dl"
DL_DEST="$TMP/dl/big.bin" # under /tmp (lib.sh's default; the driver's BENCH_TMP is there too)
DL_MIB=$(calc '%.0f' "$DL_BYTES / 1048576")
say "(h) download of $DL_MIB MiB, $DL_RUNS runs each"
H_ROWS=()
H_ERR=
declare -A H_WALL H_MBS H_CPU H_RSS H_RSS_MAX H_LABEL H_ALL H_BAD
H_LABEL[lunet]="lunet -e 'http.download(URL, PATH)'"
H_LABEL[curl]="curl -s -o PATH URL"
H_LABEL[durable]="lunet -e 'http.download(URL, PATH, { durable = true })'"
H_LABEL[curlsync]="curl -s -o PATH URL; sync PATH"
avail=$(timeout $LIMIT df -B1 --output=avail /tmp 2>/dev/null | tail -1 | tr -d ' ')
if [[ -z $WWW ]]; then
  H_ERR="the driver's nginx did not say where its files are (BENCH_WWW)"
elif [[ -n $avail && $avail -lt $((DL_BYTES * 2 + 1073741824)) ]]; then
  H_ERR="not enough room in /tmp ($((avail >> 20)) MiB free; the file and one copy need $((DL_BYTES * 2 >> 20)) MiB and 1 GiB spare)"
elif ! timeout $DL_LIMIT head -c "$DL_BYTES" /dev/urandom >"$DL_SRC" 2>"$TMP/head.err" ||
  [[ $(stat -c %s "$DL_SRC") != "$DL_BYTES" ]]; then
  H_ERR="cannot make the $DL_MIB MiB file: $(tail -1 "$TMP/head.err")"
fi
chmod 644 "$DL_SRC" 2>/dev/null
# dl_once KEY CMD...: one download to DL_DEST; appends "wall user+sys rss" to H_ALL[KEY].
dl_once() {
  local key=$1 t0 t1 rc size
  shift
  rm -f "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta "$TMP/dl.time"
  timeout $DL_LIMIT sync # no earlier run's dirty pages written back during this one
  t0=$(date +%s%N)
  if [[ $HAVE_TIME == 1 ]]; then
    timeout $DL_LIMIT "$GNU_TIME" -f '%U %S %M' -o "$TMP/dl.time" "$@" >"$TMP/dl.out" 2>"$TMP/dl.err" </dev/null
  else
    timeout $DL_LIMIT "$@" >"$TMP/dl.out" 2>"$TMP/dl.err" </dev/null
  fi
  rc=$?
  t1=$(date +%s%N)
  size=$(stat -c %s "$DL_DEST" 2>/dev/null || echo 0)
  if [[ $rc != 0 || $size != "$DL_BYTES" ]]; then
    say "$key failed (exit $rc, $size bytes): $(grep -v '^Command exited' "$TMP/dl.err" | tail -3 | tr '\n' ' ')"
    H_BAD[$key]=1
  elif [[ -z ${H_ALL[$key]:-} ]] && ! timeout $DL_LIMIT cmp -s "$DL_SRC" "$DL_DEST"; then
    # the first run of each command: the bytes, not just the length
    say "$key wrote other bytes than the server's file"
    H_BAD[$key]=1
  else
    local user=- sys=- rss=- cpu=-
    [[ -s $TMP/dl.time ]] && read -r user sys rss < <(tail -1 "$TMP/dl.time")
    [[ $user != - ]] && cpu=$(calc '%.2f' "$user + $sys")
    H_ALL[$key]+="$(calc '%.3f' "($t1 - $t0) / 1e9") $cpu $rss"$'\n'
  fi
  rm -f "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta
}
if [[ -z $H_ERR ]]; then
  # One untimed fetch first: the file is in the page cache and nginx is warm for every run.
  timeout $DL_LIMIT curl -s -o /dev/null "$DL_URL"
  for ((r = 0; r < DL_RUNS; r++)); do
    dl_once lunet "$LUNET" -e "http.download('$DL_URL', '$DL_DEST')"
    dl_once curl curl -s -o "$DL_DEST" "$DL_URL"
    dl_once durable "$LUNET" -e "http.download('$DL_URL', '$DL_DEST', { durable = true })"
    dl_once curlsync bash -c 'curl -s -o "$1" "$2" && sync "$1"' _ "$DL_DEST" "$DL_URL"
  done
  for k in lunet curl durable curlsync; do
    [[ -n ${H_ALL[$k]:-} && -z ${H_BAD[$k]:-} ]] || continue
    read -r H_WALL[$k] H_CPU[$k] H_RSS[$k] < <(printf '%s' "${H_ALL[$k]}" | median)
    H_MBS[$k]=$(calc '%.0f' "$DL_BYTES / ${H_WALL[$k]} / 1e6")
    H_RSS_MAX[$k]=$(printf '%s' "${H_ALL[$k]}" | awk '$3 != "-" { if ($3 > m) m = $3 } END { if (m) print m; else print "-" }')
    H_ROWS+=("$k")
  done
else
  say "skipped: $H_ERR"
fi
rm -f "$DL_SRC" "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta
H_R_CURL='' H_R_SYNC='' H_T1=FAIL H_T2=FAIL H_T3=FAIL H_RSS_OK=''
if [[ -n ${H_MBS[lunet]:-} && -n ${H_MBS[curl]:-} ]]; then
  H_R_CURL=$(calc '%.2f' "${H_WALL[curl]} / ${H_WALL[lunet]}")
  H_T1=$(passfail "${H_WALL[curl]} / ${H_WALL[lunet]} >= 0.9")
fi
if [[ -n ${H_MBS[durable]:-} && -n ${H_MBS[curlsync]:-} ]]; then
  H_R_SYNC=$(calc '%.2f' "${H_WALL[curlsync]} / ${H_WALL[durable]}")
  H_T3=$(passfail "${H_WALL[curlsync]} / ${H_WALL[durable]} >= 0.9")
fi
if [[ -n ${H_RSS_MAX[lunet]:-} && ${H_RSS_MAX[lunet]} != - ]]; then
  H_T2=$(passfail "${H_RSS_MAX[lunet]} < 64 * 1024")
  H_RSS_OK="$(mb "${H_RSS_MAX[lunet]}") MB"
fi

if [[ -n $H_ERR ]]; then
  echo "(h) download: skipped: $H_ERR"
else
  echo "(h) download of $DL_MIB MiB to /tmp, $DL_RUNS runs each      median s     MB/s   CPU s  peak RSS MB (max)"
  for k in "${H_ROWS[@]}"; do
    printf '    %-46s %8s %8s %7s %8s %8s\n' "${H_LABEL[$k]}" "${H_WALL[$k]}" "${H_MBS[$k]}" "${H_CPU[$k]}" "$(mb "${H_RSS[$k]}")" "($(mb "${H_RSS_MAX[$k]}"))"
  done
fi
goal "lunet/curl download throughput" "${H_R_CURL:+${H_R_CURL}x}" ">= 0.9x" "$H_T1"
goal "lunet durable/(curl; sync) download throughput" "${H_R_SYNC:+${H_R_SYNC}x}" ">= 0.9x" "$H_T3"
goal "lunet download peak RSS (highest run)" "$H_RSS_OK" "< 64 MB" "$H_T2"
echo "    wall time of the whole process (date +%s%N), each run after a sync; MB/s = 10^6 bytes per"
echo "    second; CPU = user+sys of the median run; peak RSS: the median run's, (the highest); /tmp on $M_DISK."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (h) Downloading $DL_MIB MiB to a file"
  if [[ -n $H_ERR ]]; then
    echo "Skipped: $H_ERR."
  else
    echo "| Command | Median s | MB/s | CPU s | Peak RSS MB (median run) | Peak RSS MB (highest) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for k in "${H_ROWS[@]}"; do
      case $k in
      lunet) l="\`lunet -e 'http.download(URL, PATH)'\`" ;;
      curl) l='`curl -s -o PATH URL`' ;;
      durable) l="\`lunet -e 'http.download(URL, PATH, { durable = true })'\`" ;;
      curlsync) l='`curl -s -o PATH URL && sync PATH`' ;;
      esac
      echo "| $l | ${H_WALL[$k]} | ${H_MBS[$k]} | ${H_CPU[$k]} | $(mb "${H_RSS[$k]}") | $(mb "${H_RSS_MAX[$k]}") |"
    done
  fi
  echo
  [[ -n $H_R_SYNC ]] && echo "The durable download (its file synced before the rename, the directory after) beside curl followed by \`sync PATH\`: $H_R_SYNC×." && echo
  echo "- $DL_BYTES bytes from \`/dev/urandom\` in nginx's root (random: nothing to gain from"
  echo "  compression, and no \`Accept-Encoding\` is sent; served with \`sendfile on\`), fetched to a file"
  echo "  under /tmp on $M_DISK. The commands ran $DL_RUNS time(s) each, alternating, each after a \`sync\`"
  echo "  and with the file already in the page cache (one untimed fetch first); the first download of"
  echo "  each was compared byte for byte with the source, and every one's length checked. Downloads"
  echo "  are deleted after each run."
  echo "- Wall time of the whole process (\`date +%s%N\`), the median run; MB/s = 10^6 bytes per"
  echo "  second; CPU is the median run's user+sys and peak RSS its maximum resident set (GNU time"
  echo "  \`%M\`); the goal uses the highest peak RSS of the runs."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
