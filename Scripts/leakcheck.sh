#!/usr/bin/env bash
# Runs 1,000 x264 encoder session lives (create → encode → complete → invalidate; invalidate
# with frames in flight; last reference dropped with frames queued and a prewarmed session) and
# 500 H.264 decoder session lives (the same three endings) under valgrind memcheck, and fails
# on any memory error or any byte definitely lost. With `hevc` after the count, then a tenth
# as many of each for H.265 (x265, libavcodec's hevc; each life costs ~20× under valgrind);
# valgrind-x265.supp hides what memcheck finds inside libx265 itself.
#
# Usage: Scripts/leakcheck.sh [cycles] [hevc]   (default 1000)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cycles="${1:-1000}"
scratch="$root/.build-leak"
command -v valgrind >/dev/null || "$root/Scripts/install-deps.sh"
build=(swift build -c release --scratch-path "$scratch" --product H264LeakCheck)
(cd "$root/Fuzz" && "${build[@]}" 2>&1 | grep -v "prohibited flag" || true)
bin="$(cd "$root/Fuzz" && "${build[@]}" --show-bin-path)/H264LeakCheck"
[ -x "$bin" ] || { echo "leak check build failed"; exit 1; }
log="$scratch/valgrind.log"
echo "== valgrind memcheck, $cycles cycles"
status=0
SWIFT_BACKTRACE=enable=no valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --error-exitcode=3 --suppressions="$root/Scripts/valgrind-x265.supp" \
  --log-file="$log" "$bin" "$cycles" "${2:-}" || status=$?
grep -E "definitely lost|indirectly lost|possibly lost|still reachable|ERROR SUMMARY" "$log" | sed 's/^==[0-9]*== */  /'
lost=$(grep -oE "definitely lost: [0-9,]+ bytes" "$log" | grep -oE "[0-9,]+" | tr -d , || true)
if [ "$status" -ne 0 ] || [ "${lost:-0}" != "0" ]; then
  echo "LEAK CHECK FAILED (exit $status, definitely lost ${lost:-?} bytes); see $log"
  exit 1
fi
echo "leakcheck: 0 bytes definitely lost"
