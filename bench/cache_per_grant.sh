#!/usr/bin/env bash
# The cost of a grant in instructions and cache misses, counted by cachegrind's cache simulator
# rather than timed: the same binary and arguments give the same figures on any machine and at
# any moment, where this machine's CPU time per grant moves by 15% from one run to the next and
# by 2x from one day to another. Issue "Scale" asks the fair lock's cost per grant to stay flat
# from 100 to 10,000 clients; its instructions per grant are flat and its time is not, and these
# figures say how many of a grant's loads and stores miss the caches at each size.
#
# For each number of clients N it runs build/bench/lockstep_scale twice under cachegrind, with W
# and W+D rounds (D = enough rounds for --grants measured grants, W = max(3, D) warm-up rounds),
# both at once, and divides the difference of the two runs' totals by the D x N grants between
# them: start-up and teardown cancel out, as in lockstep_scale --warmup-rounds.
#
# The simulated caches are this machine's first-level data cache and last-level cache, read from
# /sys (cachegrind's own detection reads a VM's CPUID and can get them wrong); --D1 and --LL set
# them (size,associativity,line size in bytes), e.g. --LL 1048576,8,64 to model a 1 MiB
# second-level cache as the last level.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCALE=${LOCKSTEP_BUILD_DIR:-$ROOT/build}/bench/lockstep_scale
RECIPE=fair-mutex
CLIENTS="100 10000"
GRANTS=10000
D1="" LL="" LEVEL=last

usage() {
  cat <<'EOF'
usage: bench/cache_per_grant.sh [flags]

Instructions and simulated cache misses per grant (cachegrind), at each number of clients.

flags:
  --scale PATH     the lockstep_scale binary (default build/bench/lockstep_scale)
  --recipe R       the registry recipe (default fair-mutex)
  --clients "N.."  the numbers of clients, in quotes (default "100 10000")
  --grants G       grants measured at each size, at least (default 10000)
  --D1 S,A,L       the simulated first-level data cache: size, associativity, line (bytes)
  --LL S,A,L       the simulated last-level cache (default for both: this machine's, from /sys)
  --level N        simulate this machine's level-N cache (from /sys) as the last level, e.g. 2
                   for the second-level cache; with --LL, --LL wins

output: one line per size: clients, rounds (warm-up + measured), grants measured, and per grant
instructions, first-level data misses and last-level data misses (reads + writes); then the
largest size's figures over the smallest's.
exit: 0; 1 when a run fails; 2 for a usage error or a missing tool
EOF
}

die_usage() {
  printf 'cache_per_grant: %s\n' "$1" >&2
  printf 'run bench/cache_per_grant.sh --help for the flags\n' >&2
  exit 2
}

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
is_cache() { [[ $1 =~ ^[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$ ]]; }

while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --scale | --recipe | --clients | --grants | --D1 | --LL | --level)
      [[ $# -ge 2 ]] || die_usage "$1 needs a value"
      case $1 in
        --scale) SCALE=$2 ;;
        --recipe) RECIPE=$2 ;;
        --clients) CLIENTS=$2 ;;
        --grants) GRANTS=$2 ;;
        --D1) D1=$2 ;;
        --LL) LL=$2 ;;
        --level) LEVEL=$2 ;;
      esac
      shift 2
      ;;
    *) die_usage "unknown flag '$1'" ;;
  esac
done

is_count "$GRANTS" || die_usage "--grants wants a positive whole number, not '$GRANTS'"
[[ -n ${CLIENTS// /} ]] || die_usage "--clients wants at least one number of clients"
for n in $CLIENTS; do
  is_count "$n" || die_usage "--clients wants positive whole numbers, not '$n'"
done
[[ -x $SCALE ]] || die_usage "no lockstep_scale at $SCALE (build it: ninja -C build lockstep_scale; or give --scale PATH)"
command -v valgrind >/dev/null 2>&1 ||
  die_usage "valgrind is not installed (Debian: apt-get install valgrind; ./lockstep bench installs it)"

# A cache level from /sys as cachegrind wants it (size,assoc,line), or nothing when /sys does not
# say. LEVEL and TYPE pick the index: 1 Data for the first-level data cache; the highest level
# for the last.
sys_cache() {  # sys_cache LEVEL TYPE
  local dir best="" level type size ways line
  for dir in /sys/devices/system/cpu/cpu0/cache/index*; do
    [[ -r $dir/level && -r $dir/type && -r $dir/size ]] || continue
    level=$(<"$dir/level") type=$(<"$dir/type")
    [[ $type == "$2" ]] || continue
    [[ $1 == last || $level == "$1" ]] || continue
    size=$(<"$dir/size") ways=$(<"$dir/ways_of_associativity") line=$(<"$dir/coherency_line_size")
    case $size in
      *K) size=$((${size%K} * 1024)) ;;
      *M) size=$((${size%M} * 1024 * 1024)) ;;
    esac
    best="$size,$ways,$line"
  done
  printf '%s' "$best"
}
[[ -n $D1 ]] || D1=$(sys_cache 1 Data)
[[ $LEVEL == last || $LEVEL =~ ^[2-9]$ ]] || die_usage "--level wants a cache level from 2 up, not '$LEVEL'"
if [[ -z $LL ]]; then
  LL=$(sys_cache "$LEVEL" Unified)
  [[ -n $LL || $LEVEL == last ]] ||
    die_usage "this machine's /sys/devices/system/cpu/cpu0/cache names no level-$LEVEL cache: give --LL size,associativity,line"
fi
[[ -n $D1 ]] || D1=32768,8,64
[[ -n $LL ]] || LL=33554432,16,64
is_cache "$D1" || die_usage "--D1 wants size,associativity,line in bytes (e.g. 32768,8,64), not '$D1'"
is_cache "$LL" || die_usage "--LL wants size,associativity,line in bytes (e.g. 33554432,16,64), not '$LL'"

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
# Valgrind 3.19 (Debian 12) cannot read Clang 16's DWARF 5 and gives up on the binary: run a copy
# without the debug sections (the totals need no symbols).
BINARY="$SCRATCH/lockstep_scale"
if ! strip --strip-debug -o "$BINARY" "$SCALE" 2>"$SCRATCH/strip.log"; then
  printf 'cache_per_grant: could not copy %s without its debug sections:\n' "$SCALE" >&2
  cat "$SCRATCH/strip.log" >&2
  exit 2
fi

# The totals of a cachegrind output file, in its events' order (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw).
totals() { awk '/^summary:/ { $1 = ""; print substr($0, 2) }' "$1"; }

# One run under cachegrind: its totals go to FILE.totals, lockstep_scale's JSON to FILE.json.
run_one() {  # run_one FILE CLIENTS ROUNDS
  if ! valgrind --tool=cachegrind --cache-sim=yes --D1="$D1" --LL="$LL" \
    --cachegrind-out-file="$1.out" "$BINARY" --recipe "$RECIPE" --clients "$2" --rounds "$3" \
    --json >"$1.json" 2>"$1.log"; then
    printf 'cache_per_grant: lockstep_scale --recipe %s --clients %s --rounds %s failed under cachegrind:\n' \
      "$RECIPE" "$2" "$3" >&2
    tail -n 20 "$1.log" >&2
    return 1
  fi
  if ! grep -q '"complete":true' "$1.json"; then
    printf 'cache_per_grant: lockstep_scale --recipe %s --clients %s --rounds %s did not complete: %s\n' \
      "$RECIPE" "$2" "$3" "$(cat "$1.json")" >&2
    return 1
  fi
  totals "$1.out" >"$1.totals"
}

printf 'instructions and data-cache misses per grant, simulated by cachegrind (D1 %s, LL %s: size, ways, line): %s\n' \
  "$D1" "$LL" "$RECIPE"
printf '%8s %22s %10s %14s %12s %26s\n' clients "rounds (warm-up + D)" grants instructions "D1 misses" "LL misses (reads + writes)"
n0="" # the smallest size's figures, for the ratio line
for n in $CLIENTS; do
  measured=$(((GRANTS + n - 1) / n))
  warm=$((measured > 3 ? measured : 3))
  run_one "$SCRATCH/a$n" "$n" "$warm" &
  a=$!
  run_one "$SCRATCH/b$n" "$n" $((warm + measured)) &
  b=$!
  status=0
  wait "$a" || status=1
  wait "$b" || status=1
  [[ $status -eq 0 ]] || exit 1
  line=$(paste -d' ' "$SCRATCH/a$n.totals" "$SCRATCH/b$n.totals" | awk -v g=$((measured * n)) '{
    # the first nine fields are the shorter run totals, the next nine the longer one
    for (i = 1; i <= 9; ++i) d[i] = ($(i + 9) - $i) / g
    printf "%.1f %.2f %.2f %.2f %.2f", d[1], d[5] + d[8], d[6] + d[9], d[6], d[9] }')
  read -r ir d1 ll llr llw <<<"$line"
  printf '%8d %22s %10d %14.0f %12.2f %26s\n' "$n" "$warm + $measured" $((measured * n)) "$ir" "$d1" \
    "$(printf '%.2f (%.2f + %.2f)' "$ll" "$llr" "$llw")"
  [[ -n $n0 ]] || { n0=$n ir0=$ir d10=$d1 ll0=$ll; }
done
if [[ $n != "$n0" ]]; then
  awk -v n0="$n0" -v n1="$n" -v i0="$ir0" -v i1="$ir" -v a0="$d10" -v a1="$d1" -v l0="$ll0" -v l1="$ll" 'BEGIN {
    printf "%d clients over %d: instructions %.2fx, D1 misses %.2fx, LL misses ", n1, n0, i1 / i0, a1 / a0
    if (l0 > 0) printf "%.1fx\n", l1 / l0; else printf "%.2f more per grant\n", l1 - l0 }'
fi
