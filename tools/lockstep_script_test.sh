#!/usr/bin/env bash
# Tests of the ./lockstep script's own functions, run by sourcing it (it then runs nothing):
#  - which package sets each command installs: `check` the base set alone (no ZooKeeper
#    server, no Java, no Chromium), the server set with the commands that start a server, the
#    browser set with `test` only, the profiler set (valgrind) with `test` and `bench`; the
#    server set is what real/server.h tells users to install;
#  - LOCKSTEP_JUNIT: run_ctest on a tiny ctest project (one passing test, one failing) writes a
#    JUnit report with those counts, and counts them in the totals; an unusable directory is a
#    clear error, exit 2;
#  - the profile-guided build: the first build trains a profile (an instrumented build of the
#    CLI, one `lockstep check` run), later ones reuse it, LOCKSTEP_PGO=0 builds without it, a
#    training run that could not finish makes no profile, and a bad LOCKSTEP_PGO is refused;
#    Clang's raw counts are merged (llvm-profdata of the compiler's version) and GCC's are not;
#    each compiler trains its own profile;
#  - the compilers: build/ is Clang 16's and the sanitizer build GCC's by default, their Debian
#    packages come with the base set, and a directory configured with another compiler is
#    configured afresh (CMake cannot switch in place);
#  - `./lockstep bench`'s summaries, from a stand-in lockstep_scale's JSON: the steady-state cost
#    per grant by size, its ratio and whether it is flat, the work per grant, and whether the
#    10,000- and 100,000-client runs met their targets.
# Usage: lockstep_script_test.sh PATH/TO/lockstep   (ctest runs it; label unit)
set -euo pipefail

SCRIPT=${1:?usage: lockstep_script_test.sh PATH/TO/lockstep}
FAILURES=0
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  FAILURES=$((FAILURES + 1))
}
expect_eq() {  # expect_eq WHAT WANT GOT
  [[ $2 == "$3" ]] || fail "$1: want '$2', got '$3'"
}

# The defaults, not the environment of whoever runs the test.
unset LOCKSTEP_CXX LOCKSTEP_ASAN_CXX
# shellcheck source=../lockstep
source "$SCRIPT"
# The script's own compiler_path, kept under another name for the cases below that stand in
# for it and then need the real one.
eval "real_$(declare -f compiler_path)"

# ---- package sets by need ----
sets() { package_sets "$@" | tr '\n' ' ' | sed 's/ $//'; }
expect_eq "check" "base" "$(sets check)"
expect_eq "check --json" "base" "$(sets check --json --seeds 5)"
expect_eq "check --real" "base server" "$(sets check --real --json)"
expect_eq "check --ensemble" "base server" "$(sets check --recipe fair-mutex --ensemble)"
expect_eq "test" "base server browser profiler" "$(sets test)"
expect_eq "bench" "base server profiler" "$(sets bench)"
expect_eq "conformance" "base server" "$(sets conformance --sequences 3)"
expect_eq "conformance --cases --sim-only" "base" "$(sets conformance --cases --sim-only)"
expect_eq "explore" "base" "$(sets explore --recipe fair-mutex)"
expect_eq "show --html" "base" "$(sets show t.trace --html t.html)"
expect_eq "no command" "base" "$(sets)"

# What `./lockstep check` installs holds no server, no Java and no browser.
check_wants=" $(wanted_packages check | tr '\n' ' ') "
for heavy in zookeeper libzookeeper-java default-jre default-jre-headless chromium valgrind; do
  [[ $check_wants != *" $heavy "* ]] || fail "./lockstep check would install $heavy:$check_wants"
done
test_wants=" $(wanted_packages test | tr '\n' ' ') "
for needed in cmake g++ clang-16 libclang-rt-16-dev llvm-16 libzookeeper-mt-dev libzookeeper-java chromium valgrind; do
  [[ $test_wants == *" $needed "* ]] || fail "./lockstep test would not install $needed:$test_wants"
done
for needed in clang-16 libclang-rt-16-dev llvm-16; do  # build/'s compiler, its profile's tools
  [[ $check_wants == *" $needed "* ]] || fail "./lockstep check would not install $needed:$check_wants"
done
expect_eq "the default compilers" "clang++-16 g++" "$CXX_NAME $ASAN_CXX_NAME"
packages_of() { compiler_packages "$1" | tr '\n' ' ' | sed 's/ $//'; }
expect_eq "clang++-16's packages" "clang-16 libclang-rt-16-dev llvm-16" "$(packages_of clang++-16)"
expect_eq "clang++'s packages" "clang libclang-rt-dev llvm" "$(packages_of clang++)"
expect_eq "g++-12's packages" "g++-12" "$(packages_of g++-12)"
expect_eq "g++'s packages (in the base set)" "" "$(packages_of g++)"
expect_eq "a compiler of the user's own" "" "$(packages_of /opt/cc/bin/c++)"
# A compiler is a command on PATH or a path; one that is not there says what to install.
expect_eq "compiler_path of a command" "$(command -v bash)" "$(compiler_path bash)"
status=0
message=$(compiler_path /nonexistent/c++ 2>&1) || status=$?
[[ $status -ne 0 && $message == *"no compiler '/nonexistent/c++' found"*"apt-get install clang-16 libclang-rt-16-dev llvm-16"* ]] ||
  fail "a missing compiler: status $status, '$message'"
expect_eq "LOCKSTEP_CXX=g++-12 installs it" "yes" \
  "$(CXX_NAME=g++-12 wanted_packages check | grep -qx g++-12 && echo yes || echo no)"

# real/server.h's install hint (what a missing server's message tells a user to run) names the
# packages of the server set, and the Java runtime the script installs with them.
hint=$(sed -n 's/^ *"\(apt-get install [^"]*\)";$/\1/p' "$(dirname "$SCRIPT")/real/server.h")
expect_eq "real/server.h kServerInstallCommand" \
  "apt-get install --no-install-recommends ${SERVER_PACKAGES[*]} $JAVA_PACKAGE" "$hint"

SCRATCH=$(mktemp -d /tmp/lockstep-script-test-XXXXXX)
trap 'rm -rf -- "$SCRATCH"' EXIT

# ---- the profile-guided build ----
# configure and build are stood in for (the instrumented build is a real compile of minutes;
# every CI run does it on a fresh clone): they record their arguments, and the "instrumented"
# lockstep is a script that records its own and writes a counter file as a profile would be.
(
  FAILURES=0
  BUILD="$SCRATCH/pgo-build"
  calls="$SCRATCH/pgo-calls"
  configure() { printf 'configure %s\n' "$*" >>"$calls"; }
  build() {
    printf 'build %s\n' "$*" >>"$calls"
    if [[ $1 == "$BUILD/pgo/train" ]]; then
      mkdir -p "$1/cli"
      printf '#!/bin/sh\necho "trainer $*" >>"%s"\necho "the trainer'"'"'s report"\necho "3 recipes, 21 scenarios"\nexit %s\n' \
        "$calls" "${TRAINER_STATUS:-1}" >"$1/cli/lockstep"
      chmod +x "$1/cli/lockstep"
    fi
  }
  # The compilers are stood in for too: a path for each name, a version line, and a merge that
  # records its arguments and writes the merged file.
  compiler_path() { echo "/usr/bin/$1"; }
  compiler_version() {
    case $1 in
      *clang*) echo "Debian clang version 16.0.6 (15~deb12u1)" ;;
      *) echo "g++ (Debian 12.2.0-14) 12.2.0" ;;
    esac
  }
  merge_profile() {
    printf 'merge %s %s\n' "$1" "$2" >>"$calls"
    : >"$2/lockstep.profdata"
  }
  # No profile yet: an instrumented build, one training run, the merge of its counts, then the
  # build reads the profile.
  PGO=1 PGO_SEEDS=7 CXX_NAME=clang++-16
  message=$(ensure_normal_build lockstep 2>&1 >/dev/null) ||
    fail "ensure_normal_build failed with a stand-in trainer"
  [[ $message == *"trained: 3 recipes, 21 scenarios (the run's report: $BUILD/pgo/train.log)"* ]] ||
    fail "the training's summary line is missing: $message"
  [[ $message != *"the trainer's report"* ]] || fail "the training run's report reached the terminal"
  grep -q "the trainer's report" "$BUILD/pgo/train.log" 2>/dev/null ||
    fail "the training run's report is not in $BUILD/pgo/train.log"
  name=$(cat "$BUILD/pgo/current" 2>/dev/null || true)
  [[ $name == profile-*-clang++-16 && -f $BUILD/pgo/$name/trained ]] ||
    fail "no trained profile of clang++-16 named in $BUILD/pgo/current: '$name'"
  expect_eq "the profile's compiler" "/usr/bin/clang++-16: Debian clang version 16.0.6 (15~deb12u1)" \
    "$(cat "$BUILD/pgo/$name/compiler" 2>/dev/null)"
  [[ -f $BUILD/pgo/$name/lockstep.profdata ]] || fail "the merged counts are not in $BUILD/pgo/$name"
  want="configure $BUILD/pgo/train -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 -DLOCKSTEP_PGO=generate -DLOCKSTEP_PGO_PROFILE=$BUILD/pgo/$name.part -DLOCKSTEP_REAL=OFF
build $BUILD/pgo/train lockstep
trainer check --seeds 7 --jobs 1 --no-traces
merge clang++-16 $BUILD/pgo/$name.part
configure $BUILD -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 -DLOCKSTEP_PGO=use -DLOCKSTEP_PGO_PROFILE=$BUILD/pgo/$name
build $BUILD lockstep"
  expect_eq "the first profile-guided build" "$want" "$(cat "$calls")"
  [[ ! -e $BUILD/pgo/$name.part ]] || fail "the partial profile $BUILD/pgo/$name.part was left behind"
  # (A correct recipe failing in the training run, status 1, still makes a profile.)

  # A profile there: no training, the same flags.
  : >"$calls"
  ensure_normal_build lockstep 2>/dev/null || fail "ensure_normal_build failed with a profile there"
  expect_eq "a later build" "configure $BUILD -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 -DLOCKSTEP_PGO=use -DLOCKSTEP_PGO_PROFILE=$BUILD/pgo/$name
build $BUILD lockstep" "$(cat "$calls")"

  # LOCKSTEP_PGO=0: a plain build, whatever profile there is.
  : >"$calls"
  PGO=0 ensure_normal_build 2>/dev/null || fail "ensure_normal_build failed with LOCKSTEP_PGO=0"
  expect_eq "LOCKSTEP_PGO=0" "configure $BUILD -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 -DLOCKSTEP_PGO=
build $BUILD" "$(cat "$calls")"

  # Another compiler does not read this one's profile: GCC trains its own (no merge: its counts
  # are read where the training wrote them).
  : >"$calls"
  CXX_NAME=g++ ensure_normal_build lockstep 2>/dev/null || fail "ensure_normal_build failed with g++"
  gname=$(cat "$BUILD/pgo/current" 2>/dev/null || true)
  [[ $gname == profile-*-g++ && $gname != "$name" ]] || fail "g++ did not train its own profile: '$gname'"
  want="configure $BUILD/pgo/train -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DLOCKSTEP_PGO=generate -DLOCKSTEP_PGO_PROFILE=$BUILD/pgo/$gname.part -DLOCKSTEP_REAL=OFF
build $BUILD/pgo/train lockstep
trainer check --seeds 7 --jobs 1 --no-traces
configure $BUILD -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DLOCKSTEP_PGO=use -DLOCKSTEP_PGO_PROFILE=$BUILD/pgo/$gname
build $BUILD lockstep"
  expect_eq "a build with g++" "$want" "$(cat "$calls")"
  # ... and back to Clang: the profile named last is GCC's, so Clang trains again.
  : >"$calls"
  ensure_normal_build lockstep 2>/dev/null || fail "ensure_normal_build failed back on clang++-16"
  [[ $(grep -c '^trainer ' "$calls" || true) -eq 1 ]] || fail "clang++-16 used g++'s profile"

  # A training run that could not finish (status 2 or more) makes no profile and fails the build.
  rm -rf -- "$BUILD/pgo"
  : >"$calls"
  status=0
  message=$(TRAINER_STATUS=3 ensure_normal_build lockstep 2>&1) || status=$?
  [[ $status -ne 0 ]] || fail "a failed training run did not fail the build"
  [[ $message == *"stopped with status 3 (its output: $BUILD/pgo/train.log); no profile was made"* ]] ||
    fail "unclear message for a failed training run: $message"
  [[ $message == *"the trainer's report"* ]] ||
    fail "a failed training run does not show the end of its output: $message"
  [[ ! -e $BUILD/pgo/current ]] || fail "a failed training run named a profile"
  [[ $(grep -c '^configure '"$BUILD"' ' "$calls" || true) -eq 0 ]] ||
    fail "the build was configured after a failed training run"

  # A compiler that is not there is refused, status 2, with what to install.
  status=0
  message=$(compiler_path() { real_compiler_path "$@"; }
    CXX_NAME=/nonexistent/c++ ensure_normal_build 2>&1) || status=$?
  expect_eq "exit status for a missing compiler" 2 "$status"
  [[ $message == *"no compiler '/nonexistent/c++' found"* ]] || fail "unclear message for a missing compiler: $message"

  # A value other than 0 or 1 is refused, status 2.
  status=0
  message=$(PGO=yes ensure_normal_build 2>&1) || status=$?
  expect_eq "exit status for LOCKSTEP_PGO=yes" 2 "$status"
  [[ $message == *"expected 1"*"or 0"* ]] || fail "unclear message for LOCKSTEP_PGO=yes: $message"
  exit "$FAILURES"
) || FAILURES=$((FAILURES + $?))

# ---- merging Clang's counts ----
(
  FAILURES=0
  dir="$SCRATCH/merge"
  bin="$SCRATCH/bin"
  mkdir -p "$dir" "$bin"
  status=0
  message=$(merge_profile clang++-99 "$dir" 2>&1) || status=$?
  [[ $status -ne 0 && $message == *"wrote no counts to $dir"* ]] ||
    fail "a training with no counts: status $status, '$message'"
  : >"$dir/default_1.profraw"
  : >"$dir/default_2.profraw"
  status=0
  message=$(PATH="$bin:/usr/bin:/bin" merge_profile clang++-99 "$dir" 2>&1) || status=$?
  [[ $status -ne 0 && $message == *"no llvm-profdata-99"*"apt-get install llvm-99"* ]] ||
    fail "no llvm-profdata: status $status, '$message'"
  # A stand-in llvm-profdata-99 records its arguments and writes the output it is asked for.
  printf '#!/bin/sh\necho "$*" >"%s/args"\n[ "$1" = merge ] && [ "$2" = -o ] && : >"$3"\nexit ${FAKE_STATUS:-0}\n' \
    "$SCRATCH" >"$bin/llvm-profdata-99"
  chmod +x "$bin/llvm-profdata-99"
  status=0
  message=$(FAKE_STATUS=1 PATH="$bin:$PATH" merge_profile clang++-99 "$dir" 2>&1) || status=$?
  [[ $status -ne 0 && $message == *"could not merge"* ]] || fail "a failed merge: status $status, '$message'"
  [[ -f $dir/default_1.profraw ]] || fail "a failed merge removed the counts"
  PATH="$bin:$PATH" merge_profile /usr/bin/clang++-99 "$dir" 2>/dev/null || fail "the merge failed"
  expect_eq "llvm-profdata's arguments" \
    "merge -o $dir/lockstep.profdata $dir/default_1.profraw $dir/default_2.profraw" \
    "$(cat "$SCRATCH/args" 2>/dev/null)"
  [[ -f $dir/lockstep.profdata ]] || fail "no merged profile"
  [[ ! -e $dir/default_1.profraw ]] || fail "the merged counts were left behind"
  exit "$FAILURES"
) || FAILURES=$((FAILURES + $?))

# ---- a directory configured with another compiler ----
(
  FAILURES=0
  bin="$SCRATCH/cmake-bin"
  mkdir -p "$bin"
  # A stand-in cmake: like CMake, it keeps the compiler a cache already has, whatever it is
  # asked for (the real one would stop or warn); it records the compiler it configured with.
  cat >"$bin/cmake" <<'EOF2'
#!/usr/bin/env bash
dir= cxx=
while [[ $# -gt 0 ]]; do
  case $1 in
    -B) dir=$2; shift ;;
    -DCMAKE_CXX_COMPILER=*) cxx=${1#-DCMAKE_CXX_COMPILER=} ;;
  esac
  shift
done
mkdir -p "$dir/CMakeFiles"
[[ -f $dir/CMakeCache.txt ]] || echo "CMAKE_CXX_COMPILER:FILEPATH=$cxx" >"$dir/CMakeCache.txt"
touch "$dir/build.ninja" "$dir/CMakeFiles/kept"
EOF2
  chmod +x "$bin/cmake"
  dir="$SCRATCH/switch"
  PATH="$bin:$PATH" configure "$dir" -DCMAKE_CXX_COMPILER=/usr/bin/g++ 2>/dev/null
  expect_eq "the first compiler" "CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/g++" "$(cat "$dir/CMakeCache.txt")"
  message=$(PATH="$bin:$PATH" configure "$dir" -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 2>&1)
  expect_eq "another compiler" "CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/clang++-16" "$(cat "$dir/CMakeCache.txt")"
  [[ $message == *"configured with /usr/bin/g++: configuring it afresh with /usr/bin/clang++-16"* ]] ||
    fail "no word of the fresh configure: '$message'"
  # The same compiler with other arguments keeps its cache.
  touch "$dir/CMakeFiles/marker"
  PATH="$bin:$PATH" configure "$dir" -DCMAKE_CXX_COMPILER=/usr/bin/clang++-16 -DLOCKSTEP_PGO= 2>/dev/null
  [[ -f $dir/CMakeFiles/marker ]] || fail "the same compiler's cache was dropped"
  exit "$FAILURES"
) || FAILURES=$((FAILURES + $?))

# ---- JUnit reports ----
mkdir -p "$SCRATCH/src"
cat >"$SCRATCH/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.21)
project(tiny NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME fails COMMAND false)
EOF
cmake -S "$SCRATCH/src" -B "$SCRATCH/build" -G Ninja >"$SCRATCH/configure.log" 2>&1 ||
  { cat "$SCRATCH/configure.log" >&2; fail "the tiny ctest project did not configure"; }

LOCKSTEP_JUNIT="$SCRATCH/reports/nested"
junit=$(junit_dir)
[[ -d $junit ]] || fail "junit_dir did not create $LOCKSTEP_JUNIT"
TOTAL_PASSED=0 TOTAL_FAILED=0 TOTAL_SKIPPED=0
run_ctest "tiny" "$SCRATCH/build" "$junit/tiny.xml" >"$SCRATCH/run.log" 2>&1
expect_eq "passed count" 1 "$TOTAL_PASSED"
expect_eq "failed count" 1 "$TOTAL_FAILED"
xml="$junit/tiny.xml"
if [[ ! -s $xml ]]; then
  fail "run_ctest wrote no JUnit report at $xml"
else
  # ctest puts each attribute on its own line: read the report as one line.
  flat=$(tr '\n\t' '  ' <"$xml")
  head_tag=$(grep -o '<testsuite [^>]*>' <<<"$flat" | head -n 1)
  [[ $head_tag == *' tests="2"'* ]] || fail "the report does not count 2 tests: $head_tag"
  [[ $head_tag == *' failures="1"'* ]] || fail "the report does not count 1 failure: $head_tag"
  [[ $flat == *'<testcase name="passes" '*'status="run"'* ]] || fail "the report lacks 'passes' as run"
  [[ $flat == *'<testcase name="fails" '*'status="fail"'* ]] || fail "the report lacks 'fails' as failed"
  [[ $(grep -c '<failure' "$xml") -eq 1 ]] || fail "the report should hold exactly one <failure>"
  [[ $flat =~ \</testsuite\>[[:space:]]*$ ]] || fail "the report does not end with </testsuite>"
  if command -v python3 >/dev/null 2>&1; then  # a full parse where Python is there
    python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$xml" ||
      fail "the report is not well-formed XML"
  fi
fi

# An unusable LOCKSTEP_JUNIT stops with status 2 and says what to do.
touch "$SCRATCH/a-file"
status=0
message=$(LOCKSTEP_JUNIT="$SCRATCH/a-file/reports" junit_dir 2>&1) || status=$?
expect_eq "exit status for an unusable LOCKSTEP_JUNIT" 2 "$status"
[[ $message == *"cannot create or write"* ]] || fail "unclear message for a bad LOCKSTEP_JUNIT: $message"

# ---- ./lockstep bench's summaries, read from lockstep_scale's JSON ----
# A stand-in lockstep_scale that answers each size with a made-up run: the fair lock costs 5 us
# per grant at 100 clients, 6 at 1,000 and 6 at 10,000 (flat within 1.25x), or, with STEEP set,
# 12 at 10,000 (not flat); the naive lock 100 and 1,000.
BENCH_BUILD="$SCRATCH/bench-build"
mkdir -p "$BENCH_BUILD/bench"
cat >"$BENCH_BUILD/bench/lockstep_scale" <<'STUB'
#!/usr/bin/env bash
recipe="" clients=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --recipe) recipe=$2; shift ;;
    --clients) clients=$2; shift ;;
  esac
  shift
done
case $recipe:$clients in
  fair-mutex:100) cost=5 events=1810 ;;
  fair-mutex:1000) cost=6 events=1815 ;;
  fair-mutex:10000) cost=6 events=1830; [[ -z ${STEEP:-} ]] || cost=12 ;;
  naive-mutex:100) cost=100 events=52800 ;;
  naive-mutex:1000) cost=1000 events=429900 ;;
esac
printf '{"clients":%d,"events":%d,"grants":100,"recipe":"%s","requests":501,"steady_cpu_us_per_grant":%s}\n' \
  "$clients" "$events" "$recipe" "$cost"
STUB
chmod +x "$BENCH_BUILD/bench/lockstep_scale"
expect_eq "json_field" "12.5" "$(json_field cpu_s '{"clients":10,"cpu_s":12.5,"wall_s":13}')"
expect_eq "json_field, last key" "true" "$(json_field complete '{"a":1,"complete":true}')"
expect_eq "json_field, a key that is the tail of another" "2" "$(json_field s '{"cpu_s":1,"s":2}')"
steady=$(BUILD=$BENCH_BUILD steady_state)
expect_eq "steady state, flat" \
  "fair-mutex   steady state, CPU-us per grant: 100 clients 5.00, 1000 clients 6.00, 10000 clients 6.00: 1.20x (target: flat, within 1.25x): met" \
  "$(sed -n 1p <<<"$steady")"
expect_eq "steady state, work per grant" \
  "fair-mutex   work per grant: 100 clients 18.1 events, 5.01 requests; 1000 clients 18.1 events, 5.01 requests; 10000 clients 18.3 events, 5.01 requests" \
  "$(sed -n 2p <<<"$steady")"
expect_eq "steady state, the naive lock" \
  "naive-mutex  steady state, CPU-us per grant: 100 clients 100.00, 1000 clients 1000.00: 10.00x" \
  "$(sed -n 3p <<<"$steady")"
steady=$(STEEP=1 BUILD=$BENCH_BUILD steady_state)
[[ $(sed -n 1p <<<"$steady") == *"10000 clients 12.00: 2.40x (target: flat, within 1.25x): not flat" ]] ||
  fail "a cost per grant 2.4x higher at 10,000 clients is not called 'not flat': $steady"
cat >"$BENCH_BUILD/bench/scale.jsonl" <<'ROWS'
{"clients":10000,"complete":true,"cpu_s":0.7,"peak_rss_mib":85.6,"recipe":"fair-mutex"}
{"clients":10000,"complete":false,"cpu_s":120,"peak_rss_mib":84.1,"recipe":"naive-mutex"}
{"clients":100000,"complete":true,"cpu_s":10.3,"peak_rss_mib":799.3,"recipe":"fair-mutex"}
ROWS
targets=$(BUILD=$BENCH_BUILD scale_targets)
expect_eq "scale targets" \
  "fair mutex, 10,000 clients x 3 rounds: 0.70 CPU s, 85.6 MiB (target: under 10 s and 1 GiB): met
fair mutex, 100,000 clients x 3 rounds: ran to the end, 799.3 MiB (target: to the end under 8 GiB): met" \
  "$targets"
sed -i 's/"clients":100000,"complete":true,"cpu_s":10.3,"peak_rss_mib":799.3/"clients":100000,"complete":false,"cpu_s":120,"peak_rss_mib":9000/' \
  "$BENCH_BUILD/bench/scale.jsonl"
[[ $(BUILD=$BENCH_BUILD scale_targets | sed -n 2p) == *"stopped early, 9000.0 MiB"*": short" ]] ||
  fail "a 100,000-client run that stopped early is not called short: $(BUILD=$BENCH_BUILD scale_targets)"

if [[ $FAILURES -ne 0 ]]; then
  printf '%d check(s) failed; run.log:\n' "$FAILURES" >&2
  cat "$SCRATCH/run.log" >&2 || true
  exit 1
fi
echo "lockstep_script_test: every check passed"
