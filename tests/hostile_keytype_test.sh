#!/usr/bin/env bash
# Key types (issue 28, items 5 and 18): a set records the type of its keys, query, add,
# remove and list read keys by it, a contradicting --key-type is an error, u64 keys of a
# succinct set sort numerically, and u64 keys may be negative (Guava's longFunnel).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
SRC=${AMQ_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
passed=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=$((fail + 1)); else echo "ok: $1"; passed=$((passed + 1)); fi
}
# check_error NAME FILE WORDS... -- COMMAND...: exit 2, nothing on stdout, one line on
# stderr starting "amq: " that names FILE and holds each of WORDS.
check_error() {
  local name=$1 file=$2
  shift 2
  local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done
  shift
  "$@" > "$T/out" 2> "$T/err"
  local st=$?
  check "$name: exit 2" 2 "$st"
  check "$name: no output" "" "$(cat "$T/out")"
  check "$name: one line" 1 "$(wc -l < "$T/err")"
  check "$name: starts amq: and names the file" 1 "$(grep -c "^amq: .*$file" "$T/err")"
  for w in "${words[@]}"; do check "$name: says '$w'" 1 "$(grep -c -- "$w" "$T/err")"; done
}
lines() { tr '\n' ' ' | sed 's/ $//'; }

# --- Item 5: a succinct set of u64 keys lists in numeric order ---------------------
seq 1 300 | "$AMQ" build -t succinct --key-type u64 -o "$T/u.trie"
check "succinct u64 build" 0 $?
check "list --from 10 --to 20 is 10..19" "$(seq 10 19 | lines)" \
  "$("$AMQ" list --key-type u64 --from 10 --to 20 "$T/u.trie" | lines)"
check "list --from 250 --to 260 is 250..259" "$(seq 250 259 | lines)" \
  "$("$AMQ" list --key-type u64 --from 250 --to 260 "$T/u.trie" | lines)"
check "list of all keys is seq 1 300" "$(seq 1 300 | cksum)" "$("$AMQ" list "$T/u.trie" | cksum)"
check "list -c --from 100" 201 "$("$AMQ" list -c --from 100 "$T/u.trie")"
check "query reads u64 keys by default" "7 300" "$("$AMQ" query "$T/u.trie" 7 300 301 | lines)"
check "query -c of all keys" 300 "$(seq 1 300 | "$AMQ" query -c "$T/u.trie")"
# Negative keys are their two's complement: they sort after every positive one.
printf '%s\n' 5 -1 0 -9223372036854775808 9223372036854775807 | "$AMQ" build -t succinct --key-type u64 -o "$T/n.trie"
check "u64 order is unsigned" "0 5 9223372036854775807 9223372036854775808 18446744073709551615" \
  "$("$AMQ" list "$T/n.trie" | lines)"
check "negative key found" "-1" "$("$AMQ" query "$T/n.trie" -- -1)"
check "2^64-1 is -1" "18446744073709551615" "$("$AMQ" query "$T/n.trie" 18446744073709551615)"
# String keys sort as bytes, as before.
printf '%s\n' 10 9 100 | "$AMQ" build -t succinct -o "$T/s.trie"
check "str keys sort as bytes" "10 100 9" "$("$AMQ" list "$T/s.trie" | lines)"
# A u64 trie written before the key type was recorded (little-endian) still answers.
OLD="$SRC/tests/data/succinct_u64_le_1_300.amq"
check "old u64 trie: query --key-type u64" 300 "$(seq 1 300 | "$AMQ" query -c --key-type u64 "$OLD")"
check "old u64 trie: list --key-type u64 keeps all keys" "$(seq 1 300 | sort | cksum)" \
  "$("$AMQ" list --key-type u64 "$OLD" | sort | cksum)"
check "old u64 trie: info says unrecorded" 1 "$("$AMQ" info "$OLD" | grep -cE '^key_type +unrecorded$')"

# --- Item 18: the key type is recorded and used -----------------------------------
for kind in bloom blocked-bloom scalable-bloom cuckoo scalable-cuckoo gcs succinct; do
  seq 1 100 | "$AMQ" build -t "$kind" --key-type u64 -o "$T/$kind.amq"
  check "$kind u64 build" 0 $?
  check "$kind: info states the key type" 1 "$("$AMQ" info "$T/$kind.amq" | grep -cE '^key_type +u64$')"
  check "$kind: info --json states it" 1 "$("$AMQ" info --json "$T/$kind.amq" | grep -c '"key_type":"\?u64"\?')"
  check "$kind: query 7 without --key-type finds it" 7 "$("$AMQ" query "$T/$kind.amq" 7)"
  check "$kind: query -c of the keys" 100 "$(seq 1 100 | "$AMQ" query -c "$T/$kind.amq")"
  check_error "$kind: query --key-type str" "$kind.amq" "u64" "str" -- "$AMQ" query --key-type str "$T/$kind.amq" 7
  check_error "$kind: query --key-type hex" "$kind.amq" "u64" "hex" -- "$AMQ" query --key-type hex "$T/$kind.amq" 07
done
# add and remove use it, and a rewritten file keeps it.
"$AMQ" add "$T/bloom.amq" 1000 -5
check "add u64 by default" "1000 -5" "$("$AMQ" query "$T/bloom.amq" -- 1000 -5 | lines)"
check "add keeps the key type" 1 "$("$AMQ" info "$T/bloom.amq" | grep -cE '^key_type +u64$')"
check_error "add --key-type str" "bloom.amq" "u64" "str" -- "$AMQ" add --key-type str "$T/bloom.amq" x
"$AMQ" remove --only-inserted "$T/cuckoo.amq" 7
check "remove u64 by default" 0 $?
check "removed key gone" "" "$("$AMQ" query "$T/cuckoo.amq" 7)"
check_error "remove --key-type str" "cuckoo.amq" "u64" "str" -- "$AMQ" remove --only-inserted --key-type str "$T/cuckoo.amq" 8
check_error "list --key-type str of a u64 set" "u.trie" "u64" "str" -- "$AMQ" list --key-type str "$T/u.trie"
# A str set refuses u64 keys; str and hex are notations of the same byte strings.
printf 'apple\nfig\n' | "$AMQ" build -t bloom -o "$T/words.amq"
check "str recorded" 1 "$("$AMQ" info "$T/words.amq" | grep -cE '^key_type +str$')"
check_error "query --key-type u64 of a str set" "words.amq" "str" "u64" -- "$AMQ" query --key-type u64 "$T/words.amq" 7
check "hex reads a str set" 666967 "$("$AMQ" query --key-type hex "$T/words.amq" 666967)"
printf '%s\n' 00ff 0a0b | "$AMQ" build -t succinct --key-type hex -o "$T/h.trie"
check "hex recorded, list in hex by default" "00ff 0a0b" "$("$AMQ" list "$T/h.trie" | lines)"

# u64 keys: negative numbers as Guava's longFunnel (two's complement); bounds hold.
printf '%s\n' -1 -9223372036854775808 | "$AMQ" build -t bloom --key-type u64 -o "$T/neg.amq"
check "-1 is 2^64-1" 18446744073709551615 "$("$AMQ" query "$T/neg.amq" 18446744073709551615)"
check "-2^63 is 2^63" 9223372036854775808 "$("$AMQ" query "$T/neg.amq" 9223372036854775808)"
for bad in -9223372036854775809 18446744073709551616 - -x 1-; do
  echo "$bad" | "$AMQ" build -t bloom --key-type u64 -o "$T/bad.amq" 2> "$T/err"
  check "u64 key '$bad' refused" 2 $?
done
check "no file left by refused keys" no "$([ -e "$T/bad.amq" ] && echo yes || echo no)"

# Files written before the key type was recorded: unchanged by add, read as str.
cp "$SRC/fuzz/corpus/any_set_fuzz/bloom.amq" "$T/old.amq"
check "old file: info says unrecorded" 1 "$("$AMQ" info "$T/old.amq" | grep -cE '^key_type +unrecorded$')"
"$AMQ" add "$T/old.amq" new-key
check "old file: add" 0 $?
check "old file: still unrecorded (header byte 12 is 0)" 0 "$(od -An -tu1 -j12 -N1 "$T/old.amq" | tr -d ' ')"
check "old file: added key found as str" new-key "$("$AMQ" query "$T/old.amq" new-key)"
"$AMQ" query --key-type u64 "$T/old.amq" 7 > /dev/null
check "old file: any --key-type allowed" 1 $?
# Outside formats have no place for it.
seq 1 10 | "$AMQ" build -t bloom --key-type u64 --format guava -o "$T/g.bin"
check "guava: unrecorded" 1 "$("$AMQ" info "$T/g.bin" | grep -cE '^key_type +unrecorded$')"
check "guava: --key-type u64 finds keys" 10 "$(seq 1 10 | "$AMQ" query -c --key-type u64 "$T/g.bin")"

echo "$passed passed, $fail failed"
[ "$fail" -eq 0 ]
