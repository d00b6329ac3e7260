#!/usr/bin/env bash
# nbdev's CI check: cleaning the notebooks and exporting the library must change nothing.
# Compares file hashes before and after, so it works on a dirty tree and outside git too.
set -euo pipefail
BIN=${1:-.venv/bin}
snapshot() {
  find nbs tutorials trustml_nb -type f \( -name '*.ipynb' -o -name '*.py' \) \
       -not -path '*/.ipynb_checkpoints/*' -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum
}
before=$(snapshot)
"$BIN/nbdev-clean"
"$BIN/nbdev-clean" --fname tutorials
"$BIN/nbdev-export"
after=$(snapshot)
if [ "$before" != "$after" ]; then
  echo "FAILED: nbdev-clean/nbdev-export changed these files (notebooks not clean, or library not in sync):"
  diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u
  echo "Run 'make sync-check' (it has now cleaned/exported them), review the diff and commit."
  exit 1
fi
echo "nbdev: notebooks clean, library in sync with nbs/ ($(echo "$after" | wc -l) files checked)"
