#!/usr/bin/env bash
# What is too slow for CI (.ci/run keeps to 40 minutes on 2 cores), run by a developer before
# stopping, with the result quoted in the closing note:
#   1. the library suites under AddressSanitizer (a full build of its own, ~12 min; CI runs every
#      parser and protocol reader under ASan in its fuzz step, and the sessions under valgrind);
#   2. the whole suite under ThreadSanitizer, the suites without threads of their own too (CI
#      runs only the suites that start threads: see its ThreadSanitizer step);
#   3. every fuzz target for FUZZ_SECONDS (default 60) instead of CI's 10;
#   4. the valgrind leak check with 1,000 H.264 and 100 H.265 session lives instead of CI's 300/30.
# Each part prints its own lines; the last line says which parts failed, and the exit status is
# non-zero when any did. Usage: Scripts/full-check.sh [part …]   (parts: asan tsan fuzz leak; all
# by default)
set -uo pipefail
cd "$(dirname "$0")/.."
export SWIFT_BACKTRACE=enable=no
Scripts/install-deps.sh
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(asan tsan fuzz leak)
failed=()
start=$SECONDS
for part in "${parts[@]}"; do
  begin=$SECONDS
  echo "== full-check: $part"
  case "$part" in
    asan) ASAN_OPTIONS=detect_leaks=0 swift test --sanitize=address --scratch-path .build-asan \
            --skip H264Benchmarks --skip H264CLITests ;;
    tsan) swift test --sanitize=thread --scratch-path .build-tsan --skip H264Benchmarks --skip H264CLITests ;;
    fuzz) Scripts/fuzz.sh "${FUZZ_SECONDS:-60}" ;;
    leak) Scripts/leakcheck.sh "${LEAK_CYCLES:-1000}" hevc ;;
    *) echo "unknown part: $part (asan tsan fuzz leak)"; false ;;
  esac
  status=$?
  echo "== full-check: $part: $([ $status -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $(( (SECONDS - begin) / 60 ))m$(( (SECONDS - begin) % 60 ))s"
  [ $status -eq 0 ] || failed+=("$part")
done
echo "full-check: ${#parts[@]} parts in $(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s; failed: ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
