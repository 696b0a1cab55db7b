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
SDISTS=(agentevals-cli==0.11.0 harbor-glovebox==0.2.6 glovebox-driver==0.10.2 harbor-firecracker==0.1.0
        repoagentbench==0.1.0 agentbench==0.0.1 strands-agents-evals==1.7.0 crafter==1.8.3 reasoning-gym==0.1.25)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
agentevals_cli-0.11.0.tar.gz	agentevals_cli-0.11.0/docs/run-history.md	agentevals-cli/docs/run-history.md
agentevals_cli-0.11.0.tar.gz	agentevals_cli-0.11.0/examples/kubernetes/README.md	agentevals-cli/examples/kubernetes/README.md
harbor_glovebox-0.2.6.tar.gz	harbor_glovebox-0.2.6/README.md	harbor-glovebox/README.md
glovebox_driver-0.10.2.tar.gz	glovebox_driver-0.10.2/README.md	glovebox-driver/README.md
harbor_firecracker-0.1.0.tar.gz	harbor_firecracker-0.1.0/README.md	harbor-firecracker/README.md
repoagentbench-0.1.0.tar.gz	repoagentbench-0.1.0/README.md	repoagentbench/README.md
agentbench-0.0.1.tar.gz	agentbench-0.0.1/README.md	agentbench/README.md
strands_agents_evals-1.7.0.tar.gz	strands_agents_evals-1.7.0/src/strands_evals/redteam/README.md	strands-agents-evals/src/strands_evals/redteam/README.md
crafter-1.8.3.tar.gz	crafter-1.8.3/README.md	crafter/README.md
reasoning_gym-0.1.25.tar.gz	reasoning_gym-0.1.25/README.md	reasoning-gym/README.md
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
70d2f598394715c4451e70deca7116fb5158020df2d288042b8a9303d474c8e0  agentevals-cli/docs/run-history.md
bfdc6b41fc0a754ec7d338d71e58acca9374622bec4793f2eb331eb0b77ab001  agentevals-cli/examples/kubernetes/README.md
ee60750ee6f9e9a1827034d1ea7166a7253b046b9c5f96fd7be8b31b12ad50fb  harbor-glovebox/README.md
fd165a66460382cced0f720f8c9ced00779b4b73349718ea672069a7fea4692e  glovebox-driver/README.md
ff1f3b65dcdb907dc74ca47ca498a1bc37a6c56bed2bfc2d1937c22669f6c19b  harbor-firecracker/README.md
f6447410214e988ba376f5012a92bfcd70c57c777296be940deb573ff7244292  repoagentbench/README.md
3c803a7217a7c7b9ef1db96e1b1317e614ee2fcd6b1e74bae1eafc983e329b11  agentbench/README.md
ec0893080d6d19141aad99a4da24e04b6f83490c30e562a77232dbf69f816781  strands-agents-evals/src/strands_evals/redteam/README.md
cc09873f584c2bcfcface362f0eb386121b1bb14d02d13b0ec67ba8bb0bf8c47  crafter/README.md
fd270a3565a0b324aea6ab1bd359a8255fb726745beb2643f42c6590c3462649  reasoning-gym/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
