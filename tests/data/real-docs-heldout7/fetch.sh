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
SDISTS=(openbench==0.5.3 cua-bench==0.3.1 hud==0.6.21 opensandbox==1.1.1
        toolbench==0.12.0 sotopia==0.1.5 daytona==0.226.1 chatarena==0.1.18)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
openbench-0.5.3.tar.gz	openbench-0.5.3/README.md	openbench/README.md
cua_bench-0.3.1.tar.gz	cua_bench-0.3.1/README.md	cua-bench/README.md
hud-0.6.21.tar.gz	hud-0.6.21/README.md	hud/README.md
opensandbox-1.1.1.tar.gz	opensandbox-1.1.1/README.md	opensandbox/README.md
toolbench-0.12.0.tar.gz	toolbench-0.12.0/userdocs/guides/running-a-benchmark.md	toolbench/userdocs/guides/running-a-benchmark.md
sotopia-0.1.5.tar.gz	sotopia-0.1.5/docs/pages/python_API/envs/parallel.md	sotopia/docs/pages/python_API/envs/parallel.md
sotopia-0.1.5.tar.gz	sotopia-0.1.5/docs/pages/concepts/environments.md	sotopia/docs/pages/concepts/environments.md
daytona-0.226.1.tar.gz	daytona-0.226.1/README.md	daytona/README.md
chatarena-0.1.18.tar.gz	chatarena-0.1.18/README.md	chatarena/README.md
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
95b2f41e52afc2ce6141aa8c589a72a94afb8fad6a6005e0505fddc307bd0c73  openbench/README.md
93d8f47fbd78e0b1fb0bef7970068f21a661ba9d711867ca925aa3434803201e  cua-bench/README.md
612d1e0e91ca899842ec122c71263068d2cd4c745fe0c0908ee716e50ad0d002  hud/README.md
6eef13d470bbb8073dade5c78972d9a10f1cacbb3f8e3614f30d4e0178a9d41b  opensandbox/README.md
b9b2cb1f555ee15f8dc98e0093489ea9770fce3c447bdfe8adfb8a4c3e626612  toolbench/userdocs/guides/running-a-benchmark.md
6bd4e85b6c1f65684cd32b05e1da5c3e810a95b50db64878efdc29a87bf471ad  sotopia/docs/pages/python_API/envs/parallel.md
9a6f54a1467955be70262feb406b880a60fd409fa17623159a916ff38fa537b3  sotopia/docs/pages/concepts/environments.md
d3a1ff4c1778376d215af55de6dd0d4d2e17fd15cb180895ffa7649dbea5636c  daytona/README.md
1278ed5f7c73bb54d9cc2d13fc84fb0a052e3070582959ba0af56379ef71e22b  chatarena/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
