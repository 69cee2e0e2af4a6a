#!/usr/bin/env bash
# Runs every libFuzzer target in DIR for SECONDS each, starting from the seed corpus
# fuzz/corpus/NAME/ (checked in) copied to a scratch directory. Any crash, leak,
# timeout or sanitizer report fails the run.
set -euo pipefail
dir=${1:?usage: fuzz.sh BUILD_FUZZ_DIR SECONDS}
secs=${2:-15}
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
targets=("$dir"/*_fuzz)
if [ ${#targets[@]} -eq 0 ]; then echo "fuzz: no targets in $dir" >&2; exit 1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in "${targets[@]}"; do
  name=$(basename "$t")
  mkdir -p "$work/$name"
  if [ -d "$root/fuzz/corpus/$name" ]; then cp -r "$root/fuzz/corpus/$name/." "$work/$name/"; fi
  echo "fuzz: $name for ${secs}s"
  if ! "$t" "$work/$name" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$work/" >"$work/$name.log" 2>&1; then
    tail -n 60 "$work/$name.log" >&2
    echo "fuzz: $name FAILED" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units" "$work/$name.log" | sed "s/^/fuzz: $name /"
done
echo "fuzz: ${#targets[@]} targets clean"
