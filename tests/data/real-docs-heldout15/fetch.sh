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
SDISTS=(fschat==0.2.36 ipybox==0.9.2 ai2thor==5.0.0 guardrails-ai==0.11.0 pydantic-ai-slim==2.68.0
        popgym==1.0.7 langcheck==0.9.0 modal==1.6.4 jaxmarl==0.2.0)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
fschat-0.2.36.tar.gz	fschat-0.2.36/README.md	fschat/README.md
ipybox-0.9.2.tar.gz	ipybox-0.9.2/README.md	ipybox/README.md
ai2thor-5.0.0.tar.gz	ai2thor-5.0.0/README.md	ai2thor/README.md
guardrails_ai-0.11.0.tar.gz	guardrails_ai-0.11.0/README.md	guardrails-ai/README.md
pydantic_ai_slim-2.68.0.tar.gz	pydantic_ai_slim-2.68.0/pydantic_ai/.agents/skills/building-pydantic-ai-agents/references/WORKSPACES.md	pydantic-ai-slim/pydantic_ai/.agents/skills/building-pydantic-ai-agents/references/WORKSPACES.md
popgym-1.0.7.tar.gz	popgym-1.0.7/README.md	popgym/README.md
langcheck-0.9.0.tar.gz	langcheck-0.9.0/README.md	langcheck/README.md
modal-1.6.4.tar.gz	modal-1.6.4/modal_docs/reference_intro.md	modal/modal_docs/reference_intro.md
jaxmarl-0.2.0.tar.gz	jaxmarl-0.2.0/README.md	jaxmarl/README.md
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
f55777ce8d51136fc5abd55d25be03c8c8d9a69843ec75dc699359efac1b11c2  fschat/README.md
007319302caf98da892a6df7a8ea6f91a9c8c354d86ca4e96794c2560fbe2aeb  ipybox/README.md
33fb24d70539cbe10208733d5046e7376410a5f84f637cea38c747b1b6d620d4  ai2thor/README.md
0cfc19a98e5fcab13186ed7b1151723e82e51488a437d5dc74710f87864eaa5c  guardrails-ai/README.md
a1f063c3c4c27be1a1cab6b2f85fc07640c317bab491613674ef470e25530a5f  pydantic-ai-slim/pydantic_ai/.agents/skills/building-pydantic-ai-agents/references/WORKSPACES.md
b7fca363a9a4c027a6d1f2b1c7ea4481ccdc4b1fefcaac51134fb1ab55048d74  popgym/README.md
d1003142e08a8ecd471ce3ffca420877693db407b9aa373da4cad08f1d65ce34  langcheck/README.md
92feeb64ee5b7dda0d7bef7d4b627fee94d5e59825efee1c523beb686aa0eb5c  modal/modal_docs/reference_intro.md
62d93811984ac40856b62569933e453f343eb75ede61615039e2330aded0464f  jaxmarl/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
