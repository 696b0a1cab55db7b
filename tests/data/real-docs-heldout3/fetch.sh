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
SDISTS=(agentlab==0.4.2 nemo-gym==0.7.0 webarena-verified==1.2.3 exgentic==0.3.5 aider-chat==0.86.2
        inspect-ai==0.3.285 browsergym-workarena==0.5.3 miniwob==1.1.0 tale-suite==1.0.0rc2)
for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
agentlab-0.4.2.tar.gz	agentlab-0.4.2/README.md	agentlab/README.md
nemo_gym-0.7.0.tar.gz	nemo_gym-0.7.0/resources_servers/terminal_bench_4/README.md	nemo-gym/resources_servers/terminal_bench_4/README.md
webarena_verified-1.2.3.tar.gz	webarena_verified-1.2.3/README.md	webarena-verified/README.md
exgentic-0.3.5.tar.gz	exgentic-0.3.5/docs/runners.md	exgentic/docs/runners.md
aider_chat-0.86.2.tar.gz	aider_chat-0.86.2/benchmark/README.md	aider-chat/benchmark/README.md
inspect_ai-0.3.285.tar.gz	inspect_ai-0.3.285/design/sample-lifecycle.md	inspect-ai/design/sample-lifecycle.md
browsergym_workarena-0.5.3.tar.gz	browsergym_workarena-0.5.3/README.md	browsergym-workarena/README.md
miniwob-1.1.0.tar.gz	miniwob-1.1.0/README.md	miniwob/README.md
tale_suite-1.0.0rc2.tar.gz	tale_suite-1.0.0rc2/README.md	tale-suite/README.md
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
d002e086c32f20086e63b2a5983168a14d71f5340673fedbd334b4cba9b20893  agentlab/README.md
16ccd3c0b78ecec5a89ec4c586dca86c6970826a8c095446a2342159cc2d9a87  nemo-gym/resources_servers/terminal_bench_4/README.md
8f343078ba55263182f86ec54497958a1174d90cb8ce7573cedcc29f5c8e6b50  webarena-verified/README.md
cb645b67380832f7d65b6ba7e472abca881e2ee29803a0521c87703175bb587b  exgentic/docs/runners.md
c87a9cd84c1d55a0d5e3d3b7d61e65d83c0dd6f66fe12310bfd37c5994d22074  aider-chat/benchmark/README.md
f30d25b568f0abd1f6352587ceca210efdf2a83b365100666784131015073490  inspect-ai/design/sample-lifecycle.md
834a48f0346036a0fc591a36f9eb6f513b44a2777a66afa0917f28fc63f29334  browsergym-workarena/README.md
1f881f941e002b4bd6e6bcb01d1366f3b82d6de74cecc8adf3cc34b5ce03ce4c  miniwob/README.md
0b6a8944c9673780bfa1e9637329bf5ccf0a17854ecc86c7317dd9b4d4d60c24  tale-suite/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
