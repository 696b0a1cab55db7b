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
SDISTS=(deepteam==1.0.10 evidently==0.7.23 openai-agents==0.24.0 smolagents==1.26.0 pysc2==3.0.0
        minari==0.5.4 rlcard==1.2.0 miniworld==2.1.0)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
deepteam-1.0.10.tar.gz	deepteam-1.0.10/README.md	deepteam/README.md
evidently-0.7.23.tar.gz	evidently-0.7.23/README.md	evidently/README.md
openai_agents-0.24.0.tar.gz	openai_agents-0.24.0/docs/sandbox/clients.md	openai-agents/docs/sandbox/clients.md
smolagents-1.26.0.tar.gz	smolagents-1.26.0/README.md	smolagents/README.md
PySC2-3.0.0.tar.gz	PySC2-3.0.0/README.md	pysc2/README.md
minari-0.5.4.tar.gz	minari-0.5.4/README.md	minari/README.md
openai_agents-0.24.0.tar.gz	openai_agents-0.24.0/docs/sandbox/memory.md	openai-agents/docs/sandbox/memory.md
rlcard-1.2.0.tar.gz	rlcard-1.2.0/README.md	rlcard/README.md
miniworld-2.1.0.tar.gz	miniworld-2.1.0/README.md	miniworld/README.md
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
a8bb8767844d7c36418d08a04e8ccabafd07ca70524eb655c9f9fc9af30633d6  deepteam/README.md
c8ac72c2363a2f0b7c36f38a6e7801817e5659507a2e6a37212702ad1cd51c20  evidently/README.md
d7e878dafdb5c8dc06cdd142f772b071412827b29954e604242564c688c30b1e  openai-agents/docs/sandbox/clients.md
07628fd537014c9e48fdbf1681113ef179d4016d18811a953ca353b7806ec35e  smolagents/README.md
7b5fba87bef5116eff7e215204f6f74b06625b41d5cdf3d48a50b96111e785ba  pysc2/README.md
459ca2cebf87c1f2210b8363fbe8b6436611b9ea449eaeea18ec2d8b8725cd35  minari/README.md
8d6f883969228af3f1971c02d5d176e5ac3ef7f2c22beb479d3709dd60d900dd  openai-agents/docs/sandbox/memory.md
8b5ea499f135e10d778fd5571df6cd13bce86559155b5c1b00b20538ca3ec412  rlcard/README.md
5ad98f4d5fc6c1f807375f4ae1552d1066202b459cc29d02573731328489eeef  miniworld/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
