#!/usr/bin/env bash
# Builds the DocC documentation of every library target that has a catalog
# (Sources/TARGET/TARGET.docc) with swift-docc-plugin, treating DocC's warnings as errors:
# an unresolved symbol link or an undocumented parameter fails the run.
# Usage: Scripts/docs.sh [extra generate-documentation options]   (archives in .build/plugins/Swift-DocC/outputs)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
for catalog in Sources/*/*.docc; do
  targets+=(--target "$(basename "$(dirname "$catalog")")")
done
swift package generate-documentation "${targets[@]}" --warnings-as-errors "$@"
