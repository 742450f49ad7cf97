#!/usr/bin/env bash
# Tests of bench/cache_per_grant.sh on a small run (10 and 40 clients, 80 grants measured):
#  - one row per size, with the rounds it chose, the grants measured and figures above zero, and
#    the ratio line of the largest size over the smallest;
#  - the figures are the same in a second run, to within 0.5% (they are counted, not timed: that
#    is their use);
#  - the caches given are the caches simulated;
#  - a bad flag, a bad number and a missing binary are usage errors (exit 2) that say what to do.
# Usage: cache_per_grant_test.sh PATH/TO/cache_per_grant.sh PATH/TO/lockstep_scale
set -euo pipefail

SCRIPT=${1:?usage: cache_per_grant_test.sh SCRIPT LOCKSTEP_SCALE}
SCALE=${2:?usage: cache_per_grant_test.sh SCRIPT LOCKSTEP_SCALE}
FAILURES=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  FAILURES=$((FAILURES + 1))
}

run() { bash "$SCRIPT" --scale "$SCALE" --clients "10 40" --grants 80 "$@"; }

first=$(run --D1 32768,8,64 --LL 1048576,8,64) || fail "the small run failed: $first"
printf '%s\n' "$first"
[[ $(sed -n 1p <<<"$first") == *"(D1 32768,8,64, LL 1048576,8,64: size, ways, line): fair-mutex" ]] ||
  fail "the heading does not name the caches given: $(sed -n 1p <<<"$first")"
# 10 clients: 8 rounds measured (80 grants), 8 of warm-up; 40 clients: 2 measured, 3 of warm-up.
row10=$(awk '$1 == 10' <<<"$first")
row40=$(awk '$1 == 40' <<<"$first")
[[ $row10 =~ ^\ +10\ +8\ \+\ 8\ +80\ +([0-9]+)\ +([0-9.]+)\ +([0-9.]+)\ \( ]] ||
  fail "the 10-client row is not as expected: '$row10'"
ir10=${BASH_REMATCH[1]:-0}
d1_10=${BASH_REMATCH[2]:-0}
[[ $row40 =~ ^\ +40\ +3\ \+\ 2\ +80\ +([0-9]+)\ +([0-9.]+) ]] ||
  fail "the 40-client row is not as expected: '$row40'"
# A grant of the fair lock is thousands of instructions and some hundreds of first-level misses.
((ir10 > 5000 && ir10 < 500000)) || fail "instructions per grant out of any plausible range: $ir10"
awk -v d="$d1_10" 'BEGIN { exit !(d > 10) }' || fail "first-level misses per grant implausibly low: $d1_10"
[[ $(tail -n 1 <<<"$first") =~ ^40\ clients\ over\ 10:\ instructions\ [0-9.]+x,\ D1\ misses\ [0-9.]+x,\ LL\ misses ]] ||
  fail "no ratio line: $(tail -n 1 <<<"$first")"

# The same figures in a second run, to within 0.5%: they are counted, not timed. (Not to the
# last digit: lockstep_scale also prints its wall and CPU time, and printing different numbers
# takes a few instructions more or less.)
second=$(run --D1 32768,8,64 --LL 1048576,8,64) || fail "the second small run failed"
for n in 10 40; do
  a=$(awk -v n="$n" '$1 == n { print $6, $7, $8 }' <<<"$first")
  b=$(awk -v n="$n" '$1 == n { print $6, $7, $8 }' <<<"$second")
  awk -v a="$a" -v b="$b" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= 3; ++i) {
      d = x[i] - y[i]; if (d < 0) d = -d
      if (x[i] == "" || d > 0.005 * x[i] + 0.01) exit 1
    }
  }' || fail "the $n-client figures changed from one run to the next: '$a' then '$b'"
done

# A smaller last-level cache misses at least as often (the simulation follows the caches given).
small=$(run --D1 32768,8,64 --LL 65536,4,64) || fail "the run with a 64 KiB last level failed"
ll_big=$(awk '$1 == 40 { print $(NF - 3) }' <<<"$first")
ll_small=$(awk '$1 == 40 { print $(NF - 3) }' <<<"$small")
awk -v a="$ll_big" -v b="$ll_small" 'BEGIN { exit !(b > a) }' ||
  fail "a 64 KiB last level did not miss more than a 1 MiB one ($ll_small against $ll_big per grant)"

usage_error() {  # usage_error WHAT WANT-IN-MESSAGE ARGS...
  local what=$1 want=$2 status=0 message
  shift 2
  message=$(bash "$SCRIPT" "$@" 2>&1) || status=$?
  [[ $status -eq 2 ]] || fail "$what: exit status $status, want 2"
  [[ $message == *"$want"* ]] || fail "$what: the message does not say '$want': $message"
}
usage_error "an unknown flag" "unknown flag '--bogus'" --scale "$SCALE" --bogus
usage_error "a bad --grants" "--grants wants a positive whole number, not 'many'" --scale "$SCALE" --grants many
usage_error "a bad --clients" "--clients wants positive whole numbers, not '0'" --scale "$SCALE" --clients "10 0"
usage_error "a bad --LL" "--LL wants size,associativity,line" --scale "$SCALE" --LL 1M
usage_error "a missing binary" "no lockstep_scale at /nonexistent" --scale /nonexistent/lockstep_scale
usage_error "a flag without its value" "--recipe needs a value" --scale "$SCALE" --recipe
usage_error "a bad --level" "--level wants a cache level from 2 up, not '1'" --scale "$SCALE" --level 1

if [[ $FAILURES -ne 0 ]]; then
  printf '%d check(s) failed\n' "$FAILURES" >&2
  exit 1
fi
echo "cache_per_grant_test: every check passed"
