#!/bin/sh
# make fuzz: runs the Matrix Market fuzz target for SECONDS (default 60) from
# a seed corpus of the test matrices and the malformed files. Fails on a
# crash, a leak, a timeout (10 s per input) or an allocation over 256 MB.
set -e
cd "$(dirname "$0")/../.."
bin=${1:?usage: run.sh FUZZ_BINARY [SECONDS]}
secs=${2:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/findings"
for f in tests/mm/*.mtx tests/data/*.mtx; do [ -f "$f" ] && cp "$f" "$work/corpus/"; done
echo "fuzz: $bin for $secs s from $(ls "$work/corpus" | wc -l) seeds"
if "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
     -artifact_prefix="$work/findings/" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1; then
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$work/log" || true
  echo "fuzz: 1 passed, 0 failed"
else
  tail -40 "$work/log"
  mkdir -p build/fuzz-findings && cp "$work"/findings/* build/fuzz-findings/ 2>/dev/null || true
  echo "fuzz: the parser failed on an input (kept in build/fuzz-findings/)"
  echo "fuzz: 0 passed, 1 failed"
  exit 1
fi
