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
SDISTS=(inspect-k8s-sandbox==0.14.0 nemo-evaluator==0.3.0 control-arena==20.1.1 multi-swe-bench==1.1.2
        mini-swe-agent==2.4.6 swe-rex==1.4.0 swesmith==0.0.9 alfworld==0.4.2 scienceworld==1.2.3)

for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
inspect_k8s_sandbox-0.14.0.tar.gz	inspect_k8s_sandbox-0.14.0/docs/docs/design/limitations.md	inspect-k8s-sandbox/docs/docs/design/limitations.md
nemo_evaluator-0.3.0.tar.gz	nemo_evaluator-0.3.0/docs/architecture/sandbox.md	nemo-evaluator/docs/architecture/sandbox.md
control_arena-20.1.1.tar.gz	control_arena-20.1.1/control_arena/settings/vllm/README.md	control-arena/control_arena/settings/vllm/README.md
multi_swe_bench-1.1.2.tar.gz	multi_swe_bench-1.1.2/README.md	multi-swe-bench/README.md
mini_swe_agent-2.4.6.tar.gz	mini_swe_agent-2.4.6/README.md	mini-swe-agent/README.md
swe_rex-1.4.0.tar.gz	swe_rex-1.4.0/README.md	swe-rex/README.md
swesmith-0.0.9.tar.gz	swesmith-0.0.9/README.md	swesmith/README.md
alfworld-0.4.2.tar.gz	alfworld-0.4.2/README.md	alfworld/README.md
scienceworld-1.2.3.tar.gz	scienceworld-1.2.3/README.md	scienceworld/README.md
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
723596da4046d6a81f74116cad41fda31b1ba4f6ef2f96e5867362d58a00b207  inspect-k8s-sandbox/docs/docs/design/limitations.md
814ff53aa60c4c7475fe34ca2ea6a36f3344282c8849a122d40438f4d36f251a  nemo-evaluator/docs/architecture/sandbox.md
d380f1ebd73401dceafe03dbdbb49b66061fbe74106cdfafd9208bd3f8099032  control-arena/control_arena/settings/vllm/README.md
f1bef6ea0ba9b9062ba9e70ec5aa92d1b8dca795be1eb4adba68a299189a369c  multi-swe-bench/README.md
9982d90b7566f2f3fa5e9811b475d5e8e2a84e2df80cf3f1e4be6e820b129835  mini-swe-agent/README.md
a0c12897222681e2015cf2adb0cfe36247194c056279ac19671c513994ea68b3  swe-rex/README.md
058ccfb4465b3d067ac53eae9db43d55dfdaf180fcae438880901e3b192584b7  swesmith/README.md
57285c6ec91cbd135148a992814c9a2f943d40e781cd9ed7c4169b5f9131224a  alfworld/README.md
ee837cd7304d73a6bbf59a3d30e689bd8100cbd4ed24063ce1199fcf4fb45ff9  scienceworld/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
