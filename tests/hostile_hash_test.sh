#!/usr/bin/env bash
# The blocked Bloom filter's integer-key hash (issue 34, decision 0045): new files name
# mix64 (hasher id 4); a file written before, with XXH3 (id 1), still loads, answers as
# it did and keeps its hash when keys are added; an 8-byte key hashes alike as u64 and
# as bytes.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
SRC=${AMQ_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"
hash_of() { "$AMQ" info "$1" | sed -n 's/^hash  *//p'; }

# --- A file of amq before mix64: keys i * 1000003 (i < 300), --key-type u64 --seed 7 ---
old="$SRC/tests/data/blocked_bloom_xxh3_u64_seed7_300.amq"
check "old file: info names xxh3" "xxh3 seed 7" "$(hash_of "$old")"
for i in $(seq 0 299); do echo $((i * 1000003)); done > "$T/keys"
for i in $(seq 300 20299); do echo $((i * 1000003)); done > "$T/absent"
check "old file: every key present" 300 "$("$AMQ" query -c "$old" < "$T/keys")"
# Written down when the file was made, with the amq of that time: 130 false positives,
# the first five these.
check "old file: the same false positives" 130 "$("$AMQ" query -c "$old" < "$T/absent")"
check "old file: the first five of them" "419001257 580001740 583001749 614001842 715002145" \
  "$("$AMQ" query "$old" < "$T/absent" | head -5 | tr '\n' ' ' | sed 's/ $//')"
cp "$old" "$T/old.amq"
echo 123456789 | "$AMQ" add "$T/old.amq"
check "old file after add: still xxh3" "xxh3 seed 7" "$(hash_of "$T/old.amq")"
check "old file after add: the new key" 123456789 "$("$AMQ" query "$T/old.amq" 123456789)"
check "old file after add: the old keys" 300 "$("$AMQ" query -c "$T/old.amq" < "$T/keys")"

# --- New files: mix64 ---------------------------------------------------------------
"$AMQ" build -t blocked-bloom --key-type u64 --seed 7 -o "$T/new.amq" "$T/keys"
check "new file: info names mix64" "mix64 seed 7" "$(hash_of "$T/new.amq")"
check "new file: hasher id 4 in its params" "04000000" "$(od -An -tx1 -j32 -N4 "$T/new.amq" | tr -d ' \n')"
check "old file: hasher id 1 in its params" "01000000" "$(od -An -tx1 -j32 -N4 "$old" | tr -d ' \n')"
check "new file: every key present" 300 "$("$AMQ" query -c "$T/new.amq" < "$T/keys")"
fp=$("$AMQ" query -c "$T/new.amq" < "$T/absent")
check "new file: rate on 20000 absent keys under 1.5%" 1 "$([ "$fp" -lt 300 ] && echo 1 || echo 0)"
# Sequential keys 0..n-1 spread as random ones (an identity-like hash would fill one block).
seq 0 19999 | "$AMQ" build -t blocked-bloom --key-type u64 -o "$T/seq.amq"
fp=$(seq 20000 119999 | "$AMQ" query -c "$T/seq.amq")
check "sequential keys: rate on 100000 absent under 1.2%" 1 "$([ "$fp" -lt 1200 ] && echo 1 || echo 0)"
# The key 0x6867666564636261 is the 8 bytes "abcdefgh": one key as u64 and as bytes (the
# CLI keeps the two key types apart, so compare the bits: the payload after the params).
echo 7523094288207667809 | "$AMQ" build -t blocked-bloom --key-type u64 -o "$T/one.amq"
echo abcdefgh | "$AMQ" build -t blocked-bloom -o "$T/onestr.amq"
blocks=$("$AMQ" info "$T/one.amq" | sed -n 's/^blocks  *//p')
payload() { od -An -tx1 -j56 -N$((32 * blocks)) "$1" | tr -d ' \n'; }
check "one key: 8 bits set" 8 "$("$AMQ" info "$T/one.amq" | sed -n 's/^bits_set  *//p')"
p=$(payload "$T/one.amq")
check "payload read: 64 hex digits a block" 1 "$([ "${#p}" -eq $((64 * blocks)) ] && [ "$blocks" -ge 1 ] && echo 1 || echo 0)"
check "an 8-byte str key sets the bits of its u64" "$(payload "$T/one.amq")" "$(payload "$T/onestr.amq")"
# Parquet's hashing is untouched.
"$AMQ" build -t blocked-bloom --parquet -o "$T/pq.amq" "$T/keys"
check "--parquet: xxh64" "xxh64 seed 0 (parquet)" "$(hash_of "$T/pq.amq")"

finish
