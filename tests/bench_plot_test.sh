#!/usr/bin/env bash
# amq bench --plot: gnuplot draws the filter rows (bits/key against lookup ns) into an
# SVG or PNG; without gnuplot on PATH the table still prints, one stderr line says what
# is missing, and the exit status is the table's (0).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
case "$AMQ" in /*) ;; *) AMQ="$PWD/$AMQ" ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"
bench() { "$AMQ" bench --synthetic 20000 --repeats 1 --passes 1 --absent 20000 --min-time 0 --only binary-fuse "$@"; }

# Without gnuplot (PATH has no programs at all): table, warning, status 0, no file.
PATH=/nonexistent bench --plot "$T/none.svg" > "$T/out" 2> "$T/err"
check "no gnuplot: exit status of the table" 0 $?
check "no gnuplot: the table still prints" 1 "$(grep -c '^BinaryFuseFilter 8-bit 3-wise ' "$T/out")"
check "no gnuplot: one stderr line" 1 "$(wc -l < "$T/err")"
check "no gnuplot: it names gnuplot and its package" 1 \
  "$(grep -c '^amq: .*none.svg: not plotted: gnuplot is not on PATH .*gnuplot-nox' "$T/err")"
check "no gnuplot: no file" no "$([ -e "$T/none.svg" ] && echo yes || echo no)"

# A directory that does not exist: refused before the bench runs.
bench --plot "$T/missing/b.svg" > "$T/out" 2> "$T/err"
check "missing directory: exit 2" 2 $?
check "missing directory: one error line" 1 "$(grep -c '^amq: .*missing/b.svg: no such directory' "$T/err")"

# Exact structures (no false-positive rate) are not filters: not plotted, and a family of
# only those leaves nothing to plot, which one stderr line says (exit status still 0).
"$AMQ" bench --synthetic 1000 --repeats 1 --passes 1 --absent 1000 --min-time 0 --only succinct --plot "$T/s.svg" > "$T/out" 2> "$T/err"
check "exact rows only: exit status" 0 $?
check "exact rows only: the table printed" 1 "$([ "$(grep -c '^SuccinctSet' "$T/out")" -ge 1 ] && echo 1 || echo 0)"
check "exact rows only: one line, no filter row" 1 "$(grep -c '^amq: .*s.svg: not plotted: no filter row' "$T/err")"
check "exact rows only: no file" no "$([ -e "$T/s.svg" ] && echo yes || echo no)"

if ! command -v gnuplot > /dev/null; then
  echo "SKIP: gnuplot is not installed (scripts/setup.sh installs gnuplot-nox); the plotting checks did not run"
  finish
  exit
fi

bench --plot "$T/b.svg" > "$T/out" 2> "$T/err"
check "svg: exit status" 0 $?
check "svg: nothing on stderr" "" "$(cat "$T/err")"
check "svg: the file is SVG" 1 "$(head -1 "$T/b.svg" | grep -cE '^(<\?xml|<svg)')"
check "svg: it is closed" 1 "$(grep -c '</svg>' "$T/b.svg")"
# Every row of this family is a filter, and each is a labelled point.
rows=$(awk '/^structure /{t=1; next} t && NF > 5' "$T/out" | sed -E 's/ {2,}.*//' | sort -u)
check "svg: the table has filter rows" 1 "$([ "$(wc -l <<< "$rows")" -ge 3 ] && echo 1 || echo 0)"
while IFS= read -r name; do
  check "svg: labels '$name'" 1 "$(grep -cF ">$name<" "$T/b.svg" | awk '{print ($1 > 0)}')"
done <<< "$rows"
check "svg: bound line for eps 1/256" 1 "$(grep -cF 'eps 1/256: 8.00 bits' "$T/b.svg" | awk '{print ($1 > 0)}')"
check "svg: bound line for eps 1/65536" 1 "$(grep -cF 'eps 1/65536: 16.00 bits' "$T/b.svg" | awk '{print ($1 > 0)}')"
check "svg: temporary files removed" 0 "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'amq-plot-*' -newer "$T/out" | wc -l)"

bench --plot "$T/b.png" > /dev/null 2> "$T/err"
check "png: exit status" 0 $?
check "png: PNG signature" "89504e47" "$(head -c 4 "$T/b.png" | od -An -tx1 | tr -d ' \n')"

# gnuplot failing (its output is a directory) is an error: exit 2, one line, after the table.
mkdir "$T/dir.svg"
bench --plot "$T/dir.svg" > "$T/out" 2> "$T/err"
check "gnuplot fails: exit 2" 2 $?
check "gnuplot fails: the table printed" 1 "$(grep -c '^BinaryFuseFilter 16-bit ' "$T/out")"
check "gnuplot fails: one line" 1 "$(wc -l < "$T/err")"
check "gnuplot fails: the line names the file" 1 "$(grep -c '^amq: .*dir.svg: gnuplot failed' "$T/err")"

finish
