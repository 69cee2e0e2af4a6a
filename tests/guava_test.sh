#!/usr/bin/env bash
# The Guava cross-check, against real Guava (Debian's libguava-java, run by the JDK).
#  1. tests/guava/GuavaCheck.java (compiled here into the build dir) builds Guava Bloom
#     filters and records Guava's answers and murmur3_128 hashes;
#  2. the guava_compat driver checks that amq hashes, loads, answers and rebuilds them
#     exactly as Guava does, and writes amq-built filters with amq's answers;
#  3. Guava reads those back and must answer identically;
#  4. the same through the CLI: `amq build --format guava` gives Guava's bytes, `amq query`
#     on a Guava file prints exactly the keys Guava answers true for, and Guava reads
#     files written by `amq build` and `amq add`.
set -euo pipefail
: "${AMQ_SOURCE_DIR:?}" "${AMQ_BINARY_DIR:?}"
GUAVA_JAR=${AMQ_GUAVA_JAR:-/usr/share/java/guava.jar}
driver="$AMQ_BINARY_DIR/tests/guava_compat"
fail() { echo "guava_test: FAIL: $*" >&2; exit 1; }

for tool in java javac; do
  command -v "$tool" >/dev/null || fail "'$tool' not found: install default-jdk-headless (scripts/setup.sh does)"
done
[ -r "$GUAVA_JAR" ] || fail "$GUAVA_JAR not found: install libguava-java (scripts/setup.sh does)"
[ -x "$driver" ] || fail "$driver not built (cmake --build ... --target guava_compat)"

# Compile the Java side into the build dir when its source is newer than the classes.
src="$AMQ_SOURCE_DIR/tests/guava/GuavaCheck.java"
classes="$AMQ_BINARY_DIR/tests/guava-classes"
if [ ! -f "$classes/GuavaCheck.class" ] || [ "$src" -nt "$classes/GuavaCheck.class" ]; then
  staging=$(mktemp -d "$AMQ_BINARY_DIR/tests/guava-classes.XXXXXX")
  if ! javac -encoding UTF-8 -cp "$GUAVA_JAR" -d "$staging" "$src" 2>"$staging.log"; then
    cat "$staging.log" >&2
    rm -rf "$staging" "$staging.log"
    fail "javac failed on $src"
  fi
  rm -rf "$classes" "$staging.log"
  mv "$staging" "$classes"
fi
java_check() { java -Xshare:auto -cp "$classes:$GUAVA_JAR" GuavaCheck "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen="$work/guava" out="$work/amq" cli="$work/cli"
mkdir -p "$cli"

# 1-3: the library against Guava, both ways.
java_check gen "$gen"
AMQ_GUAVA_DIR="$gen" AMQ_GUAVA_OUT="$out" "$driver" --gtest_brief=1 || fail "amq differs from Guava (above)"
java_check check "$out" || fail "Guava answers amq-written filters differently (above)"

# 4: the CLI.
if [ -z "${AMQ_CLI:-}" ]; then
  echo "guava_test: amq and Guava agree; the CLI part is skipped (configured with AMQ_BUILD_TOOLS=OFF)"
  exit 0
fi
amq() { "$AMQ_CLI" "$@"; }
key_type() { case $1 in str) echo str ;; u64) echo u64 ;; bytes) echo hex ;; esac; }
n_cli=0
while IFS=$'\t' read -r name funnel strategy n fpp inserted linesafe _; do
  [ "$linesafe" = 1 ] || continue
  t=$(key_type "$funnel")
  yes="$gen/$name.probe.yes"
  expect_status=1
  [ -s "$yes" ] && expect_status=0
  for format in auto guava; do
    status=0
    amq query "$gen/$name.guava" --format "$format" --key-type "$t" <"$gen/$name.probe.lines" >"$cli/q" || status=$?
    [ "$status" = "$expect_status" ] || fail "amq query --format $format $name: exit status $status, expected $expect_status"
    cmp -s "$cli/q" "$yes" || fail "amq query --format $format on Guava's $name.guava does not print exactly the keys Guava answers true for"
  done
  count=$(amq query -c "$gen/$name.guava" --key-type "$t" <"$gen/$name.probe.lines" || true)
  [ "$count" = "$(wc -l <"$yes")" ] || fail "amq query -c $name: $count, Guava: $(wc -l <"$yes")"
  if [ "$strategy" = 1 ]; then
    amq build -t bloom --format guava -n "$n" -p "$fpp" --key-type "$t" -o "$cli/$name.guava" "$gen/$name.lines" ||
      fail "amq build $name"
    cmp "$cli/$name.guava" "$gen/$name.guava" ||
      fail "amq build --format guava -n $n -p $fpp ($name) is not byte-identical to Guava's file"
  fi
  n_cli=$((n_cli + 1))
done <"$gen/manifest.tsv"
[ "$n_cli" -ge 10 ] || fail "only $n_cli Guava filters checked through the CLI"

# A filter built from half the keys, then `amq add`-ed the rest (from stdin, with CRLF
# line ends), is Guava's filter of all of them.
name=str_n1000_default
head -n 500 "$gen/$name.lines" >"$cli/first"
tail -n +501 "$gen/$name.lines" | sed 's/$/\r/' >"$cli/rest"
amq build -t bloom --format guava -n 1000 -p 0.03 -o "$cli/added.guava" "$cli/first"
amq add "$cli/added.guava" <"$cli/rest"
cmp "$cli/added.guava" "$gen/$name.guava" || fail "amq build + amq add of $name is not Guava's file"

# Filters amq builds from keys Guava has never seen: Guava reads them and answers the
# probes exactly as `amq query` did; the amq container answers the same.
for t in str u64 hex; do
  f="$cli/fresh_$t.guava"
  amq build -t bloom --format guava -p 0.01 --key-type "$t" -o "$f" "$gen/fresh_$t.lines"
  amq query "$f" --key-type "$t" <"$gen/fresh_$t.probe.lines" >"$cli/fresh_$t.yes"
  java_check checklines "$f" "$t" "$gen/fresh_$t.probe.lines" "$cli/fresh_$t.yes" ||
    fail "Guava reads amq build's fresh_$t.guava differently"
  amq build -t bloom -p 0.01 --key-type "$t" -o "$cli/fresh_$t.amq" "$gen/fresh_$t.lines"
  amq query "$cli/fresh_$t.amq" --key-type "$t" <"$gen/fresh_$t.probe.lines" >"$cli/fresh_$t.amq.yes"
  cmp -s "$cli/fresh_$t.yes" "$cli/fresh_$t.amq.yes" || fail "amq and Guava formats of fresh_$t answer differently"
done
# ... and after `amq add` on a Guava file, 10x past its capacity.
head -n 300 "$gen/fresh_str.lines" >"$cli/few"
amq build -t bloom --format guava -p 0.02 -o "$cli/grown.guava" "$cli/few"
amq add "$cli/grown.guava" <"$gen/fresh_str.lines"
amq query "$cli/grown.guava" <"$gen/fresh_str.probe.lines" >"$cli/grown.yes" || true
java_check checklines "$cli/grown.guava" str "$gen/fresh_str.probe.lines" "$cli/grown.yes" ||
  fail "Guava reads the file amq add wrote differently"

echo "guava_test: amq and Guava agree ($n_cli Guava filters through the CLI)"
