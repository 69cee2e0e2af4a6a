#!/usr/bin/env bash
# A scalable Bloom filter opens a layer only for a key that needs it (decision 0050), so
# the memory `amq build` checks against --max-memory before building is what it builds.
# Before: 20000 keys at --fpp 1e-4 filled layer 0 exactly (no key a false positive),
# opened layer 1 empty, and the file (162456 bytes) was three times the estimate: a
# --max-memory of 120000 was accepted for a set and file image of 325 KB.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
SRC=${AMQ_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"
field() { "$AMQ" info "$1" | sed -n "s/^$2  *//p"; }
size_of() { wc -c < "$1" | tr -d ' '; }

seq 1 20000 > "$T/k20000"
for fpp in 1e-2 1e-3 1e-4; do
  # The need, from the refusal of a limit of one byte.
  out=$("$AMQ" build -t scalable-bloom --fpp "$fpp" --max-memory 1 -o "$T/x.amq" < "$T/k20000" 2>&1)
  check "fpp $fpp: --max-memory 1 refused" 2 "$?"
  need=$(sed -n 's/.* needs \([0-9]*\) bytes .*/\1/p' <<< "$out")
  check "fpp $fpp: the need is stated" yes "$([ -n "$need" ] && echo yes || echo no)"
  "$AMQ" build -t scalable-bloom --fpp "$fpp" --max-memory "$need" -o "$T/s$fpp.amq" < "$T/k20000"
  check "fpp $fpp: exactly the need is accepted" 0 "$?"
  check "fpp $fpp: one layer" 1 "$(field "$T/s$fpp.amq" layers)"
  # The set and its file image fit in the need: the file is the set plus its header.
  size=$(size_of "$T/s$fpp.amq")
  check "fpp $fpp: file ($size) <= need / 2 + header" yes "$([ $((2 * size)) -le $((need + 256)) ] && echo yes || echo no)"
  "$AMQ" build -t scalable-bloom --fpp "$fpp" --max-memory $((need - 1)) -o "$T/y.amq" < "$T/k20000" 2>/dev/null
  check "fpp $fpp: a byte less is refused" 2 "$?"
done

# The issue's figures: 20000 keys at 1e-4 need 2 x 51728 bytes, and the file is 51832.
check "1e-4: the file of one layer" 51832 "$(size_of "$T/s1e-4.amq")"
out=$("$AMQ" build -t scalable-bloom --fpp 1e-4 --max-memory 120000 -o "$T/z.amq" < "$T/k20000" 2>&1)
check "1e-4 --max-memory 120000: builds" 0 "$?"
check "1e-4 --max-memory 120000: set and image fit" yes "$([ $((2 * $(size_of "$T/z.amq"))) -le 120000 ] && echo yes || echo no)"

# Exactly the capacity: one layer; one key more: two.
seq 1 5000 | "$AMQ" build -t scalable-bloom --fpp 1e-4 -n 5000 -o "$T/c.amq"
check "capacity 5000, 5000 keys: one layer" 1 "$(field "$T/c.amq" layers)"
seq 1 5001 | "$AMQ" build -t scalable-bloom --fpp 1e-4 -n 5000 -o "$T/c1.amq"
check "capacity 5000, 5001 keys: two layers" 2 "$(field "$T/c1.amq" layers)"
check "capacity 5000, 5001 keys: layer items" "5000,1" "$(field "$T/c1.amq" layer_items)"
seq 1 5000 | "$AMQ" add "$T/c.amq"
check "re-adding the keys opens nothing" 1 "$(field "$T/c.amq" layers)"
echo 5001 | "$AMQ" add "$T/c.amq"
check "one new key opens layer 1" "5000,1" "$(field "$T/c.amq" layer_items)"

# A file written when layer 0's last key opened layer 1 at once (n0 = 100, 1%, seed 7,
# k1..k153): it answers as it did (80 of q1..q20000), and its empty layer takes the next
# keys: m1..m300 give the layers they gave then (153,243,55; 132 false positives).
old="$SRC/tests/data/scalable_bloom_full_layer0_n100.amq"
check "old file: layer items" "153,0" "$(field "$old" layer_items)"
check "old file: keys present" 153 "$(seq -f 'k%g' 1 153 | "$AMQ" query -c "$old")"
check "old file: false positives as before" 80 "$(seq -f 'q%g' 1 20000 | "$AMQ" query -c "$old")"
cp "$old" "$T/old.amq"
seq -f 'm%g' 1 300 | "$AMQ" add "$T/old.amq"
check "old file + m1..m300: layer items" "153,243,55" "$(field "$T/old.amq" layer_items)"
check "old file + m1..m300: false positives" 132 "$(seq -f 'q%g' 1 20000 | "$AMQ" query -c "$T/old.amq")"
check "old file + m1..m300: the file of then" 5f47a6b6c55be8e92a99a09185009aa1100d5a411c2c7f4b1ea49704056948b6 \
  "$(sha256sum "$T/old.amq" | cut -d' ' -f1)"

finish
