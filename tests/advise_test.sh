#!/usr/bin/env bash
# `amq advise`: the kinds listed fit what was asked (from the kind rows' capabilities),
# smallest first; the recommended one is the smallest; its command builds it; and the
# sizes advised match the files real builds write, within 2% (gcs and ribbon are
# estimated from a formula, the others computed from their geometry).
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/support/check.sh"

# The kinds an advise --json lists, in its order, on one line.
kinds() { grep -o '"kind":"[a-z-]*"' | sed 's/"kind":"//; s/"//' | tr '\n' ' ' | sed 's/ $//'; }
# The bytes it advises for kind $1 (read from stdin).
bytes_of() { grep -o "\"kind\":\"$1\",\"bytes\":[0-9]*" | sed 's/.*://'; }

all=$("$AMQ" advise -n 100000 -p 0.01 --json)
check "advise: exit 0" 0 $?
check "every kind fits no needs" 10 "$(kinds <<< "$all" | wc -w)"
check "recommended is the first listed" "$(kinds <<< "$all" | cut -d' ' -f1)" \
  "$(grep -o '"recommended":"[a-z-]*"' <<< "$all" | sed 's/.*:"//; s/"//')"
sizes=$(grep -o '"bytes":[0-9]*' <<< "$all" | sed 's/.*://')
check "smallest first" "$(sort -n <<< "$sizes")" "$sizes"
check "succinct's size needs --key-bytes" 1 "$(grep -c '"kind":"succinct","bytes":null' <<< "$all")"
if command -v python3 > /dev/null; then
  check "valid JSON" ok "$(python3 -c 'import json,sys; json.load(sys.stdin); print("ok")' <<< "$all" 2>&1)"
fi

check "--deletes: the kinds that erase" "cuckoo scalable-cuckoo expandable" \
  "$("$AMQ" advise -n 100000 --deletes --json | kinds)"
check "--grows: the kinds that grow" "scalable-cuckoo scalable-bloom expandable" \
  "$("$AMQ" advise -n 100000 --grows -p 0.001 --json | kinds)"
check "--inserts: no static kind" "bloom cuckoo blocked-bloom scalable-bloom scalable-cuckoo expandable" \
  "$("$AMQ" advise -n 100000 --inserts --json | kinds)"
check "--static: only static kinds" "ribbon binary-fuse gcs succinct" "$("$AMQ" advise -n 100000 --static --json | kinds)"
check "--exact: only succinct" "succinct" "$("$AMQ" advise -n 1000 --exact --json | kinds)"
check "--ordered: only succinct" "succinct" "$("$AMQ" advise -n 1000 --ordered --json | kinds)"
out=$("$AMQ" advise -n 1000 --exact)
check "--exact recommends succinct, built without -p" 1 "$(grep -cx '  amq build -t succinct -o set.amq KEYFILE' <<< "$out")"
check "--exact: marked" 1 "$(grep -c '^\* succinct' <<< "$out")"
# A rate a kind cannot reach leaves it out: a gcs takes at most 0.5, an expandable 1e-5..0.5.
want=$(echo bloom blocked-bloom scalable-bloom cuckoo scalable-cuckoo binary-fuse ribbon succinct | xargs -n1 | sort | xargs)
got=$("$AMQ" advise -n 1000 -p 0.7 --json | kinds | xargs -n1 | sort | xargs)
check "-p 0.7: the kinds that reach it" "$want" "$got"

# Errors: exit 2, one line.
"$AMQ" advise -n 1000 --exact --deletes > /dev/null 2> "$T/err"
check "--exact --deletes: nothing fits, exit 2" 2 $?
check "--exact --deletes: says so" 1 "$(grep -c '^amq: no kind fits deletes, exact' "$T/err")"
"$AMQ" advise -n 1000 --static --grows > /dev/null 2> "$T/err"
check "--static --grows: refused" 2 $?
check "one error line" 1 "$(wc -l < "$T/err")"
"$AMQ" advise -n 0 > /dev/null 2> "$T/err"
check "-n 0: refused" 2 $?
"$AMQ" advise -p 0.01 > /dev/null 2> "$T/err"
check "-n is required" 2 $?

# The sizes advised are the files real builds write (2% tolerance), and the recommended
# command builds what was advised.
n=20000
seq 1 $n | sed 's/^/https:\/\/example.com\/item\//' > "$T/keys"
advice=$("$AMQ" advise -n $n -p 0.01 --json)
for kind in $(kinds <<< "$advice"); do
  [ "$kind" = succinct ] && continue
  est=$(bytes_of "$kind" <<< "$advice")
  case $kind in gcs|binary-fuse|ribbon) opts="-p 0.01" ;; *) opts="-n $n -p 0.01" ;; esac
  # shellcheck disable=SC2086
  "$AMQ" build -t "$kind" $opts -o "$T/$kind.amq" "$T/keys"
  real=$(stat -c %s "$T/$kind.amq")
  within=$(( (est - real) * 100 <= 2 * real && (real - est) * 100 <= 2 * real ))
  check "$kind: advised $est bytes, built $real (within 2%)" 1 "$within"
done
cmd=$(grep -o '"command":"[^"]*"' <<< "$advice" | sed 's/"command":"//; s/"$//')
best=$(grep -o '"recommended":"[a-z-]*"' <<< "$advice" | sed 's/.*:"//; s/"//')
run_cmd=${cmd#amq }
run_cmd=${run_cmd/KEYFILE/$T/keys}
run_cmd=${run_cmd/set.amq/$T/best.amq}
# shellcheck disable=SC2086
"$AMQ" $run_cmd
check "the recommended command builds" 0 $?
check "it builds the recommended kind" 1 "$("$AMQ" info --json "$T/best.amq" | grep -c "\"kind\":\"$best\"")"

# succinct with --key-bytes: an upper bound for keys that share prefixes.
est=$("$AMQ" advise -n $n --exact --key-bytes 32 --json | bytes_of succinct)
"$AMQ" build -t succinct -o "$T/s.amq" "$T/keys"
real=$(stat -c %s "$T/s.amq")
[ "$est" -ge "$real" ]; check "succinct: advised $est >= built $real" 0 $?

finish
