#!/usr/bin/env bash
# Hostile-use regressions of the amq CLI (issue 28): concurrent writers, symbolic links,
# modes and the umask, --redis mixed with a file, streaming query, a mapped file
# truncated under a query, untrusted bytes in errors, and output that cannot be written.
set -u
AMQ=${AMQ_CLI:?AMQ_CLI not set}
T=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
. "$(dirname "$0")/support/check.sh"
# Waits (at most 5 s) until another process holds FILE's flock.
wait_locked() {
  for _ in $(seq 100); do
    flock -n "$1" true || return 0
    sleep 0.05
  done
  return 1
}

seq -f 'w%g' 1000 > "$T/words"
echo apple >> "$T/words"
"$AMQ" build -t bloom -o "$T/words.amq" "$T/words"

# --- 1. Concurrent writers: 12 adds of distinct keys at once lose none of them, for
# every dynamic kind and for a Guava-format file.
for kind in bloom blocked-bloom scalable-bloom cuckoo scalable-cuckoo guava; do
  f="$T/c-$kind.amq"
  if [ "$kind" = guava ]; then
    : | "$AMQ" build -t bloom --format guava -n 100000 -o "$f"
  else
    : | "$AMQ" build -t "$kind" -n 100000 -o "$f"
  fi
  adders=()
  for i in $(seq 12); do
    seq -f "k$i-%g" 500 | "$AMQ" add "$f" &
    adders+=($!)
  done
  bad=0
  for p in "${adders[@]}"; do wait "$p" || bad=$((bad + 1)); done
  check "$kind: 12 concurrent adds exit 0" 0 "$bad"
  check "$kind: every concurrently added key present" 6000 \
    "$(for i in $(seq 12); do seq -f "k$i-%g" 500; done | "$AMQ" query -c "$f")"
done
seq 1 100 | "$AMQ" build -t cuckoo -n 10000 -o "$T/r.amq"
removers=()
for i in 1 2 3 4; do
  seq $((i * 25 - 24)) $((i * 25)) | "$AMQ" remove --only-inserted "$T/r.amq" &
  removers+=($!)
done
bad=0
for p in "${removers[@]}"; do wait "$p" || bad=$((bad + 1)); done
check "4 concurrent removes exit 0" 0 "$bad"
check "every concurrently removed key gone" 0 "$(seq 1 100 | "$AMQ" query -c "$T/r.amq")"

# --wait bounds the wait for another writer; without it, add waits its turn.
f="$T/c-bloom.amq"
flock "$f" sleep 2 &
pids+=($!)
wait_locked "$f"
before=$(cksum < "$f")
"$AMQ" add --wait 0.3 "$f" late-key > /dev/null 2> "$T/err"
check "add --wait on a locked file: status" 2 $?
check "add --wait: the error" "amq: $f: locked by another writer" "$(cat "$T/err")"
check "add --wait: file unchanged" "$before" "$(cksum < "$f")"
flock "$T/r.amq" sleep 1 &
pids+=($!)
wait_locked "$T/r.amq"
"$AMQ" remove --only-inserted --wait 0.2 "$T/r.amq" 1 > /dev/null 2> "$T/err"
check "remove --wait on a locked file: status" 2 $?
check "remove --wait: the error" "amq: $T/r.amq: locked by another writer" "$(cat "$T/err")"
seq 1 5 | "$AMQ" build -t bloom --wait 0.2 -o "$f" 2> "$T/err"
check "build over a locked file: status" 2 $?
check "build over a locked file: the error" "amq: $f: locked by another writer" "$(cat "$T/err")"
check "build over a locked file: file unchanged" "$before" "$(cksum < "$f")"
for bad in -1 nan; do
  "$AMQ" add --wait "$bad" "$f" k 2> "$T/err"
  check "add --wait $bad refused" "2 1" "$? $(grep -c -- '--wait' "$T/err")"
done
"$AMQ" add "$f" waited-key
check "add without --wait waits for the lock" 0 $?
check "the waiting add's key present" 0 "$("$AMQ" query -c "$f" waited-key > /dev/null; echo $?)"
"$AMQ" add --wait 0.5 "$T/missing.amq" k 2> "$T/err"
check "add to a missing file: status" 2 $?
check "add to a missing file: error" 1 "$(grep -c "missing.amq: cannot open" "$T/err")"

# --- 2. Symbolic links, modes, owners and the umask.
mkdir "$T/sub"
seq 1 10 | "$AMQ" build -t bloom -o "$T/sub/t.amq"
ln -s sub/t.amq "$T/l.amq"
ln -s l.amq "$T/ll.amq"
"$AMQ" add "$T/ll.amq" through-link
check "add through links: status" 0 $?
check "the link is still a link" "sub/t.amq" "$(readlink "$T/l.amq")"
check "the link to the link is still a link" "l.amq" "$(readlink "$T/ll.amq")"
check "the target got the key" 0 "$("$AMQ" query "$T/sub/t.amq" through-link > /dev/null; echo $?)"
check "no temporary files left" "t.amq" "$(ls "$T/sub")"
ln -s new-target.amq "$T/dangling.amq"
seq 1 10 | "$AMQ" build -t bloom -o "$T/dangling.amq"
check "build through a dangling link keeps the link" "new-target.amq" "$(readlink "$T/dangling.amq")"
check "and creates its target" 0 "$("$AMQ" query "$T/new-target.amq" 5 > /dev/null 2>&1; echo $?)"
mkfifo "$T/fifo0"
ln -s fifo0 "$T/to-fifo.amq"
seq 1 10 | "$AMQ" build -t bloom -o "$T/to-fifo.amq" 2> "$T/err"
check "build through a link to a fifo: status" 2 $?
check "build through a link to a fifo: the error" "amq: $T/to-fifo.amq: not a regular file, not replaced" "$(cat "$T/err")"
[ -p "$T/fifo0" ]
check "the fifo is still a fifo" 0 $?
chmod 640 "$T/sub/t.amq"
"$AMQ" add "$T/l.amq" mode-key
check "add keeps mode 640" 640 "$(stat -c %a "$T/sub/t.amq")"
chmod 600 "$T/sub/t.amq"
"$AMQ" remove --only-inserted "$T/c-cuckoo.amq" k1-1 > /dev/null
chmod 600 "$T/c-cuckoo.amq"
"$AMQ" remove --only-inserted "$T/c-cuckoo.amq" k1-2 > /dev/null
check "remove keeps mode 600" 600 "$(stat -c %a "$T/c-cuckoo.amq")"
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$T/sub/t.amq"
  "$AMQ" add "$T/sub/t.amq" owner-key
  check "add keeps owner and group (as root)" 65534:65534 "$(stat -c %u:%g "$T/sub/t.amq")"
fi
(umask 027 && seq 1 10 | "$AMQ" build -t bloom -o "$T/u027.amq")
check "new file under umask 027 is 640" 640 "$(stat -c %a "$T/u027.amq")"
(umask 002 && seq 1 10 | "$AMQ" build -t bloom -o "$T/u002.amq")
check "new file under umask 002 is 664" 664 "$(stat -c %a "$T/u002.amq")"
(umask 077 && "$AMQ" add "$T/u002.amq" k)
check "a replaced file keeps its mode whatever the umask" 664 "$(stat -c %a "$T/u002.amq")"

# --- 7. --redis with a set file: refused before connecting (port 1: nothing listens).
"$AMQ" query --redis redis://127.0.0.1:1 --name users "$T/words.amq" apple > "$T/out" 2> "$T/err"
check "query --redis with a file: status" 2 $?
check "query --redis with a file: the error" 1 "$(grep -c "words.amq: give either a file or --redis, not both" "$T/err")"
check "query --redis with a file: one line, no output" "1 0" "$(wc -l < "$T/err") $(wc -c < "$T/out")"
"$AMQ" query --redis redis://127.0.0.1:1 --name users not-a-file-key > /dev/null 2> "$T/err"
check "query --redis with keys only: status" 2 $?
check "query --redis with keys only goes on to connect" 0 "$(grep -c "give either" "$T/err")"
for cmd in add remove; do
  "$AMQ" $cmd --redis redis://127.0.0.1:1 --name users "$T/words.amq" k > /dev/null 2> "$T/err"
  check "$cmd --redis is refused" "2 1" "$? $(wc -l < "$T/err")"
done

# --- 10. query answers as its input arrives, in memory independent of the input size.
mkfifo "$T/fifo"
"$AMQ" query "$T/words.amq" < "$T/fifo" > "$T/qout" &
q=$!
pids+=($q)
exec 7> "$T/fifo"
echo apple >&7
seen=no
for _ in $(seq 100); do
  if grep -qx apple "$T/qout"; then seen=yes; break; fi
  sleep 0.05
done
check "query prints apple before the next line is written" yes "$seen"
echo w7 >&7
echo zebra >&7
exec 7>&-
wait $q
check "streamed query: status" 0 $?
check "streamed query: output" "apple w7" "$(tr '\n' ' ' < "$T/qout" | sed 's/ $//')"
check "query -c over stdin" 1001 "$("$AMQ" query -c "$T/words.amq" < "$T/words")"
"$AMQ" query -c "$T/words.amq" < /dev/null > "$T/out"
check "query -c of no keys: status 1" "1 0" "$? $(cat "$T/out")"
check "query -v prints absent keys" "zz1 zz2" "$(printf 'zz1\napple\nzz2\n' | "$AMQ" query -v "$T/words.amq" | tr '\n' ' ' | sed 's/ $//')"
printf 'w1\n00zz\n' | "$AMQ" query --key-type hex "$T/words.amq" > /dev/null 2> "$T/err"
check "bad hex key on stdin names its line" 1 "$(grep -c '<stdin>:1: not a hex key' "$T/err")"
sanitized=no
case "${AMQ_SANITIZE:-OFF}" in
  ON | on | 1 | TRUE | true | YES | yes) sanitized=yes ;;
esac
if [ -x /usr/bin/time ] && [ "$sanitized" = no ]; then
  small=$( { /usr/bin/time -f %M "$AMQ" query "$T/words.amq" < <(seq 10) > /dev/null; } 2>&1 | tail -1)
  big=$( { /usr/bin/time -f %M "$AMQ" query "$T/words.amq" < <(seq 2000000) > /dev/null; } 2>&1 | tail -1)
  grow=$((big - small))
  [ "$grow" -lt 16000 ]
  check "query of 2,000,000 keys grows max RSS by < 16 MB (got $grow KB)" 0 $?
else
  echo "skip: max RSS check (no /usr/bin/time, or a sanitizer build)"
fi

# --- 11. A mapped set truncated while queried: one line, exit 2.
seq -f 'key%g' 200000 > "$T/sk"
"$AMQ" build -t succinct -o "$T/s.trie" "$T/sk"
mkfifo "$T/fifo2"
"$AMQ" query -c "$T/s.trie" < "$T/fifo2" > "$T/out" 2> "$T/err" &
q=$!
pids+=($q)
exec 8> "$T/fifo2"
mapped=no
for _ in $(seq 100); do
  if grep -q "s.trie" "/proc/$q/maps" 2> /dev/null; then mapped=yes; break; fi
  sleep 0.05
done
check "succinct set is mapped" yes "$mapped"
truncate -s 0 "$T/s.trie"
cat "$T/sk" >&8
exec 8>&-
wait $q
check "truncated mapping: status" 2 $?
check "truncated mapping: the error" "amq: $T/s.trie: file changed or truncated while in use (SIGBUS)" "$(cat "$T/err")"

# --- 13. Untrusted bytes in errors are escaped: one line, no control characters.
"$AMQ" query --key-type hex "$T/words.amq" $'zz\e[31m\nreds' 2> "$T/err"
check "bad key: status" 2 $?
check "bad key: one line" 1 "$(wc -l < "$T/err")"
check "bad key: escaped" 1 "$(grep -cF "'zz\e[31m\nreds'" "$T/err")"
"$AMQ" info "$T/no"$'\e]0;title\a\n'"pe.amq" 2> "$T/err"
check "bad file name: status" 2 $?
check "bad file name: one line" 1 "$(wc -l < "$T/err")"
check "bad file name: no control bytes" 0 "$(tr -d '\n' < "$T/err" | LC_ALL=C grep -c '[[:cntrl:]]')"
check "bad file name: escaped" 1 "$(grep -cF 'no\e]0;title\x07\npe.amq' "$T/err")"
printf 'AAAA\nAAAA' > "$T/cd.txt"
"$AMQ" query --format cache-digest "$T/cd.txt" k 2> "$T/err"
check "unexpected newline: status" 2 $?
check "unexpected newline: one line" 1 "$(wc -l < "$T/err")"
printf 'bad \xff\xc2\x9b utf-8 \xe2\x9c\x93' > "$T/name"
"$AMQ" info "$T/$(cat "$T/name")" 2> "$T/err"
check "invalid UTF-8 and C1 escaped, valid UTF-8 kept" 1 "$(grep -cF 'bad \xff\xc2\x9b utf-8 ✓' "$T/err")"

# --- 16. Output that cannot be written: exit 2 with one line saying so.
mkdir "$T/store"
"$AMQ" store put "$T/store" k v
seq 1 10 | "$AMQ" build -t cuckoo -o "$T/cu.amq"
full() {  # full NAME ARGS...: the command's output goes to /dev/full
  local name=$1
  shift
  "$AMQ" "$@" > /dev/full 2> "$T/err"
  check "$name > /dev/full: status" 2 $?
  check "$name > /dev/full: the error" "1 amq: cannot write standard output" \
    "$(wc -l < "$T/err") $(cut -c 1-33 "$T/err")"
}
full "info" info "$T/words.amq"
full "info --json" info --json "$T/words.amq"
full "query" query "$T/words.amq" apple
full "query stdin" query "$T/words.amq" < "$T/words"
full "query -c" query -c "$T/words.amq" apple
before=$(cksum < "$T/cu.amq")
full "remove" remove --only-inserted "$T/cu.amq" 3 absent-key
check "remove whose output failed leaves the file unchanged" "$before" "$(cksum < "$T/cu.amq")"
full "store stats" store stats "$T/store"
full "store get" store get "$T/store" k
seq -f 'key%g' 100 | "$AMQ" build -t succinct -o "$T/s2.trie"
full "list" list "$T/s2.trie"
full "--help" --help
full "bench" bench --synthetic 1000 --min-time 0.01 --only bloom

finish
