#!/usr/bin/env bash
# The log store under damage and concurrency (issue 28, items 4 and 19): recovery never
# drops anything without a warning, read-only commands change no file and run beside a
# writer, --skip-corrupt and verify, gc after an interrupted import, put from a file or
# stdin, compact with nothing dead.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
bg=
trap '[ -n "$bg" ] && kill -9 $bg 2>/dev/null; rm -rf "$T"' EXIT
fail=0
passed=0
failed=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; failed=$((failed + 1)); else echo "ok: $1"; passed=$((passed + 1)); fi
}
state() { (cd "$1" && for f in *; do printf '%s %s\n' "$f" "$(cksum < "$f")"; done); }  # names and contents
flip() {  # flip FILE OFFSET: xor one byte with 1
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
cd "$T" || exit 1

# 1. A truncated tail that held an acknowledged delete: refused, not a resurrected key.
"$AMQ" store put td k old && "$AMQ" store put td k new && "$AMQ" store put td gone x && "$AMQ" store del td gone
truncate -s -1 td/seg-*.log
before=$(state td)
"$AMQ" store get td gone > out 2> err
check "cut tombstone: get refuses" 2 $?
check "cut tombstone: nothing printed" "" "$(cat out)"
check "cut tombstone: one error line" 1 "$(wc -l < err)"
check "cut tombstone: error names the segment and --skip-corrupt" 1 "$(grep -c 'seg-0000000000000001.log.*durable.*--skip-corrupt' err)"
check "cut tombstone: read-only get changed no file" "$before" "$(state td)"
"$AMQ" store get --skip-corrupt td gone > out 2> err
check "cut tombstone: --skip-corrupt serves" "0 x" "$? $(cat out)"
check "cut tombstone: one warning line" 1 "$(wc -l < err)"
check "cut tombstone: warning names store, bytes, records" 1 \
  "$(grep -c '^amq: warning: td: dropped 16 bytes (1 record) in 1 segment: .*made durable by the last close' err)"
"$AMQ" store stats td > /dev/null 2>&1
check "cut tombstone: stats refuses too" 2 $?
"$AMQ" store verify td > out
check "cut tombstone: verify exit 1" 1 $?
check "cut tombstone: verify names offset and size" 1 "$(grep -c 'seg-0000000000000001.log: 16 bytes (1 record) at offset 96' out)"
check "cut tombstone: verify changed no file" "$before" "$(state td)"
"$AMQ" store del --skip-corrupt td gone 2> err
check "cut tombstone: a writer with --skip-corrupt repairs (and deletes again)" "0 1" "$? $(grep -c warning err)"
"$AMQ" store verify td > out
check "repaired store verifies clean" "0 td: ok" "$? $(cat out)"
check "repaired store: gone is gone" 1 "$("$AMQ" store get td gone; echo $?)"

# 2. A flipped bit in the last record, no index.snap: a torn write, dropped with a word.
"$AMQ" store put tf k old && "$AMQ" store put tf k new && rm tf/index.snap
size=$(stat -c %s tf/seg-*.log)
flip tf/seg-*.log $((size - 3))
"$AMQ" store get tf k > out 2> err
check "flipped last record: old value served" "0 old" "$? $(cat out)"
check "flipped last record: one warning line, torn write" 1 "$(grep -c '^amq: warning: tf: dropped 16 bytes (1 record) in 1 segment: .*torn write' err)"
check "flipped last record: read-only get did not truncate" "$size" "$(stat -c %s tf/seg-*.log)"
check "flipped last record: no snapshot written" 0 "$(ls tf | grep -c index.snap)"
"$AMQ" store verify tf > /dev/null
check "flipped last record: verify exit 1" 1 $?

# 3. Damage in the middle: --skip-corrupt makes the store usable from the shell.
for i in $(seq 1 20); do "$AMQ" store put tm "key$i" "value$i"; done
rm tm/index.snap
flip tm/seg-*.log 100  # inside the third record (88..112)
"$AMQ" store get tm key20 2> err
check "middle damage: get refuses" 2 $?
check "middle damage: error suggests --skip-corrupt" 1 "$(grep -c -- '--skip-corrupt' err)"
check "middle damage: --skip-corrupt reads" "value20" "$("$AMQ" store get --skip-corrupt tm key20 2> /dev/null)"
check "middle damage: --skip-corrupt warns" 1 "$("$AMQ" store get --skip-corrupt tm key20 2>&1 > /dev/null | grep -c 'damaged records')"
"$AMQ" store verify tm > out
check "middle damage: verify exit 1" 1 $?
check "middle damage: verify names the record" 1 "$(grep -c 'seg-0000000000000001.log: 24 bytes (1 record) at offset 88: damaged records' out)"
"$AMQ" store compact --skip-corrupt tm 2> /dev/null
check "middle damage: compact --skip-corrupt drops it" "0 tm: ok" "$? $("$AMQ" store verify tm)"
check "middle damage: the others remain" "value20 1" "$("$AMQ" store get tm key20) $("$AMQ" store get tm key3 > /dev/null; echo $?)"

# 4. Read-only commands beside a writer; gc after an interrupted import.
head -c 3000000 /dev/urandom > big
mkfifo fifo
"$AMQ" store import fifo ti 2> /dev/null &
bg=$!
exec 3> fifo
head -c 1048576 big >&3  # 16 chunks of 64 KiB; the import waits for more
for _ in $(seq 1 100); do
  recs=$("$AMQ" store stats ti 2> /dev/null | sed -n 's/^records *//p')
  [ "${recs:-0}" -ge 16 ] && break
  sleep 0.1
done
check "stats while import writes" 16 "${recs:-none}"
"$AMQ" store get ti amq:manifest > /dev/null 2> err
check "get while import writes: absent, not locked" "1 " "$? $(cat err)"
"$AMQ" store export ti copy 2> err
check "export while import writes: no manifest yet (not locked)" "2 0" "$? $(grep -c locked err)"
"$AMQ" store put ti k v 2> err
check "a second writer is still locked out" "2 1" "$? $(grep -c 'another writer' err)"
{ kill -9 $bg && wait $bg; } 2> /dev/null
bg=
exec 3>&-
"$AMQ" store verify ti > /dev/null
check "killed import: store intact" 0 $?
before_bytes=$(du -b ti | cut -f1)
"$AMQ" store gc ti 2> err
check "gc" 0 $?
check "gc reports the orphans" 1 "$(grep -c 'removed 16 unreferenced chunks (1048576 bytes)' err)"
check "gc: no chunk left" 0 "$("$AMQ" store stats ti | sed -n 's/^live keys *//p')"
after_bytes=$(du -b ti | cut -f1)
[ "$after_bytes" -lt $((before_bytes - 1000000)) ]
check "gc freed the space ($before_bytes -> $after_bytes bytes)" 0 $?
head -c 200000 big > small
"$AMQ" store import small ti 2> /dev/null && "$AMQ" store export ti back
check "store still imports and exports after gc" "$(cksum < small)" "$(cksum < back)"
"$AMQ" store put ti "$(printf 'x%.0s' $(seq 20))" "not a chunk"
"$AMQ" store gc ti 2> err
check "gc keeps referenced chunks and other keys" "1 0" "$(grep -c 'removed 0 ' err) $(cmp -s small <("$AMQ" store export ti -); echo $?)"

# 5. put --value-file and stdin: any bytes, past the argument limit.
head -c 300000 big > val
printf 'a\0b\0' >> val
"$AMQ" store put tv k --value-file val
check "put --value-file" "$(cksum < val)" "$("$AMQ" store get tv k | cksum)"
"$AMQ" store put tv k2 - < val
check "put - (stdin)" "$(cksum < val)" "$("$AMQ" store get tv k2 | cksum)"
printf 'x' | "$AMQ" store put tv k3 --value-file -
check "put --value-file -" "x" "$("$AMQ" store get tv k3)"
"$AMQ" store put tv k4 --value-file missing 2> err
check "put --value-file missing: error" "2 1" "$? $(grep -c 'missing' err)"
"$AMQ" store put tv k5 2> /dev/null
check "put without a value: error" 2 $?

# 6. compact with nothing dead does nothing.
"$AMQ" store put tc k v
before=$(state tc)
"$AMQ" store compact tc 2> err
check "compact with nothing dead: no file changed" "$before" "$(state tc)"
check "compact with nothing dead: 56 -> 56 bytes" 1 "$(grep -c 'compacted 56 -> 56 bytes' err)"

echo "$passed passed, $failed failed"
exit $fail
