#!/usr/bin/env bash
# Installs the Debian packages listed in the given list files that are missing (default:
# scripts/debian-packages.txt, what sohusim needs to build and run). A list names one package
# a line; `#` starts a comment. `scripts/quickstart.sh test` also passes
# scripts/debian-packages-test.txt (what only the tests need: a browser and Graphviz to render
# the reports).
# Quiet and fast when everything is there; uses sudo when not run as root.
#   scripts/install-deps.sh [LIST...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lists=("$@")
[ ${#lists[@]} -eq 0 ] && lists=("$here/debian-packages.txt")
wanted=()
for list in "${lists[@]}"; do
  [ -f "$list" ] || { echo "install-deps: no package list '$list'" >&2; exit 2; }
  mapfile -t -O "${#wanted[@]}" wanted < <(sed -e 's/#.*//' -e 's/^\s*//' -e 's/\s*$//' "$list" | sed '/^$/d')
done
missing=()
for p in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "install-deps: apt-get failed (log above)" >&2
  exit 1
fi
rm -f "$log"
