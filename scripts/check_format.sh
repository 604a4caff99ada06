#!/usr/bin/env bash
# Checks that every C++ source of the tree is formatted as .clang-format says (include order
# included); prints the files that are not and the command that fixes them. The generated
# register header (scripts/gen_regmap.py's output) is left as the generator writes it.
# The test suite runs it (style.clang_format); `--fix` formats the files in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format is not installed (scripts/install-deps.sh scripts/debian-packages-test.txt)" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print | sed 's|^\./||')
fi
sources=()
for f in "${files[@]}"; do
  [ "$f" = regmap/include/sohusim/regmap/sohu_regs.h ] && continue
  [ -f "$f" ] && sources+=("$f")
done
if [ "${1:-}" = --fix ]; then
  clang-format -i "${sources[@]}"
  exit 0
fi
mapfile -t bad < <(clang-format --dry-run "${sources[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not formatted as .clang-format says:\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  printf 'fix: scripts/check_format.sh --fix\n' >&2
  exit 1
fi
echo "check_format: ${#sources[@]} files formatted"
