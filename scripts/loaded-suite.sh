#!/usr/bin/env bash
# The whole test suite N times in a row (default 5) with both cores kept busy by two
# `yes > /dev/null`, since tests must hold on a busy machine. Each run's
# figures are printed from .vitest-report.json; the loop goes on after a failure so
# that every run is counted. Needs the services CI needs (PostgreSQL, Redis, MariaDB).
#   scripts/loaded-suite.sh [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
yes > /dev/null & y1=$!
yes > /dev/null & y2=$!
trap 'kill $y1 $y2 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  CI=true npx -y pnpm@10.34.9 test > "loaded-suite-run$i.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  node -e '
const r = JSON.parse(require("fs").readFileSync(".vitest-report.json", "utf8"));
console.log(`run '"$i"': rc=${process.argv[1]}, ${process.argv[2]} s, ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$rc" "$(( $(date +%s) - start ))"
done
echo "$failed of $runs runs failed"
[ "$failed" -eq 0 ]
