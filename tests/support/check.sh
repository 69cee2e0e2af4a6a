# Sourced by the script tests (tests/*_test.sh): `check NAME EXPECTED ACTUAL` counts a
# check as passed when ACTUAL is EXPECTED, and `finish` prints the tally ctest reads
# ("N passed, M failed") and returns non-zero if any check failed.
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
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
