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
SDISTS=(swebench==5.0.2 desktop-env==1.0.2 inspect-evals==0.28.0 agentdojo==0.1.35 evals==3.0.1.post1)
for spec in "${SDISTS[@]}"; do
  python3 -m pip download --no-deps --no-binary :all: --ignore-requires-python -q -d "$WORK/sdist" "$spec"
done

# archive <TAB> member inside archive <TAB> output path (relative to OUTPUT_DIR)
cat > "$WORK/items.tsv" <<'ITEMS'
swebench-5.0.2.tar.gz	swebench-5.0.2/README.md	swebench/README.md
desktop_env-1.0.2.tar.gz	desktop_env-1.0.2/README.md	desktop-env/README.md
inspect_evals-0.28.0.tar.gz	inspect_evals-0.28.0/src/inspect_evals/swe_bench/README.md	inspect-evals/src/inspect_evals/swe_bench/README.md
inspect_evals-0.28.0.tar.gz	inspect_evals-0.28.0/src/inspect_evals/cybench/README.md	inspect-evals/src/inspect_evals/cybench/README.md
agentdojo-0.1.35.tar.gz	agentdojo-0.1.35/docs/concepts/task_suite_and_tasks.md	agentdojo/docs/concepts/task_suite_and_tasks.md
agentdojo-0.1.35.tar.gz	agentdojo-0.1.35/docs/concepts/functions_runtime.md	agentdojo/docs/concepts/functions_runtime.md
evals-3.0.1.post1.tar.gz	evals-3.0.1.post1/README.md	evals/README.md
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
7f6c99470e27965d4220a41f703766fb98ae2bf1b3bc5633deed76d6b30d1088  swebench/README.md
13f43763a5b0bb57f05b53192836008a84b381e734c90902f091643fb684ae28  desktop-env/README.md
685f126a53d93659f228bf320263e1599839a6a98566d18c33ea7ca939a42007  inspect-evals/src/inspect_evals/swe_bench/README.md
2607e0f06a053b6d5536a6cb7a7bb7bad7889168f153019b27e0c57e96b09d42  inspect-evals/src/inspect_evals/cybench/README.md
1cdb32ebe9de269cc5913599fe842ad9e901a63560ab522eb00fd79479bbe51a  agentdojo/docs/concepts/task_suite_and_tasks.md
fa2f192658d1fa43548bedbb60b9e353dfa12d6a2c08fd43fc228869e782a6f2  agentdojo/docs/concepts/functions_runtime.md
4314cfaa280796bb30939b86c5180ad3c94be592f36c471c4f3f7aac8fb8fb5f  evals/README.md
SUMS

cd "$OUT"
sha256sum -c "$WORK/SHA256SUMS"
echo "All files re-created and verified in $OUT"
