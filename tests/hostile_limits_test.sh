#!/usr/bin/env bash
# Hostile-input regressions for the CLI's bounds and numbers (issue 28, items 9, 15,
# 17 and 21): sizes refused before they are allocated, every numeric option read by
# the same rules, JSON that always parses, and the small sharp edges.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"
has() { grep -qF -- "$1" <<< "$2" && echo yes || echo no; }  # has TEXT IN
lines() { if [ -z "$1" ]; then echo 0; else wc -l <<< "$1" | tr -d ' '; fi; }
# A JSON checker: python3 or jq, whichever is installed.
if command -v python3 > /dev/null; then
  json_ok() { python3 -c 'import json,sys; json.load(sys.stdin)' 2> /dev/null && echo valid || echo invalid; }
elif command -v jq > /dev/null; then
  json_ok() { jq -e . > /dev/null 2>&1 && echo valid || echo invalid; }
else
  json_ok() { echo valid; echo "note: neither python3 nor jq: JSON not validated" >&2; }
fi

# Runs the CLI with stdin from $1; sets rc, out, err.
run() {
  local input=$1; shift
  out=$("$AMQ" "$@" < "$input" 2> "$T/err"); rc=$?; err=$(cat "$T/err")
}
seq 1 100 > "$T/k100"
seq 1 100000 > "$T/k100k"
: > "$T/empty"

# ---- 9. sizes are computed and refused before anything is allocated -------------
# Under a 500 MB address-space limit a real allocation would die with bad_alloc; the
# refusal names the bytes needed and the limit, and comes at once. (AddressSanitizer
# reserves terabytes of address space: no ulimit -v there, --max-memory below instead.)
case "${AMQ_SANITIZE:-OFF}" in ON|on|1|TRUE|true) limited_kinds= ;; *) limited_kinds="bloom blocked-bloom cuckoo scalable-cuckoo scalable-bloom" ;; esac
for kind in $limited_kinds; do
  out=$( (ulimit -v 500000; timeout 20 "$AMQ" build -t "$kind" -n 10000000000 -o "$T/x.amq" < "$T/k100") 2>&1)
  rc=$?
  check "$kind -n 1e10 under ulimit -v: exit 2" 2 "$rc"
  check "$kind -n 1e10: the bytes needed and available" yes \
    "$(grep -qE "needs [0-9]+ bytes .*more than the [0-9]+ bytes .*available \(--max-memory\)" <<< "$out" && echo yes || echo no)"
  check "$kind -n 1e10: one line" 1 "$(lines "$out")"
  check "$kind -n 1e10: no bad_alloc" no "$(has bad_alloc "$out")"
  check "$kind -n 1e10: no output file" no "$([ -e "$T/x.amq" ] && echo yes || echo no)"
done
out=$(timeout 20 "$AMQ" build -t scalable-cuckoo -n 1000000000000 --max-memory 4G -o "$T/x.amq" < "$T/k100" 2>&1)
check "scalable-cuckoo -n 1e12: exit 2" 2 $?
check "scalable-cuckoo -n 1e12: bytes named" yes "$(has "bytes (" "$out")"
# An explicit --max-memory, for every kind (gcs and succinct are sized by their keys).
for kind in bloom blocked-bloom cuckoo scalable-cuckoo scalable-bloom gcs succinct; do
  run "$T/k100k" build -t "$kind" --max-memory 64k -o "$T/x.amq"
  check "$kind --max-memory 64k: exit 2" 2 "$rc"
  check "$kind --max-memory 64k: the limit named" yes "$(has "more than the 65536 bytes (64 KiB) allowed" "$err")"
  run "$T/k100k" build -t "$kind" --max-memory 1G -o "$T/x.amq"
  check "$kind --max-memory 1G: builds" 0 "$rc"
done
run "$T/k100" build -t bloom --max-memory 12Q -o "$T/x.amq"
check "--max-memory 12Q: exit 2" 2 "$rc"

# ---- 15. numbers: one set of rules for every numeric option ---------------------
for kind in bloom gcs succinct cuckoo; do
  run "$T/k100" build -t "$kind" -n -1 -o "$T/x.amq"
  check "$kind -n -1: exit 2" 2 "$rc"
  check "$kind -n -1: negative" yes "$(has "'-1' is negative" "$err")"
done
for kind in bloom gcs succinct scalable-bloom; do
  for p in nan inf -0.1 1 0.5x; do
    run "$T/k100" build -t "$kind" -p "$p" -o "$T/x.amq"
    check "$kind -p $p: exit 2" 2 "$rc"
  done
done
for bad in "-n 12x" "-n 1.5" "-n 1e30" "--seed -3" "--seed 0x10" "-p 0.01x"; do
  # shellcheck disable=SC2086
  run "$T/k100" build -t bloom $bad -o "$T/x.amq"
  check "bloom $bad: exit 2" 2 "$rc"
  check "bloom $bad: one line naming the option" yes "$(grep -qE '^amq: --[a-z]+: ' <<< "$err" && lines "$err" | grep -qx 1 && echo yes || echo no)"
done
for bad in "--fingerprint-bits 40" "--fingerprint-bits -4" "--bucket-size 2.5"; do
  # shellcheck disable=SC2086
  run "$T/k100" build -t cuckoo $bad -o "$T/x.amq"
  check "cuckoo $bad: exit 2" 2 "$rc"
done
run "$T/k100" build -t scalable-bloom --growth nan -o "$T/x.amq"
check "--growth nan: exit 2" 2 "$rc"
run "$T/k100" build -t scalable-bloom --tightening 1 -o "$T/x.amq"
check "--tightening 1: exit 2" 2 "$rc"
run "$T/k100" build -t scalable-bloom --tightening 1e-7 -o "$T/x.amq"
check "--tightening 1e-7 is kept (not printed as 0.000000)" 0 "$rc"
check "--tightening 1e-7 shown" yes "$(has "1e-07" "$("$AMQ" info "$T/x.amq")")"
run "$T/k100" build -t bloom -n 1e6 -o "$T/x.amq"
check "-n 1e6 is a count" 0 "$rc"
check "-n 1e6: a million keys' bits" yes "$(has "bits          9585088" "$("$AMQ" info "$T/x.amq")")"
run "$T/k100" build -t gcs -n 100 -o "$T/x.amq"
check "gcs -n: exit 2 (it holds the keys given)" 2 "$rc"
run "$T/k100" build -t succinct -p 0.01 -o "$T/x.amq"
check "succinct -p: exit 2 (an exact set)" 2 "$rc"
# Numbers in messages as %g, not %f.
run "$T/k100" build -t bloom -p 1e-300 -o "$T/x.amq"
check "-p 1e-300: exit 2" 2 "$rc"
check "-p 1e-300: shown as 1e-300" yes "$(has "fpp 1e-300 needs" "$err")"
check "-p 1e-300: no 0.000000" no "$(has "0.000000" "$err")"
# A filter filled past its capacity: a warning, and an item count that makes sense.
run "$T/k100" build -t bloom -n 1 -o "$T/x.amq"
check "bloom -n 1 with 100 keys: exit 0" 0 "$rc"
check "bloom -n 1 with 100 keys: one warning line" 1 "$(lines "$err")"
check "bloom -n 1 with 100 keys: warns of the capacity" yes "$(has "warning: $T/x.amq: 100 keys are more than the capacity 1" "$err")"
info=$("$AMQ" info "$T/x.amq")
check "saturated bloom: items not 2^64-1" no "$(has 18446744073709551615 "$info")"
check "saturated bloom: bits/key not 0.00" no "$(grep -qE '^bits/key +0.00$' <<< "$info" && echo yes || echo no)"
run "$T/k100" build -t blocked-bloom -n 1 -o "$T/x.amq"
check "blocked-bloom -n 1 with 100 keys: warns" yes "$(has "100 keys are more than the capacity 1" "$err")"
run "$T/k100" build -t bloom -n 100 -o "$T/x.amq"
check "bloom at its capacity: no warning" "" "$err"
# Other commands' numbers.
out=$("$AMQ" bench --repeats -1 2>&1); check "bench --repeats -1: exit 2" 2 $?
out=$("$AMQ" bench --min-time nan 2>&1); check "bench --min-time nan: exit 2" 2 $?
out=$("$AMQ" bench --passes 0 2>&1); check "bench --passes 0: exit 2" 2 $?
out=$("$AMQ" bench --absent 0 2>&1); check "bench --absent 0: exit 2" 2 $?
out=$("$AMQ" bench --absent 100000001 2>&1); check "bench --absent 10^8 + 1: exit 2" 2 $?
out=$("$AMQ" store import --chunk -1 "$T/k100" "$T/db" 2>&1); rc=$?
check "store import --chunk -1: exit 2" 2 "$rc"
check "store import --chunk -1: negative" yes "$(has "'-1' is negative" "$out")"
check "store import --chunk -1: no store made" no "$([ -e "$T/db" ] && echo yes || echo no)"

# ---- 17. JSON: numbers as numbers, and always valid ----------------------------
for kind in bloom blocked-bloom cuckoo scalable-cuckoo scalable-bloom gcs succinct; do
  "$AMQ" build -t "$kind" -o "$T/$kind.amq" < "$T/k100" 2> /dev/null
  j=$("$AMQ" info --json "$T/$kind.amq")
  check "$kind info --json parses" valid "$(json_ok <<< "$j")"
  check "$kind info --json: no quoted numbers" no "$(grep -qE '":"[0-9]+"' <<< "$j" && echo yes || echo no)"
done
check "bloom bits is a number" yes "$(has '"bits":960,' "$("$AMQ" info --json "$T/bloom.amq")")"
check "scalable-bloom layer lists are arrays" yes \
  "$(grep -qE '"layer_capacity":\[[0-9]+\]' <<< "$("$AMQ" info --json "$T/scalable-bloom.amq")" && echo yes || echo no)"
printf 'https://example.com/a\n' | "$AMQ" build -t gcs --format cache-digest -o "$T/d.txt" 2> /dev/null
j=$("$AMQ" info --json --format cache-digest "$T/d.txt")
check "cache-digest info --json parses" valid "$(json_ok <<< "$j")"
check "cache-digest base64url stays a string" yes "$(grep -qE '"base64url":"' <<< "$j" && echo yes || echo no)"

# ---- 21. small ones -------------------------------------------------------------
help=$("$AMQ" build --help)
for f in guava parquet bip158 cache-digest; do check "build --format help lists $f" yes "$(has "$f" "$help")"; done
check "build -p help states gcs's range" yes "$(has "gcs: (0, 0.5]" "$help")"
check "build -p help states cache-digest's rounding" yes "$(has "rounded to the nearest power of 1/2" "$help")"
for cmd in query info; do
  help=$("$AMQ" "$cmd" --help)
  for f in parquet bip158 cache-digest; do check "$cmd --format help lists $f" yes "$(has "$f" "$help")"; done
done
printf 'https://example.com/a\n' > "$T/url"
run "$T/url" build -t gcs --format cache-digest -p 0.01 -o "$T/d.txt"
check "cache-digest -p 0.01: exit 0" 0 "$rc"
check "cache-digest -p 0.01: the rounding is stated" yes "$(has "rounded to 0.0078125" "$err")"
"$AMQ" build -t scalable-cuckoo -o "$T/e.amq" < "$T/empty"
check "empty scalable-cuckoo: expected fpp 0, not -0" yes \
  "$(grep -qE '^expected fpp +0$' <<< "$("$AMQ" info "$T/e.amq")" && echo yes || echo no)"
printf 'ab c\n' > "$T/hex"
run "$T/hex" build -t bloom --key-type hex -o "$T/x.amq"
check "hex key with a space: exit 2" 2 "$rc"
check "hex key with a space: names the character" yes "$(has "character 3 (' ') is not a hex digit" "$err")"
check "hex key with a space: not 'odd number'" no "$(has "odd number" "$err")"
check "bench --help lists the families" yes "$(has "bloom, bloom-family, cuckoo" "$("$AMQ" bench --help)")"
out=$("$AMQ" bench --only blocked 2> "$T/err"); rc=$?
check "bench --only blocked: exit 2" 2 "$rc"
check "bench --only blocked: nothing printed" "" "$out"
check "bench --only blocked: names the families" yes "$(has "names no structure family" "$(cat "$T/err")")"
out=$("$AMQ" bench --synthetic 0 2> /dev/null); rc=$?
check "bench --synthetic 0: exit 2" 2 "$rc"
check "bench --synthetic 0: nothing printed" "" "$out"
out=$("$AMQ" bench --data "$T/nonexistent" 2> "$T/err"); rc=$?
check "bench --data missing: exit 2" 2 "$rc"
check "bench --data missing: no header printed" "" "$out"
check "bench --data missing: names the file" yes "$(has "$T/nonexistent" "$(cat "$T/err")")"

finish
