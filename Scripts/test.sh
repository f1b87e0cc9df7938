#!/usr/bin/env bash
# Installs what the tests need, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
swift test "$@"
