#!/usr/bin/env bash
# Does hallubench, with every dependency, install on 64-bit Arm Linux (GH200-class nodes) from wheels alone?
# pip resolves the whole tree for that platform without installing anything (`--dry-run`), at the tested
# versions (constraints.txt; without them pip backtracks through torch releases of 450 MB each); a dependency
# with no aarch64 wheel (decord, for one) fails the resolution. Needs PyPI and downloads about 0.5 GB (torch's
# wheel), so it is not part of .ci/run. Exit 0 and a summary when it resolves.
# Usage: .ci/check_aarch64.sh [python version, default 3.11]
set -euo pipefail
cd "$(dirname "$0")/.."
python_version=${1:-3.11}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -m pip wheel --quiet --no-deps --no-build-isolation -w "$scratch" . >/dev/null
# The wheel tags a glibc 2.35 system takes (Ubuntu 22.04, as on GH200 nodes): manylinux2014 (glibc 2.17, most
# wheels) up to manylinux_2_35 (torch's are manylinux_2_28, NVIDIA's CUDA wheels newer). No pip
# configuration (PIP_CONFIG_FILE=/dev/null): this asks PyPI, not a local wheel store or cap made for this machine.
# (pip wants --target with --platform; --dry-run writes nothing there.)
env -u PIP_FIND_LINKS -u PIP_CONSTRAINT -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null \
  python3 -m pip install --dry-run --ignore-installed --progress-bar off --report "$scratch/report.json" \
  --target "$scratch/target" --only-binary=:all: --python-version "$python_version" \
  $(for glibc in $(seq 17 35); do echo --platform "manylinux_2_${glibc}_aarch64"; done) \
  --platform manylinux2014_aarch64 -c constraints.txt "$scratch"/hallubench-*.whl
python3 - "$scratch/report.json" "$python_version" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["install"]
names = sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items)
print(f"aarch64 (manylinux2014 to manylinux_2_35), Python {sys.argv[2]}: {len(names)} packages resolve from wheels alone:")
print("  " + " ".join(names))
PY
