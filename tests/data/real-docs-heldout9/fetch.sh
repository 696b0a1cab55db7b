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
SDISTS=(agent-evaluation-lab==0.7.0 bsuite==0.3.6 bencharness==0.1.0 agentworkbench==0.3.9
        benchtrace==0.1.0 boxkite-sandbox==0.2.2 agent-eval-forge==0.2.0 judgeval==1.6.0)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
agent_evaluation_lab-0.7.0.tar.gz	agent_evaluation_lab-0.7.0/README.md	agent-evaluation-lab/README.md
bsuite-0.3.6.tar.gz	bsuite-0.3.6/README.md	bsuite/README.md
bencharness-0.1.0.tar.gz	bencharness-0.1.0/README.md	bencharness/README.md
agentworkbench-0.3.9.tar.gz	agentworkbench-0.3.9/docs/concepts/experiments.md	agentworkbench/docs/concepts/experiments.md
benchtrace-0.1.0.tar.gz	benchtrace-0.1.0/README.md	benchtrace/README.md
boxkite_sandbox-0.2.2.tar.gz	boxkite_sandbox-0.2.2/README.md	boxkite-sandbox/README.md
agent_eval_forge-0.2.0.tar.gz	agent_eval_forge-0.2.0/docs/design/runner.md	agent-eval-forge/docs/design/runner.md
judgeval-1.6.0.tar.gz	judgeval-1.6.0/README.md	judgeval/README.md
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
7358328f297fce54e52120ef24aa70c352746b99d3c829da166b927e3820e340  agent-evaluation-lab/README.md
249bd6542791413834666720871624c1c37bf3c38b6c74522fb4c3e8fc5147f8  bsuite/README.md
031be5dddfa82614e2a01551a7532e97e5a85183d80bda8319eb1053adb02e21  bencharness/README.md
11b4b836a5901e72cf24c91a224b1416923983aede122801442080ee9113f199  agentworkbench/docs/concepts/experiments.md
9f08ab29142ee58b165daff9842cfc663d292f3cc097067d6d26b5438bda693b  benchtrace/README.md
1808af89f25117341f539e78b849beadabff9712ea957c66a3bf1573b865f0fb  boxkite-sandbox/README.md
1014d834514532258026406bd6d17ba54df56273397e21a5002dc2c97621b4f4  agent-eval-forge/docs/design/runner.md
b13e64669de68701f37a90f361072c83398175a4385da97b033c4088f6b7f2a7  judgeval/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
