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
SDISTS=(autogenbench==0.0.3 letta-evals==0.26.0 llm-sandbox==0.3.46 openreward==0.1.167
        agbenchmark==0.0.10 textworld==1.7.0 gymnasium==1.4.0 pydantic-evals==2.62.0)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
autogenbench-0.0.3.tar.gz	autogenbench-0.0.3/README.md	autogenbench/README.md
autogenbench-0.0.3.tar.gz	autogenbench-0.0.3/CONTRIBUTING.md	autogenbench/CONTRIBUTING.md
letta_evals-0.26.0.tar.gz	letta_evals-0.26.0/README.md	letta-evals/README.md
llm_sandbox-0.3.46.tar.gz	llm_sandbox-0.3.46/docs/interactive-sessions.md	llm-sandbox/docs/interactive-sessions.md
openreward-0.1.167.tar.gz	openreward-0.1.167/README.md	openreward/README.md
agbenchmark-0.0.10.tar.gz	agbenchmark-0.0.10/agbenchmark/README.md	agbenchmark/agbenchmark/README.md
agbenchmark-0.0.10.tar.gz	agbenchmark-0.0.10/agbenchmark/challenges/CHALLENGE.md	agbenchmark/agbenchmark/challenges/CHALLENGE.md
textworld-1.7.0.tar.gz	textworld-1.7.0/README.md	textworld/README.md
gymnasium-1.4.0.tar.gz	gymnasium-1.4.0/README.md	gymnasium/README.md
pydantic_evals-2.62.0.tar.gz	pydantic_evals-2.62.0/README.md	pydantic-evals/README.md
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
efe3ef73241caafd918ebbb2af0a7edad6bfaf264fb98955204b9a1d07321b03  autogenbench/README.md
9de0da9dc4016e058a84fff8f7f87244185034f7dc48810b1ea9e811f1704254  autogenbench/CONTRIBUTING.md
0c8c434a208eec4d6a5d5a259a56f7c31b24fe2321a1beef7df0d1f113ee8381  letta-evals/README.md
443e05385b66d2ae18b8f1fc3e3baf7704153086fdf8b96c1c37dbb1625f8390  llm-sandbox/docs/interactive-sessions.md
6230bfe3ee72e5a411598a016d60c3bf140ffb6ac53169bc2600e6cd98ae5963  openreward/README.md
ff1ba261670ceb058ca1cdc6c14cff4216a200ae2179c887a88f34077c6c881e  agbenchmark/agbenchmark/README.md
3e1c84d70d31d93d972c31e747092b73c46e530a9d5416bc5dedc94d52e08ebb  agbenchmark/agbenchmark/challenges/CHALLENGE.md
ee227420d571ba249133882d8781a3b7df709cf7efa488cf29379dc97743f67b  textworld/README.md
dd3052cd36f80a776d5884f8800798cc3855141dd0c3e09b5c14f1d6f152e4f3  gymnasium/README.md
7f0aa4f577c8f713b86e91d02e735cee6e95ae68c11076db06fc5eef2a435e13  pydantic-evals/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
