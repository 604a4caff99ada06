#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a result:
#   scripts/quickstart.sh            install what is missing, build (release), run the main job
#   scripts/quickstart.sh test       the same set-up, then the whole test suite
#   scripts/quickstart.sh test asan  the test suite under AddressSanitizer + UBSan
# Idempotent; quiet when there is nothing to install or rebuild.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
action="${1:-run}"
preset="${2:-release}"
case "$action" in run|test) ;; *) echo "usage: $0 [run|test] [release|debug|asan]" >&2; exit 2;; esac
case "$preset" in release|debug|asan) ;; *) echo "unknown preset '$preset' (release, debug, asan)" >&2; exit 2;; esac

if [ "$action" = test ]; then
  # the tests also render the reports: a headless browser and Graphviz
  "$root/scripts/install-deps.sh" "$root/scripts/debian-packages.txt" "$root/scripts/debian-packages-test.txt"
else
  "$root/scripts/install-deps.sh" "$root/scripts/debian-packages.txt"
fi

jobs="$(nproc 2>/dev/null || echo 2)"
if [ ! -f "build/$preset/CMakeCache.txt" ]; then
  cmake --preset "$preset" >/dev/null
fi
# The main job needs the command-line program only; the suite needs everything.
targets=()
[ "$action" = run ] && targets=(--target sohusim_cli)
cmake --build --preset "$preset" -j "$jobs" "${targets[@]}" | { grep -v -E '^(\[[0-9]+/[0-9]+\] |ninja: no work to do)' || true; }

if [ "$action" = run ]; then
  exec "build/$preset/bin/sohusim" run
else
  ctest --preset "$preset" -j "$jobs"
fi
