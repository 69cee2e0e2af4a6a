#!/usr/bin/env bash
# CLI checks for blocked-bloom and scalable-bloom: build, query, add (dynamic), info,
# their kind-specific options, and errors (exit 2, one line naming the file, no output).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; else echo "ok: $1"; fi
}

seq 1 2000 > "$T/keys"
seq 100001 110000 > "$T/absent"
seq 2001 5000 > "$T/more"

for kind in blocked-bloom scalable-bloom; do
  "$AMQ" build -t "$kind" -n 500 -o "$T/$kind.amq" "$T/keys"
  check "$kind build" 0 $?
  check "$kind all keys present" 2000 "$("$AMQ" query -c "$T/$kind.amq" < "$T/keys")"
  "$AMQ" query "$T/$kind.amq" 1 2 zzz-not-a-key > "$T/out"
  check "$kind query status" 0 $?
  check "$kind query prints present keys" "1 2" "$(head -2 "$T/out" | tr '\n' ' ' | sed 's/ $//')"
  "$AMQ" add "$T/$kind.amq" < "$T/more"
  check "$kind add" 0 $?
  check "$kind added keys present" 3000 "$("$AMQ" query -c "$T/$kind.amq" < "$T/more")"
  check "$kind old keys still present" 2000 "$("$AMQ" query -c "$T/$kind.amq" < "$T/keys")"
  "$AMQ" info --json "$T/$kind.amq" > "$T/info.json"
  check "$kind info kind" 1 "$(grep -c "\"kind\":\"$kind\"" "$T/info.json")"
done

# scalable-bloom grew past its initial capacity of 500 and kept its target rate.
layers=$(sed 's/.*"layers":\([0-9]*\).*/\1/' <(tr -d '\n' < "$T/info.json"))
[ "$layers" -ge 4 ]; check "scalable-bloom layers >= 4 after 5000 keys (got $layers)" 0 $?
fp=$("$AMQ" query -c "$T/scalable-bloom.amq" < "$T/absent")
[ "$fp" -le 150 ]; check "scalable-bloom FPR <= 1.5% on 10000 absent keys (got $fp)" 0 $?
"$AMQ" build -t scalable-bloom -n 100 --growth 4 --tightening 0.6 -o "$T/g.amq" "$T/keys"
info=$("$AMQ" info "$T/g.amq")
check "growth shown" 1 "$(grep -cE '^growth +4$' <<< "$info")"
check "tightening shown" 1 "$(grep -cE '^tightening +0.6$' <<< "$info")"
# Layer 0 raised from n0 = 100 to 176 keys so that its rate holds (docs/decisions/0003).
check "layer capacities" 1 "$(grep -cE '^layer_capacity +176,400,1600$' <<< "$info")"

# blocked-bloom in Parquet mode.
"$AMQ" build -t blocked-bloom --parquet -o "$T/p.amq" "$T/keys"
check "parquet hash shown" 1 "$("$AMQ" info "$T/p.amq" | grep -c 'xxh64 seed 0 (parquet)')"
check "parquet keys present" 2000 "$("$AMQ" query -c "$T/p.amq" < "$T/keys")"

# Parquet's raw bitset: written with --format parquet, read with --format parquet.
"$AMQ" build -t blocked-bloom --format parquet -o "$T/p.bitset" "$T/keys"
check "parquet bitset size is 32 bytes a block" 0 $(( $(stat -c %s "$T/p.bitset") % 32 ))
check "parquet bitset is the container's payload" "$(tail -c +57 "$T/p.amq" | head -c "$(stat -c %s "$T/p.bitset")" | cksum)" \
  "$(cksum < "$T/p.bitset")"
check "parquet bitset keys present" 2000 "$("$AMQ" query --format parquet -c "$T/p.bitset" < "$T/keys")"
"$AMQ" add --format parquet "$T/p.bitset" < "$T/more"
check "parquet bitset add" 3000 "$("$AMQ" query --format parquet -c "$T/p.bitset" < "$T/more")"
check "parquet bitset info" 1 "$("$AMQ" info --format parquet "$T/p.bitset" | grep -cE '^format +parquet$')"

# Errors: exit 2, one line on stderr, no output file.
"$AMQ" build -t blocked-bloom --growth 3 -o "$T/bad1.amq" "$T/keys" 2> "$T/err"
check "blocked-bloom refuses --growth" 2 $?
check "one error line" 1 "$(wc -l < "$T/err")"
[ ! -e "$T/bad1.amq" ]; check "no output left" 0 $?
"$AMQ" build -t scalable-bloom --parquet -o "$T/bad2.amq" "$T/keys" 2> "$T/err"
check "scalable-bloom refuses --parquet" 2 $?
"$AMQ" build -t scalable-bloom --tightening 1 -o "$T/bad3.amq" "$T/keys" 2> "$T/err"
check "scalable-bloom refuses tightening 1" 2 $?
[ ! -e "$T/bad3.amq" ]; check "no output left" 0 $?
cp "$T/scalable-bloom.amq" "$T/corrupt.amq"
printf '\x55' | dd of="$T/corrupt.amq" bs=1 seek=100 conv=notrunc 2>/dev/null
"$AMQ" query "$T/corrupt.amq" 1 > /dev/null 2> "$T/err"
check "corrupt file status" 2 $?
check "error names the file" 1 "$(grep -c "corrupt.amq" "$T/err")"
before=$(cksum < "$T/corrupt.amq")
"$AMQ" add "$T/corrupt.amq" 7 2> /dev/null
check "add to corrupt file fails" 2 $?
check "corrupt file untouched" "$before" "$(cksum < "$T/corrupt.amq")"

exit $fail
