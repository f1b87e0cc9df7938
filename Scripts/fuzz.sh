#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/Package.swift, one executable; FUZZ_TARGET picks the entry)
# with AddressSanitizer and runs each target in turn, seeded from the fixtures.
#
# Usage: Scripts/fuzz.sh [seconds-per-target] [extra-seed-folder]
#   seconds-per-target  default 60
#   extra-seed-folder   its files (whole streams, NAL units, anything) join every target's
#                       seeds; its Annex-B streams and y4m files are also cut into per-target
#                       seeds like the fixtures
# Environment: FUZZ_TARGETS="annexb sps …" runs only those.
#
# Exits non-zero when any target crashes, leaks, times out (10 s per input) or runs out of
# memory (2 GiB). The input that did it is kept in .build-fuzz/run/artifacts/<target>/; replay it
# with FUZZ_TARGET=<target> .build-fuzz/release/H264Fuzz <file>, and make it a regression test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
extra="${2:-}"
all_targets="annexb avcc avcc-record sps pps slice stream assembler roundtrip y4m flv flv-audio mp4 hls rtp sdp decoder rtsp www-authenticate authorization rtcp rtp-info hevc-ps hevc-assembler hevc-rtp rtmp-chunks amf0 audio-rtp audio-config sdp-audio"
targets="${FUZZ_TARGETS:-$all_targets}"
scratch="$root/.build-fuzz"
run="$scratch/run"

echo "== building fuzz targets (release, -sanitize=fuzzer,address)"
build=(swift build -c release --sanitize=fuzzer --sanitize=address --scratch-path "$scratch" --product H264Fuzz \
  -Xswiftc -sanitize=fuzzer,address)
# SwiftPM passes -sanitize=fuzzer and -sanitize=address as two flags, and swiftc keeps only the
# last: without the combined flag nothing is instrumented for coverage and libFuzzer is blind.
# SwiftPM's own --sanitize=fuzzer is still needed (it then leaves the executable's main alone).
(cd "$root/Fuzz" && "${build[@]}" 2>&1 | grep -v "prohibited flag\|Cannot export local symbol" || true)
bin="$(cd "$root/Fuzz" && "${build[@]}" --show-bin-path)/H264Fuzz"
[ -x "$bin" ] || { echo "fuzz build failed"; exit 1; }

echo "== making seeds"
rm -rf "$run/seeds"
mkdir -p "$run/seeds"
seed_sources=("$root/Fixtures")
[ -n "$extra" ] && seed_sources+=("$extra")
python3 "$root/Fuzz/make-seeds.py" "$run/seeds" "${seed_sources[@]}"

failed=()
for target in $targets; do
  corpus="$run/corpus/$target"
  artifacts="$run/artifacts/$target"
  mkdir -p "$corpus" "$artifacts" "$run/logs"
  dirs=("$corpus")
  for d in "$run/seeds/$target" "$root/Fuzz/Seeds/$target" "$extra"; do
    [ -n "$d" ] && [ -d "$d" ] && dirs+=("$d")
  done
  echo "== $target: ${seconds}s"
  status=0
  FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" \
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -print_pcs=0 \
    -artifact_prefix="$artifacts/" "${dirs[@]}" >"$run/logs/$target.log" 2>&1 || status=$?
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$run/logs/$target.log" | tr '\n' ' ' || true
  echo
  if [ "$status" -ne 0 ]; then
    echo "!! $target failed (exit $status); log: $run/logs/$target.log"
    grep -E "ERROR|SUMMARY|Fatal error|property violated|Test unit written" "$run/logs/$target.log" | head -20 || true
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "FUZZ FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: all targets clean (${seconds}s each): $targets"
