# Sourced by scripts/bench for --write-docs: rewrites the generated parts of docs/benchmarks.md
# and nothing else. A generated part sits between two marker lines,
#   <!-- bench:NAME -->
#   ...
#   <!-- /bench:NAME -->
# (NAME a benchmark, or "machine" or "goals"); every line outside the markers is hand-written and
# kept as it is, so explanations can sit between and after the sections. A part the doc lacks is
# appended at its end, markers and all.

# doc_splice DOC NAME FILE: DOC's NAME part becomes FILE's lines.
doc_splice() {
  local doc=$1 name=$2 file=$3 begin ends
  begin=$(grep -cxF "<!-- bench:$name -->" "$doc")
  ends=$(grep -cxF "<!-- /bench:$name -->" "$doc")
  if [[ $begin != "$ends" || $begin -gt 1 ]]; then
    say "$doc has $begin '<!-- bench:$name -->' and $ends '<!-- /bench:$name -->' lines; its $name part is left alone"
    return 1
  fi
  awk -v name="$name" -v file="$file" '
    BEGIN { b = "<!-- bench:" name " -->"; e = "<!-- /bench:" name " -->" }
    $0 == b { print; while ((getline l < file) > 0) print l; skip = 1; found = 1; next }
    $0 == e { skip = 0 }
    !skip { print }
    END { if (!found) { print ""; print b; while ((getline l < file) > 0) print l; print e } }
  ' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
}

# doc_goal_rows DOC: the rows of DOC's goal table, tab-separated as the benchmarks write them
# (benchmark, figure, goal, measured, result), the doc's symbols turned back into ASCII.
doc_goal_rows() {
  awk '$0 == "<!-- bench:goals -->" { on = 1; next } $0 == "<!-- /bench:goals -->" { on = 0 } on' "$1" |
    grep '^| ' | grep -v '^| Benchmark |' |
    sed -e 's/^| *//' -e 's/ *|$//' -e 's/ *| */\t/g' -e 's/≤/<=/g' -e 's/≥/>=/g' -e 's/×/x/g' -e 's/`//g'
}

# doc_goals DOC RAN NAME...: the goal table, in the order of NAME... (every benchmark): the rows
# of the benchmarks in RAN (a space-separated list) from this run's $TMP/targets.NAME, the others'
# from the doc as it was (a benchmark not measured this time keeps its last figures).
doc_goals() {
  local doc=$1 ran=" $2 " name old
  shift 2
  old=$(doc_goal_rows "$doc")
  echo "| Benchmark | Figure | Goal | Measured | Result |"
  echo "|---|---|---|---|---|"
  for name in "$@"; do
    if [[ $ran == *" $name "* ]]; then
      cat "$TMP/targets.$name" 2>/dev/null
    else
      awk -F'\t' -v n="$name" '$1 == n' <<<"$old"
    fi
  done | awk -F'\t' 'NF >= 5 { printf "| `%s` | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' |
    sed -e 's/<=/≤/g' -e 's/>=/≥/g' -e 's/\([0-9]\)x\b/\1×/g'
}
