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
SDISTS=(agent-testbench==0.1.2 agent-sandbox-runtime==1.0.0 safety-gymnasium==1.0.0 ragas==0.4.3
        agentops==0.4.21 highway-env==1.12.1 agent-safety-bench==0.1.0 dm-env==1.6 agentbenchkit==0.0.1)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
agent_testbench-0.1.2.tar.gz	agent_testbench-0.1.2/README.md	agent-testbench/README.md
agent_sandbox_runtime-1.0.0.tar.gz	agent_sandbox_runtime-1.0.0/docs/HOW_IT_WORKS.md	agent-sandbox-runtime/docs/HOW_IT_WORKS.md
safety-gymnasium-1.0.0.tar.gz	safety-gymnasium-1.0.0/README.md	safety-gymnasium/README.md
ragas-0.4.3.tar.gz	ragas-0.4.3/examples/ragas_examples/ag_ui_agent_experiments/README.md	ragas/examples/ragas_examples/ag_ui_agent_experiments/README.md
agentops-0.4.21.tar.gz	agentops-0.4.21/README.md	agentops/README.md
highway_env-1.12.1.tar.gz	highway_env-1.12.1/README.md	highway-env/README.md
agent_safety_bench-0.1.0.tar.gz	agent_safety_bench-0.1.0/README.md	agent-safety-bench/README.md
dm-env-1.6.tar.gz	dm-env-1.6/README.md	dm-env/README.md
agentbenchkit-0.0.1.tar.gz	agentbenchkit-0.0.1/README.md	agentbenchkit/README.md
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
0e277defc739919e519863e180e5ba57346a2ab40ef27eb91c82209b0da41753  agent-testbench/README.md
f1f1cc4d2c579c13d294e1aa34a7c9b5bb0c0e1f557c1ffd30945b3c23ed0a27  agent-sandbox-runtime/docs/HOW_IT_WORKS.md
c3659412f8dae7b59d9c196438e6b241ad4e8796136cd3b67204a1dfd18444b2  safety-gymnasium/README.md
4618a2032f75cab7499319febac5b5f2f174ab811288bbccf30ebd5c3096d707  ragas/examples/ragas_examples/ag_ui_agent_experiments/README.md
c7f8c054cdd399c47c6c6bdecdd22c93dfe232fc840ddeff56cd2ec25d98a164  agentops/README.md
3a25bd68ae15a75d8b77269f44c3700d3c1c9622b4d1c4132b10fcbff8b40150  highway-env/README.md
fa6b3a0c80f3903ea6679963650032c2e501619d993707ed09ac04f4abd0e51e  agent-safety-bench/README.md
b9fdfe7864df6c49bed6414ddedfcbd35f6a84ab61a8e80021a2656a96f3bb47  dm-env/README.md
a0e1395e7385d33167d0937b38940578d10d764c9ad2b4c630741b144877b913  agentbenchkit/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
