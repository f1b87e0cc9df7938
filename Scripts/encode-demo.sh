#!/usr/bin/env bash
# Quick start: encode the committed cars clip (Fixtures/cars_320x240_30f.y4m) to out/cars.h264,
# an Annex-B H.264 stream that plays in ffplay or VLC.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh --runtime
swift build -c release --product h264
mkdir -p out
"$(swift build -c release --show-bin-path)/h264" encode Fixtures/cars_320x240_30f.y4m -o out/cars.h264 --session-preset active-transcoding "$@"
echo "Play it with:  ffplay out/cars.h264   (or: vlc out/cars.h264)"
