#!/bin/bash
# The low-occupancy and read/write-mix survey of docs/memory-frontend.md ("Parked writes"):
# runs `sohusim mem --preset hbm3-6400` on 74 cases with --fidelity detailed and fast and
# prints each case's bandwidths and difference, then the count of cases outside 10 % and 5 %,
# the worst one and the sum of the absolute differences (of the first 62 cases too, without
# the 12 with 8 x 256 in flight).
#   scripts/mem_fast_vs_detailed.sh [path/to/sohusim]
# Environment: CACHE=DIR keeps the detailed results there (keyed by the arguments) for
# reruns against a changed fast model; ROWS=REGEX runs the matching cases only; EXTRA adds
# arguments to every case (e.g. EXTRA="--refresh perbank"). The detailed runs take about
# 8 minutes on one core. SET=bulk runs the 45 cases of bulk requests (8-128 KiB, see
# bulk_cases) instead, about 2 minutes of detailed runs. TREFI="6160 6200 6240 6280 6320"
# runs every case at each of those hbm.timing.tREFI values and compares the mean
# bandwidths (the spread of the per-value differences in brackets): where the detailed
# model's queues lock into a phase of the refresh rotation, a 1 % change of tREFI moves
# its bandwidth by up to 40 % (docs/memory-frontend.md, "Chaotic cases"), and one run
# compares two phases rather than two models. It takes as long as a run per value.
set -euo pipefail
shopt -s inherit_errexit  # a failing run inside $(...) stops the survey too
S=${1:-build/release/bin/sohusim}
[[ -x "$S" ]] || { echo "mem_fast_vs_detailed.sh: no sohusim binary at '$S' (build first)" >&2; exit 2; }
[[ -n "${CACHE:-}" ]] && mkdir -p "$CACHE"
for r in ${TREFI:-}; do
  [[ $r =~ ^[1-9][0-9]*$ ]] || { echo "mem_fast_vs_detailed.sh: TREFI must list cycle counts, not '$r'" >&2; exit 2; }
done
results=$(mktemp)
trap 'rm -f "$results"' EXIT
bw() {  # a failed run stops the survey with sohusim's own message (errexit), not a parse error
  local out
  out=$("$S" mem --preset hbm3-6400 "$@" --json)
  python3 -c "import json,sys; print('%.2f' % json.load(sys.stdin)['bandwidth_gbps'])" <<< "$out"
}
one() {  # one case at one point: "detailed fast"
  local d
  if [[ -n "${CACHE:-}" ]]; then
    local c="$CACHE/$(echo "$*" | md5sum | cut -c1-16)"
    [[ -s $c ]] || bw "$@" --fidelity detailed > "$c"
    d=$(cut -d" " -f1 "$c")
  else
    d=$(bw "$@" --fidelity detailed)
  fi
  local f
  f=$(bw "$@" --fidelity fast)
  echo "$d $f"
}
run() {
  local name=$1; shift
  [[ -n "${ROWS:-}" && ! "$name" =~ $ROWS ]] && return 0
  local points=() pair r out
  for r in ${TREFI:-default}; do
    if [[ $r == default ]]; then
      out=$(one "$@")
    else
      out=$(one "$@" --set "hbm.timing.tREFI=$r")
    fi
    read -ra pair <<< "$out"
    points+=("${pair[@]}")
  done
  python3 - "$name" "${points[@]}" <<'PY' | tee -a "$results"
import sys
name, v = sys.argv[1], [float(x) for x in sys.argv[2:]]
d, f = v[0::2], v[1::2]
md, mf = sum(d) / len(d), sum(f) / len(f)
line = '%-22s detailed %7.1f  fast %7.1f  %+6.1f %%' % (name, md, mf, (mf / md - 1) * 100)
if len(d) > 1:
    diffs = [(y / x - 1) * 100 for x, y in zip(d, f)]
    line += '  [%+.1f .. %+.1f]' % (min(diffs), max(diffs))
print(line)
PY
}
survey_cases() {
  for o in 1 4 16; do
    for p in stream mix:67 random strided:1056; do
      for sz in 32 256 1KiB 4KiB; do
        run "o$o $p $sz" --pattern $p --size $sz --initiators 8 --outstanding $o --requests 20000 ${EXTRA:-}
      done
    done
  done
  run "d mix:67 32" --pattern mix:67 --size 32 --requests 100000 ${EXTRA:-}
  run "d mix:50 32" --pattern mix:50 --size 32 --requests 100000 ${EXTRA:-}
  run "d mix:67 64" --pattern mix:67 --size 64 --requests 100000 ${EXTRA:-}
  run "d mix:50 64" --pattern mix:50 --size 64 --requests 100000 ${EXTRA:-}
  run "d s67 32" --pattern stream --reads 67 --size 32 --requests 100000 ${EXTRA:-}
  run "d s67 64" --pattern stream --reads 67 --size 64 --requests 100000 ${EXTRA:-}
  run "d s67 256" --pattern stream --reads 67 --size 256 --requests 100000 ${EXTRA:-}
  run "d s67 1K" --pattern stream --reads 67 --size 1KiB --requests 100000 ${EXTRA:-}
  run "d st80 32" --pattern strided:1056 --reads 80 --size 32 --requests 100000 ${EXTRA:-}
  run "d st80 64" --pattern strided:1056 --reads 80 --size 64 --requests 100000 ${EXTRA:-}
  run "o64 s67 64" --pattern stream --reads 67 --size 64 --initiators 8 --requests 20000 --outstanding 64 ${EXTRA:-}
  run "o16 s67 256" --pattern stream --reads 67 --size 256 --initiators 8 --requests 20000 --outstanding 16 ${EXTRA:-}
  run "o4 s67 1K" --pattern stream --reads 67 --size 1KiB --initiators 8 --requests 20000 --outstanding 4 ${EXTRA:-}
  run "o1 s67 4K" --pattern stream --reads 67 --size 4KiB --initiators 8 --requests 20000 --outstanding 1 ${EXTRA:-}
  # Deep queues: 8 x 256 in flight, more than the controllers' queues hold (2026-12-02).
  for sz in 32 64 256; do
    run "o256 mix:67 $sz" --pattern mix:67 --size $sz --initiators 8 --outstanding 256 --requests 100000 ${EXTRA:-}
    run "o256 st $sz" --pattern strided:1056 --size $sz --initiators 8 --outstanding 256 --requests 100000 ${EXTRA:-}
    run "o256 st80 $sz" --pattern strided:1056 --reads 80 --size $sz --initiators 8 --outstanding 256 --requests 100000 ${EXTRA:-}
    run "o256 s67 $sz" --pattern stream --reads 67 --size $sz --initiators 8 --outstanding 256 --requests 100000 ${EXTRA:-}
  done
}
bulk_cases() {
  # Bulk requests (a multi-access TLM transaction is one FastDram::enqueue_bulk): 8
  # initiators with 2 / 4 / 32 in flight; streams with 67 % and 0 % reads, random blocks
  # with 67 % (reads only are in HbmMemoryReal.FastMatches*). 96 MiB per case, and at
  # least 24 times the requests in flight: over 3 (128 KiB at 8 x 32) the start of the
  # run weighs in (the 128 KiB stream mix gave +32.8 % over 768 requests, +9.9 % over 3000).
  local o sz c n
  for o in 2 4 32; do
    for sz in 8 16 32 64 128; do
      n=$((96 * 1024 / sz))
      ((n >= 24 * 8 * o)) || n=$((24 * 8 * o))
      for c in "stream 67" "stream 0" "random 67"; do
        set -- $c
        run "b$o $1 r$2 ${sz}KiB" --pattern "$1" --reads "$2" --size "${sz}KiB" --initiators 8 --outstanding "$o" \
          --requests "$n" ${EXTRA:-}
      done
    done
  done
}
case "${SET:-survey}" in
  survey) survey_cases ;;
  bulk) bulk_cases ;;
  *) echo "mem_fast_vs_detailed.sh: SET must be survey or bulk, not '${SET}'" >&2; exit 2 ;;
esac
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def summary(v, what):
    if v:
        print('%d cases%s, %d outside 10 %% (%d outside 5 %%), worst %+.1f %%, sum of |differences| %.0f points'
              % (len(v), what, sum(abs(x) > 10 for x in v), sum(abs(x) > 5 for x in v), max(v, key=abs),
                 sum(abs(x) for x in v)))
def diff(r):
    return float(r[r.index('%') - 1])
summary([diff(r) for r in rows], '')
first = [diff(r) for r in rows if r[0] != 'o256']
if len(first) < len(rows):
    summary(first, ' without o256')
PY
