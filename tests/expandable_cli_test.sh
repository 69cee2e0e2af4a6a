#!/usr/bin/env bash
# CLI checks for the expandable kind: build from capacity 1, query, add (growth),
# remove, info, and errors (exit 2, one line naming the file).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0
failed=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: expected [$2], got [$3]"
    failed=$((failed + 1))
  else
    echo "ok: $1"
    passed=$((passed + 1))
  fi
}

seq 1 2000 > "$T/keys"
seq 2001 6000 > "$T/more"
seq 100001 120000 > "$T/absent"

"$AMQ" build -t expandable -n 1 -p 0.01 -o "$T/e.amq" "$T/keys" "$T/keys"
check "build (keys repeated in the input)" 0 $?
check "all keys present" 2000 "$("$AMQ" query -c "$T/e.amq" < "$T/keys")"
check "items counts each key once" 1 "$("$AMQ" info --json "$T/e.amq" | grep -c '"items":2000,')"
"$AMQ" query "$T/e.amq" 1 2 zzz-not-a-key > "$T/out"
check "query status" 0 $?
check "query prints present keys" "1 2" "$(head -2 "$T/out" | tr '\n' ' ' | sed 's/ $//')"
buckets_before=$("$AMQ" info --json "$T/e.amq" | sed 's/.*"buckets":"\([0-9]*\)".*/\1/')
"$AMQ" add "$T/e.amq" < "$T/more"
check "add" 0 $?
buckets_after=$("$AMQ" info --json "$T/e.amq" | sed 's/.*"buckets":"\([0-9]*\)".*/\1/')
[ "$buckets_after" -gt "$buckets_before" ]; check "add grew the table ($buckets_before -> $buckets_after buckets)" 0 $?
check "added keys present" 4000 "$("$AMQ" query -c "$T/e.amq" < "$T/more")"
check "old keys still present" 2000 "$("$AMQ" query -c "$T/e.amq" < "$T/keys")"
fp=$("$AMQ" query -c "$T/e.amq" < "$T/absent")
[ "$fp" -le 300 ]; check "FPR <= 1.5% on 20000 absent keys (got $fp)" 0 $?
"$AMQ" remove --only-inserted "$T/e.amq" < "$T/more"
check "remove" 0 $?
check "kept keys present after remove" 2000 "$("$AMQ" query -c "$T/e.amq" < "$T/keys")"
left=$("$AMQ" query -c "$T/e.amq" < "$T/more")
[ "$left" -le 60 ]; check "removed keys gone (at most false positives: $left)" 0 $?
check "info kind" 1 "$("$AMQ" info --json "$T/e.amq" | grep -c '"kind":"expandable"')"
info=$("$AMQ" info "$T/e.amq")
check "info shows the target" 1 "$(grep -cE '^fpp +0.01$' <<< "$info")"

# Errors: exit 2, one line on stderr starting "amq: " and naming the file.
head -c 100 "$T/e.amq" > "$T/cut.amq"
"$AMQ" query "$T/cut.amq" 1 > "$T/out" 2> "$T/err"
check "truncated file exit status" 2 $?
check "truncated file one line naming it" 1 "$(grep -c "^amq: $T/cut.amq: " "$T/err")"
check "truncated file no output" "" "$(cat "$T/out")"
"$AMQ" build -t expandable -p 0.9 -o "$T/bad.amq" "$T/keys" 2> "$T/err"
check "target out of range exit status" 2 $?
check "target out of range message" 1 "$(grep -c '^amq: .*false-positive rate' "$T/err")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
