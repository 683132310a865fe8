#!/usr/bin/env bash
# The sanitizer suites, run by CI after the README's test command:
#   asan  the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan  concurrency-heavy suites under ThreadSanitizer: the hot path with
#         many threads, retiring threads and re-selection while threads run,
#         the I/O interposers with many threads, the sampler, the analyzer
#         (in-process and between servers), the peer transport and its fallback
# usage: tools/test-sanitizers.sh [asan] [tsan]      (both when none is named)
#        tools/test-sanitizers.sh --build-only asan|tsan
#
# Every report fails the run, including one written by a child process whose
# exit status no test looks at: the sanitizers log to files, which are read
# after the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${LIMPWATCH_JOBS:-$(nproc)}

# Tests a sanitizer cannot run by its nature, each with its reason; nothing else
# is left out.
asan_exclusions=(
  # Build a program outside the tree against the installed, sanitized library:
  # a program not linked with the sanitizer's runtime cannot load it.
  '^packaging$'
  '^packaging_autotools$'
  # Checks glibc malloc's mmap threshold, and the sanitizer replaces malloc.
  '^SamplerTest\.LoadingTheKernelsSymbolsLeavesTheProgramsMallocAlone$'
  # Checks a forked child's exit status; the leak checker ends that child with
  # its own code over the parent's live objects, which it cannot see ("False
  # leaks are possible").
  '^ExecSegmentTest\.AChildWhoseExecFailsIsStillListedWithItsCounts$'
  # Its subject is two outside programs (a real Prometheus scraping, a
  # headless browser loading the dashboard), a minute of wall time on which
  # the sanitizer checks none of their code; what of ours it drives (serve's
  # exposition and HTTP server) serve_test drives under the sanitizer, with
  # good, slow and malformed clients.
  '^prometheus\.AnInjectedDiskFaultReachesARealPrometheusAndTheDashboardInABrowser$'
)
tsan_suites='^([A-Za-z]+/)?(GoldenTest|GoldenThreadsTest|GoldenRetiringTest|IoHooksTest|SamplerTest|NodeMetricsTest|AnalyzerSheddingTest|AnalyzerEndToEndTest|PeerTransportTest|PeerTransportFallback|SelectionTest)\.'
# The tsan suite builds just these (and what they depend on): a whole
# ThreadSanitizer tree would double CI's build time for tests it does not run.
tsan_targets=(golden_test io_hooks_test sampler_test node_metrics_test analyzer_shedding_test analyzer_e2e_test
  peer_transport_test selection_test limpwatch_cli)
tsan_exclusions=(
  # A child forked from a threaded process starts threads (the runtime's own),
  # which ThreadSanitizer does not support ("starting new threads after
  # multi-threaded fork is not supported").
  '^GoldenTest\.ForkChildRecordsIntoItsOwnSegmentWithoutInheritedFrames$'
  '^GoldenTest\.DaemonizedChildKeepsRecordingAfterTheParentExits$'
  '^SamplerTest\.DaemonChildSamplesItselfIntoItsOwnSegment$'
  '^AnalyzerEndToEndTest\.PeersIndictTheLimpingServerOnlineAndOfflineAlike$'  # one server daemonizes
  # Check which functions the samples land in: under ThreadSanitizer most land
  # in its runtime (__tsan_read8, __tsan_write8), called from every memory
  # access of the burning loops, so the program's shares cannot be compared.
  '^SamplerTest\.TwoToOneSplitOfCpuIsSampledWithinTenPercent$'
  '^SamplerTest\.SamplesInASharedLibraryNameIt$'
  '^SamplerTest\.ProgramThatInstallsItsOwnSigprofHandlerKeepsItsProfiler$'  # its burn_one check
  '^SamplerTest\.ThreadsStartedAfterTheSamplerAreSampled$'
  '^SamplerTest\.PerCpuEventsKeepOnlyThisProcesssSamples$'
  '^SamplerTest\.PerThreadEventsWhenAskedFor$'
  '^SamplerTest\.RefusedPerfEventOpenFallsBackToSigprofWithOneLogLine$'
  '^SamplerTest\.ProcessesOfANodeShareOneSetOfPerCpuEventsAndEachKeepsItsOwnSamples$'
  '^SamplerTest\.WhenTheProcessHoldingTheNodesEventsExitsAnotherTakesThemOver$'
  '^SamplerTest\.AStoppedHolderOfTheNodesEventsIsTakenOverAndCarriesOnAsAMember$'
  # Checks glibc malloc's mmap threshold, and the sanitizer replaces malloc.
  '^SamplerTest\.LoadingTheKernelsSymbolsLeavesTheProgramsMallocAlone$'
)

joined() { local IFS='|'; echo "$*"; }

# Sanitizer reports in the log directory, printed; non-zero when there is one.
# One exception, which the leak checker itself declares: in a child forked
# from a threaded parent it cannot see the parent's threads (their stacks
# hold the parent's live objects) and says "False leaks are possible"; a leak
# report from such a process alone is shown and not counted.
check_reports() {
  local logs=$1 found=0
  for report in "$logs"/*; do
    [ -e "$report" ] || continue
    if grep -qE 'ERROR: (AddressSanitizer|ThreadSanitizer)|WARNING: ThreadSanitizer|runtime error:' "$report"; then
      echo "---- sanitizer report $(basename "$report")"
      cat "$report"
      found=1
    elif grep -q 'ERROR: LeakSanitizer' "$report"; then
      if grep -q 'False leaks are possible' "$report"; then
        echo "---- leak report of a forked child, not counted (the leak checker could not see the parent's threads): $(basename "$report")"
        grep -E '^(Direct|Indirect) leak|SUMMARY' "$report" | head -5
      else
        echo "---- sanitizer report $(basename "$report")"
        cat "$report"
        found=1
      fi
    fi
  done
  return $found
}

# Configures and builds one sanitizer tree (all of it, or the targets named).
build_suite() {
  local preset=$1 build=$root/build-$1
  shift
  local targets=("$@")
  echo "sanitizers: building the $preset tree${targets[*]:+ (${targets[*]})}"
  cmake --preset "$preset" -S "$root" >/dev/null
  cmake --build "$build" -j"$jobs" ${targets[@]:+--target "${targets[@]}"}
}

# Runs one sanitizer tree's tests and reads its sanitizer logs.
test_suite() {
  local preset=$1 build=$root/build-$1 filter=$2 exclusions=$3
  local logs=$build/sanitizer-logs
  local started=$SECONDS
  rm -rf "$logs" && mkdir -p "$logs"
  chmod 1777 "$logs"  # tests that drop to an unprivileged user log here too
  local status=0
  (
    cd "$build"
    export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
    export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
    export TSAN_OPTIONS="log_path=$logs/tsan:halt_on_error=0:second_deadlock_stack=1:suppressions=$root/tools/tsan.supp"
    ctest --output-on-failure -j"$jobs" --timeout 900 ${filter:+-R "$filter"} -E "$exclusions"
  ) || status=1
  check_reports "$logs" || status=1
  echo "sanitizers: $preset tested in $((SECONDS - started)) s: $([ $status -eq 0 ] && echo passed || echo FAILED)"
  return $status
}

# At idle priority (SCHED_IDLE, else nice 19): it runs only on a CPU that
# nothing else wants, and a waking test preempts it at once.
idle_priority() {
  if chrt --idle 0 true 2>/dev/null; then
    chrt --idle 0 nice -n 19 "$@"
  else
    nice -n 19 "$@"
  fi
}

if [ "${1:-}" = "--build-only" ]; then
  case ${2:-} in
    asan) build_suite asan ;;
    tsan) build_suite tsan "${tsan_targets[@]}" ;;
    *) echo "test-sanitizers: --build-only asan|tsan" >&2; exit 2 ;;
  esac
  exit
fi
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(asan tsan)
for suite in "${suites[@]}"; do
  case $suite in
    asan | tsan) ;;
    *) echo "test-sanitizers: unknown suite '$suite' (asan or tsan)" >&2; exit 2 ;;
  esac
done
"$root/tools/setup.sh"
asan_filter="" asan_excluded=$(joined "${asan_exclusions[@]}")
tsan_excluded=$(joined "${tsan_exclusions[@]}")
status=0
started=$SECONDS
if [ "${suites[*]}" = "asan tsan" ]; then
  # Both: the ThreadSanitizer tree builds while the AddressSanitizer tests
  # run, on what CPU they leave (they wait on servers, sockets and sleeps
  # much of the time), instead of after them.
  build_suite asan || exit 1
  echo "sanitizers: asan built in $((SECONDS - started)) s; the tsan tree builds beside its tests at idle priority"
  mkdir -p "$root/build-tsan"
  tsan_log=$root/build-tsan/build.log
  (idle_priority "$0" --build-only tsan >"$tsan_log" 2>&1) &
  tsan_builder=$!
  test_suite asan "$asan_filter" "$asan_excluded" || status=1
  tsan_wait=$SECONDS
  if ! wait "$tsan_builder"; then
    cat "$tsan_log"
    echo "sanitizers: the tsan tree did not build"
    exit 1
  fi
  echo "sanitizers: the tsan tree was built $((SECONDS - tsan_wait)) s after the asan tests ended"
  test_suite tsan "$tsan_suites" "$tsan_excluded" || status=1
else
  for suite in "${suites[@]}"; do
    suite_started=$SECONDS
    case $suite in
      asan) build_suite asan || exit 1 ;;
      tsan) build_suite tsan "${tsan_targets[@]}" || exit 1 ;;
    esac
    echo "sanitizers: $suite built in $((SECONDS - suite_started)) s"
    case $suite in
      asan) test_suite asan "$asan_filter" "$asan_excluded" || status=1 ;;
      tsan) test_suite tsan "$tsan_suites" "$tsan_excluded" || status=1 ;;
    esac
  done
fi
exit $status
