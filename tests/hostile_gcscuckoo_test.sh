#!/usr/bin/env bash
# Hostile-input regressions (issue 28, items 6, 8, 12, 14): truncated cache digests,
# cuckoo remove of keys that were never inserted, duplicate keys in cuckoo builds, and
# GCS files with a hasher id the CLI cannot query. Errors: exit 2, one line naming the file.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"

# ---- 6: a truncated HTTP Cache Digest is refused -------------------------------------
seq -f 'https://example.com/%g.js' 1000 > "$T/urls"
head -200 "$T/urls" > "$T/urlkeys"
"$AMQ" build -t gcs --format cache-digest -p 0.0078125 -o "$T/digest.txt" "$T/urls"
check "cache digest build" 0 $?
check "cache digest: all keys present" 200 "$("$AMQ" query -c --format cache-digest "$T/digest.txt" < "$T/urlkeys")"
size=$(wc -c < "$T/digest.txt")
bad=0
for pct in 10 30 50 70 80 90; do
  head -c $((size * pct / 100)) "$T/digest.txt" > "$T/cut.txt"
  "$AMQ" query -c --format cache-digest "$T/cut.txt" < "$T/urlkeys" > "$T/out" 2> "$T/err"
  rc=$?
  if [ $rc -ne 2 ] || [ -s "$T/out" ] || [ "$(wc -l < "$T/err")" -ne 1 ] || ! grep -q "^amq: .*cut.txt" "$T/err"; then
    echo "  digest cut to $pct%: exit $rc, output [$(cat "$T/out")], error [$(cat "$T/err")]"
    bad=$((bad + 1))
  fi
done
check "cache digest cut to 10..90%: exit 2, one line naming the file" 0 "$bad"
head -c $((size * 70 / 100)) "$T/digest.txt" > "$T/cut.txt"
"$AMQ" info --format cache-digest "$T/cut.txt" > /dev/null 2>&1
check "info refuses a cut digest too" 2 $?
# Duplicate URLs count once toward N.
cat "$T/urls" "$T/urls" | "$AMQ" build -t gcs --format cache-digest -p 0.0078125 -o "$T/dup.txt"
check "cache digest of duplicated lines equals the digest of the set" "$(cat "$T/digest.txt")" "$(cat "$T/dup.txt")"

# ---- 8: removing keys that were never inserted ---------------------------------------
seq -f 'word%g' 3000 > "$T/words"
seq -f 'absent%g' 2000 > "$T/absent"
for kind in cuckoo scalable-cuckoo; do
  "$AMQ" build -t $kind --fingerprint-bits 4 -o "$T/c.amq" "$T/words"
  before=$(cksum < "$T/c.amq")
  "$AMQ" remove "$T/c.amq" < "$T/absent" > "$T/out" 2> "$T/err"
  check "$kind remove without --only-inserted/--only-if-present-in refused" 2 $?
  check "$kind refusal is one line naming the file" "1 1" "$(wc -l < "$T/err") $(grep -c "^amq: $T/c.amq: refusing" "$T/err")"
  check "$kind refused remove printed nothing" 0 "$(wc -c < "$T/out")"
  check "$kind file unchanged" "$before" "$(cksum < "$T/c.amq")"
  "$AMQ" remove --only-if-present-in "$T/words" "$T/c.amq" < "$T/absent" > "$T/out"
  check "$kind remove of unlisted keys: exit 1" 1 $?
  check "$kind every unlisted key printed as not removed" 2000 "$(wc -l < "$T/out")"
  check "$kind no word lost" 3000 "$("$AMQ" query -c "$T/c.amq" < "$T/words")"
  "$AMQ" remove --help | tr '\n' ' ' | grep -q "Only keys that were inserted may be removed"
  check "remove --help states the rule" 0 $?
done

# ---- 12: duplicate input lines in cuckoo builds --------------------------------------
for kind in cuckoo scalable-cuckoo; do
  yes k | head -9 | "$AMQ" build -t $kind -o "$T/d.amq"
  check "$kind build of 9 copies of one key" 0 $?
  check "$kind holds it once" 1 "$("$AMQ" info --json "$T/d.amq" | grep -o '"items":[0-9]*' | cut -d: -f2)"
  yes '' | head -9 | "$AMQ" build -t $kind -o "$T/d.amq"
  check "$kind build of 9 blank lines" 0 $?
  check "$kind finds the blank key" 1 "$(echo | "$AMQ" query -c "$T/d.amq")"
  for i in $(seq 50); do cat "$T/words"; done | "$AMQ" build -t $kind -o "$T/d.amq"
  check "$kind build of 50 copies of 3000 words" 0 $?
  check "$kind holds 3000" 3000 "$("$AMQ" info --json "$T/d.amq" | grep -o '"items":[0-9]*' | cut -d: -f2)"
  # add counts copies, and says so when one key has filled its two buckets.
  "$AMQ" build -t $kind --bucket-size 2 -n 10000 -o "$T/d.amq" "$T/words"
  "$AMQ" add "$T/d.amq" word1 word1 word1
  check "$kind add of copies up to 2b" 0 $?
  "$AMQ" add "$T/d.amq" word1 2> "$T/err"
  check "$kind add past 2b copies refused" 2 $?
  check "$kind error names the cause" 1 "$(grep -c "d.amq: too many copies of this key: its two buckets hold at most 2b = 4" "$T/err")"
done
seq 100000 | "$AMQ" build -t cuckoo -n 1000 -o "$T/f.amq" 2> "$T/err"
check "really full: exit 2" 2 $?
check "really full: the error says full at load" 1 "$(grep -c "full at load 0\.9" "$T/err")"

finish
