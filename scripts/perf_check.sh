#!/usr/bin/env bash
# The speed guard (scripts/perf_check.py): the key figures against bench/baseline.json,
# normalised by a reference workload run beside them; exits 1 past 1.5x.
#   scripts/perf_check.sh [--build DIR] [--limit X] [--update] [--only NAME]
set -euo pipefail
exec python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/perf_check.py" "$@"
