#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds projects outside amq against it
# (tests/consumer): the full consumer once with CMake's find_package(amq) and amq::amq,
# once with plain `c++ $(pkg-config --cflags --libs amq)`; then a Bloom-filter program
# with amq::core alone, through find_package(amq COMPONENTS core) and `pkg-config
# amq-core`, whose link lines must name neither libcrypto nor hiredis and whose binaries
# must need neither (readelf -d, ldd). Every program must run and pass. Under the
# sanitizer build the library needs the sanitizer runtimes, so the consumers are
# compiled and linked with -fsanitize=address,undefined too.
# The installed amq tool is checked to be thin (no benchmark or test code, no
# std::system) and to find amq-bench.
set -euo pipefail
: "${AMQ_SOURCE_DIR:?}" "${AMQ_BINARY_DIR:?}"
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$AMQ_BINARY_DIR" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install"; }

# What a user finds in the prefix.
for f in include/amq/bloom_filter.hpp include/amq/any_set.hpp include/amq/detail/byte_io.hpp; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
config=$(find "$prefix" -name amqConfig.cmake -print -quit)
pc=$(find "$prefix" -name amq.pc -print -quit)
[ -n "$config" ] || fail "amqConfig.cmake not installed"
[ -n "$pc" ] || fail "amq.pc not installed"
for c in core redis store formats; do
  [ -n "$(find "$prefix" -name "libamq_$c.*" -print -quit)" ] || fail "libamq_$c not installed"
  [ -f "$(dirname "$pc")/amq-$c.pc" ] || fail "amq-$c.pc not installed"
done
lib=$(find "$prefix" -name 'libamq_core.*' -print -quit)
if [ -n "${AMQ_CLI:-}" ]; then
  [ -x "$prefix/bin/amq" ] || fail "bin/amq not installed"
  "$prefix/bin/amq" --version >/dev/null || fail "the installed amq does not run"
  # The tool is thin: no benchmark, GoogleTest or test-support code, and no shell. (The
  # symbol table must be there for this to mean anything: the CLI's own symbols are.)
  syms=$(nm -C "$prefix/bin/amq") || fail "nm -C bin/amq"
  grep -q 'amq::cli::escape_text' <<< "$syms" || fail "nm -C bin/amq shows no amq::cli symbols (stripped?)"
  for ns in 'benchmark::' 'testing::' 'amq::test::' 'amq::bench::'; do
    if grep -qF "$ns" <<< "$syms"; then fail "bin/amq has $ns symbols: $(grep -F "$ns" <<< "$syms" | head -3)"; fi
  done
  imports=$(nm -D --undefined-only "$prefix/bin/amq" | awk '{print $NF}' | sed 's/@.*//')
  for f in system popen; do
    if grep -qx "$f" <<< "$imports"; then fail "bin/amq imports $f"; fi
  done
  # amq bench runs amq-bench, installed beside it; without it, one clear error line.
  [ -x "$prefix/bin/amq-bench" ] || fail "bin/amq-bench not installed"
  families=$("$prefix/bin/amq" bench --list) || fail "the installed amq bench --list failed"
  grep -qx 'bloom-family' <<< "$families" || fail "amq bench --list: no bloom-family in: $families"
  mkdir "$prefix/alone" && cp "$prefix/bin/amq" "$prefix/alone/amq"  # (../lib still holds a shared libamq)
  set +e
  out=$(PATH=/nonexistent "$prefix/alone/amq" bench --list 2>&1)
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "amq bench without amq-bench: exit status $rc, not 2"
  [ "$out" = "amq: amq-bench is not installed: it is built and installed with amq (AMQ_BUILD_TOOLS=ON), beside it or on PATH" ] ||
    fail "amq bench without amq-bench: said: $out"
fi
echo "install_test: installed $(realpath --relative-to="$prefix" "$lib"), $(realpath --relative-to="$prefix" "$config"), $(realpath --relative-to="$prefix" "$pc")"

san=""
case "${AMQ_SANITIZE:-OFF}" in
  ON | on | 1 | TRUE | true | YES | yes) san="-fsanitize=address,undefined" ;;
esac

# 1. CMake: find_package(amq) through CMAKE_PREFIX_PATH only.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$AMQ_SOURCE_DIR/tests/consumer" -B "$tmp/cmake-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; fail "configuring the consumer (find_package(amq))"; }
found=$(sed -n 's/^amq_DIR:PATH=//p' "$tmp/cmake-build/CMakeCache.txt")
[ "$(realpath "$found")" = "$(realpath "$(dirname "$config")")" ] ||
  fail "find_package(amq) found $found, not the package installed in $prefix"
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; fail "building the consumer against amq::amq"; }
"$tmp/cmake-build/consumer" || fail "the CMake consumer failed"

# 2. pkg-config, from the relocated prefix.
export PKG_CONFIG_PATH
PKG_CONFIG_PATH="$(dirname "$pc")"
flags=$(pkg-config --cflags --libs amq) || fail "pkg-config --cflags --libs amq"
case "$flags" in *"$prefix"*) ;; *) fail "pkg-config flags do not point into $prefix: $flags" ;; esac
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 $san "$AMQ_SOURCE_DIR/tests/consumer/main.cpp" -o "$tmp/consumer-pc" $flags ||
  fail "compiling the consumer with: c++ -std=c++20 $san main.cpp $flags"
# (LD_LIBRARY_PATH: pkg-config gives no rpath, for shared amq libraries in a scratch prefix.)
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer-pc" ||
  fail "the pkg-config consumer failed"
echo "install_test: CMake and pkg-config consumers built and ran${san:+ (with $san)}"

# 3. amq::core alone: a Bloom filter without libcrypto or hiredis.
# The binary's needs, direct (readelf -d) and through the libraries it loads (ldd).
needs_neither() {  # BINARY WHAT
  local needed
  needed=$(readelf -d "$1" | grep NEEDED) || fail "readelf -d $1"
  case "$needed" in *libcrypto* | *libhiredis* | *libamq_formats* | *libamq_redis* | *libamq_store*)
    fail "$2 needs more than amq::core: $needed" ;;
  esac
  needed=$(LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$1") || fail "ldd $1"
  case "$needed" in *libcrypto* | *libhiredis*) fail "$2 loads libcrypto or hiredis: $needed" ;; esac
}
cmake -S "$AMQ_SOURCE_DIR/tests/consumer" -B "$tmp/core-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DAMQ_CONSUMER_CORE=ON -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
  >"$tmp/core-configure.log" 2>&1 ||
  { cat "$tmp/core-configure.log" >&2; fail "configuring the consumer (find_package(amq COMPONENTS core))"; }
# Only core's dependencies were looked for: nothing of OpenSSL's or hiredis's is cached.
if grep -iE '^[^#]*(openssl|hiredis)' "$tmp/core-build/CMakeCache.txt" >"$tmp/core-cache.txt"; then
  cat "$tmp/core-cache.txt" >&2
  fail "find_package(amq COMPONENTS core) looked for OpenSSL or hiredis"
fi
cmake --build "$tmp/core-build" --verbose >"$tmp/core-build.log" 2>&1 ||
  { cat "$tmp/core-build.log" >&2; fail "building the consumer against amq::core"; }
link=$(grep -E -- '-o [^ ]*consumer_core( |$)' "$tmp/core-build.log") || fail "no link line for consumer_core in the build log"
case "$link" in *crypto* | *hiredis* | *amq_formats* | *amq_redis* | *amq_store*)
  fail "the amq::core consumer's link line names more than amq::core: $link" ;;
esac
needs_neither "$tmp/core-build/consumer_core" "the CMake amq::core consumer"
"$tmp/core-build/consumer_core" || fail "the CMake amq::core consumer failed"

flags=$(pkg-config --cflags --libs amq-core) || fail "pkg-config --cflags --libs amq-core"
case "$flags" in *crypto* | *hiredis* | *amq_formats* | *amq_redis* | *amq_store*)
  fail "pkg-config amq-core names more than amq-core: $flags" ;;
esac
# shellcheck disable=SC2086  # the flags are words
c++ -std=c++20 $san "$AMQ_SOURCE_DIR/tests/consumer/core_main.cpp" -o "$tmp/consumer-core-pc" $flags ||
  fail "compiling the amq::core consumer with: c++ -std=c++20 $san core_main.cpp $flags"
needs_neither "$tmp/consumer-core-pc" "the pkg-config amq-core consumer"
LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/consumer-core-pc" ||
  fail "the pkg-config amq-core consumer failed"
echo "install_test: amq::core consumers (CMake, pkg-config) built and ran, needing neither libcrypto nor hiredis${san:+ (with $san)}"
