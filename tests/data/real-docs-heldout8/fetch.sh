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
SDISTS=(openenv-core==0.3.0 benchspec==0.0.5 prime-sandboxes==0.5.1 teambench==0.1.0
        benchflow==0.7.11 tracecore==1.1.3 portal-env==0.9.0 maseval==0.5.1)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
openenv_core-0.3.0.tar.gz	openenv_core-0.3.0/README.md	openenv-core/README.md
benchspec-0.0.5.tar.gz	benchspec-0.0.5/docs/concepts.md	benchspec/docs/concepts.md
prime_sandboxes-0.5.1.tar.gz	prime_sandboxes-0.5.1/README.md	prime-sandboxes/README.md
teambench-0.1.0.tar.gz	teambench-0.1.0/README.md	teambench/README.md
benchflow-0.7.11.tar.gz	benchflow-0.7.11/README.md	benchflow/README.md
tracecore-1.1.3.tar.gz	tracecore-1.1.3/agent_bench/spec/determinism.md	tracecore/agent_bench/spec/determinism.md
portal_env-0.9.0.tar.gz	portal_env-0.9.0/README.md	portal-env/README.md
maseval-0.5.1.tar.gz	maseval-0.5.1/README.md	maseval/README.md
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
29830af5f87e881161255695cb0287f29af7133caa8dd384636f3a7352cd10ec  openenv-core/README.md
a118fd9d15843ab9d11545376dbbcf5330bfcb4677ec2636c2aa281cd444f184  benchspec/docs/concepts.md
60688c1e3331cc673d4fd62e7cffe9ffbd0fd23ed5dc8d379aaa26a6370236bc  prime-sandboxes/README.md
e7dc8553cd542867521060268c4d1f4685b996694177ed7dcba06a152de4ea10  teambench/README.md
1712b055c953b6915811edd43d98fe38d70b744d3267f1d4b4b902848e5ae79b  benchflow/README.md
0bb32349a7a5ff697d80d30205c9e20e4a0621cdc2e2c05d62c0c8262a6b80bc  tracecore/agent_bench/spec/determinism.md
a00cc382373f0d57208acb53eaf37ecca3895247b48854d5cfc1e874d733ad5e  portal-env/README.md
5b8e29337404ea186ab8ed92864ac71b1968c54ef22ff975be18a4371a7b61ac  maseval/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
