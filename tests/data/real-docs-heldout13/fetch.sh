#!/usr/bin/env bash
# Re-creates this corpus from the Python Package Index with `pip download`
# and checks every file against its sha256 (see MANIFEST.md).
#
# Usage: bash fetch.sh [OUTPUT_DIR]
#   OUTPUT_DIR defaults to the folder this script is in. Files are written to
#   OUTPUT_DIR/<package>/<path>, exactly as listed in MANIFEST.md.
# Needs: bash, python3 with pip, sha256sum.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/sdist"

# Source distributions. --ignore-requires-python: only the archive is needed, nothing is installed.
SDISTS=(arthur-bench==0.3.1 dm-meltingpot==2.4.1 rizaio==0.12.0 lbforaging==2.0.0
        openinference-instrumentation==0.1.72 runloop-api-client==3.0.0 sinergym==3.12.2 parea-ai==0.2.220
        langkit==0.0.35)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
arthur_bench-0.3.1.tar.gz	arthur_bench-0.3.1/README.md	arthur-bench/README.md
dm_meltingpot-2.4.1.tar.gz	dm-meltingpot-2.4.1/README.md	dm-meltingpot/README.md
rizaio-0.12.0.tar.gz	rizaio-0.12.0/README.md	rizaio/README.md
lbforaging-2.0.0.tar.gz	lbforaging-2.0.0/README.md	lbforaging/README.md
openinference_instrumentation-0.1.72.tar.gz	openinference_instrumentation-0.1.72/README.md	openinference-instrumentation/README.md
runloop_api_client-3.0.0.tar.gz	runloop_api_client-3.0.0/README-SDK.md	runloop-api-client/README-SDK.md
sinergym-3.12.2.tar.gz	sinergym-3.12.2/README.md	sinergym/README.md
parea_ai-0.2.220.tar.gz	parea_ai-0.2.220/README.md	parea-ai/README.md
runloop_api_client-3.0.0.tar.gz	runloop_api_client-3.0.0/EXAMPLES.md	runloop-api-client/EXAMPLES.md
langkit-0.0.35.tar.gz	langkit-0.0.35/langkit/docs/faq.md	langkit/langkit/docs/faq.md
ITEMS

python3 - "$WORK" "$OUT" <<'PY'
import os, sys, tarfile
work, out = sys.argv[1], sys.argv[2]
for line in open(os.path.join(work, "items.tsv"), encoding="utf-8"):
    arch, member, rel = line.rstrip("\n").split("\t")
    with tarfile.open(os.path.join(work, "sdist", arch)) as t:
        data = t.extractfile(member).read()
    dst = os.path.join(out, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)
    print("wrote", rel)
PY

cat > "$WORK/SHA256SUMS" <<'SUMS'
bbf007e83bcb4568ddcd8576ac8098db8343a7cdcc91b581487c15cc70019983  arthur-bench/README.md
8ebf8c19383c274823f617f48c74f88d786ff356b15db0704087a4e884d529ae  dm-meltingpot/README.md
8934348693da0059009730e59da8b6d26e304fe2c4ae995313081f2ae1342b85  rizaio/README.md
d528a9670314c4c54c4a386b0b75d9e2ae9bf43ac691f0323b880d9346a6e6c7  lbforaging/README.md
2119c211f970410d47629bcf1a0c2fd2bde915c1741c5c9f7d57754f9cec26fb  openinference-instrumentation/README.md
4f83e22ad02eba7871546d7d43ac934d265668416b9b3a1012d3bf6a63b11d82  runloop-api-client/README-SDK.md
1b3ae755c92f6409d3da203e78922ddf7658bd170a62eeef90307d81a6957ef1  sinergym/README.md
f4389df1218636763da9906ed85258425679128e4c29fc9350a1898d5c0f5624  parea-ai/README.md
288f01677804190a0a31b7e1efdf90d919abc8f69e27c1f7f00737b8aad393e0  runloop-api-client/EXAMPLES.md
8c98acc18d1058279016f52552d9322aee76060a2624ae57293b960a470499eb  langkit/langkit/docs/faq.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
