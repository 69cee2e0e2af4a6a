#!/usr/bin/env bash
# CLI checks for the expandable kind: build from capacity 1, query, add (growth),
# remove, info, and errors (exit 2, one line naming the file).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"

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
buckets_before=$("$AMQ" info --json "$T/e.amq" | sed 's/.*"buckets":\([0-9]*\).*/\1/')
"$AMQ" add "$T/e.amq" < "$T/more"
check "add" 0 $?
buckets_after=$("$AMQ" info --json "$T/e.amq" | sed 's/.*"buckets":\([0-9]*\).*/\1/')
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

# Without -n the capacity is the distinct keys given: no growth, so no void copies.
"$AMQ" build -t expandable -o "$T/n.amq" "$T/keys"
check "default capacity: entries = keys" 1 "$("$AMQ" info --json "$T/n.amq" | grep -c '"entries":2000')"
"$AMQ" build -t expandable -n 1 -o "$T/one.amq" "$T/keys"
entries=$("$AMQ" info --json "$T/one.amq" | grep -o '"entries":[0-9]*' | grep -o '[0-9]*')
[ "$entries" -gt 2000 ]; check "grown from 1: void copies ($entries entries)" 0 $?

# Copies: a build inserts a repeated line once; add stores copies up to 8 (two buckets
# of 4), and refuses the 9th with a message that says why.
seq -f 'word%g' 3000 > "$T/words"
for i in $(seq 20); do cat "$T/words"; done | "$AMQ" build -t expandable -o "$T/d.amq"
check "build of 20 copies of 3000 words" 0 $?
check "holds 3000" 3000 "$("$AMQ" info --json "$T/d.amq" | grep -o '"items":[0-9]*' | cut -d: -f2)"
"$AMQ" build -t expandable -n 100000 -o "$T/c.amq" "$T/words"
"$AMQ" add "$T/c.amq" word1 word1 word1 word1 word1 word1 word1
check "add of copies up to 8" 0 $?
before=$(cksum < "$T/c.amq")
"$AMQ" add "$T/c.amq" word1 2> "$T/err"
check "add of a 9th copy refused" 2 $?
check "the error names the file and the cause" 1 "$(grep -c "^amq: $T/c.amq: .*at most 8 copies of one key" "$T/err")"
check "file unchanged" "$before" "$(cksum < "$T/c.amq")"
"$AMQ" remove "$T/c.amq" word1 2> "$T/err"
check "remove without --only-inserted refused" 2 $?

# Errors: exit 2, one line on stderr starting "amq: " and naming the file.
head -c 100 "$T/e.amq" > "$T/cut.amq"
"$AMQ" query "$T/cut.amq" 1 > "$T/out" 2> "$T/err"
check "truncated file exit status" 2 $?
check "truncated file one line naming it" 1 "$(grep -c "^amq: $T/cut.amq: " "$T/err")"
check "truncated file no output" "" "$(cat "$T/out")"
"$AMQ" build -t expandable -p 0.9 -o "$T/bad.amq" "$T/keys" 2> "$T/err"
check "target out of range exit status" 2 $?
check "target out of range message" 1 "$(grep -c '^amq: .*false-positive rate' "$T/err")"

finish
