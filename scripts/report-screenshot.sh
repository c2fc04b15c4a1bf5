#!/usr/bin/env bash
# Rebuilds docs/report-screenshot.png: the report of the README's `sim compare` example,
# rendered by headless Chromium (Debian's `chromium`; `apt-get install chromium`) at
# 1280 px wide. The page's first screen and what follows it, cut at HEIGHT px (default
# 1600).
set -euo pipefail
cd "$(dirname "$0")/.."
height="${HEIGHT:-1600}"
chromium="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$chromium" ]; then
  echo "report-screenshot: no chromium on PATH (apt-get install chromium)" >&2
  exit 2
fi
cargo build --release --quiet
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
./target/release/sim compare --trace data/HPC2N-2002-2.2-cln.first2000.swf.gz \
  --policies fcfs,easy,conservative,sjf-aging --seeds 1..5 --perturb resample \
  --quiet --out "$work/cmp"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="1280,$height" --screenshot="$work/shot.png" "file://$work/cmp/report.html" \
  > "$work/chromium.log" 2>&1 || { cat "$work/chromium.log" >&2; exit 1; }
mv "$work/shot.png" docs/report-screenshot.png
echo "docs/report-screenshot.png: $(wc -c < docs/report-screenshot.png) bytes"
