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
SDISTS=(judge0==0.0.8 sacred==0.8.7 rliable==1.2.0 giskard==3.0.1 pogema==1.4.0 robosuite==1.5.2
        continuous-eval==0.3.14.post2 langtrace-python-sdk==3.8.21 autoevals==0.4.1)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
judge0-0.0.8.tar.gz	judge0-0.0.8/README.md	judge0/README.md
sacred-0.8.7.tar.gz	sacred-0.8.7/README.rst	sacred/README.rst
rliable-1.2.0.tar.gz	rliable-1.2.0/README.md	rliable/README.md
giskard-3.0.1.tar.gz	giskard-3.0.1/README.md	giskard/README.md
pogema-1.4.0.tar.gz	pogema-1.4.0/README.md	pogema/README.md
robosuite-1.5.2.tar.gz	robosuite-1.5.2/README.md	robosuite/README.md
continuous_eval-0.3.14.post2.tar.gz	continuous_eval-0.3.14.post2/README.md	continuous-eval/README.md
langtrace_python_sdk-3.8.21.tar.gz	langtrace_python_sdk-3.8.21/README.md	langtrace-python-sdk/README.md
autoevals-0.4.1.tar.gz	autoevals-0.4.1/README.md	autoevals/README.md
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
cae9f2ddfc16537f89dcaf7bf64e92de032bb396dd866174a73aa639fbba8bf2  judge0/README.md
b9f6d019415292a6b4576e78fadd5699ddd61d1cbd395ba10bb2c84094bd47d8  sacred/README.rst
c4d474f8a018c6faf8ab5d365bad135258a2af851e2a5672e07999438fcc6237  rliable/README.md
d9e0da4e684ea8f7959448b4362ade0f0762eadbbf1ec0060eb1dbaf532cd531  giskard/README.md
0da3315e939732da5be77cd78366a7357ab50944b04735871a9e38d36fb57e15  pogema/README.md
598d8346889d54454a89c164bdb2551aef416f806af3327e0e81e1168d00b767  robosuite/README.md
10611551903c71ecc584568ace78f618735bd326e77cbac844b9be6ad0f0523a  continuous-eval/README.md
abc9ba164338d884bd64d2d31b46bda05d6af5720cd0651a1a0560736d95d764  langtrace-python-sdk/README.md
2a96e208d079d05bcb6f639976f113f63399bf6127190433af50d8c6946d6872  autoevals/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
