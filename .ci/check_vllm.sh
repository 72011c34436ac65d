#!/usr/bin/env bash
# Which vLLM releases install beside hallubench in one environment? For each release named (default: the ones the
# install docs page names, docs/topics/install.md), pip resolves vLLM and hallubench's declared ranges together without installing anything
# (`--dry-run`) and prints the transformers and torch it would pick, or the conflict. Needs PyPI (metadata only),
# so it is not part of .ci/run. Exit 0 when every release behaves as that page says: 0.33.0 and 0.32.0 resolve,
# 0.31.0 does not.
# Usage: .ci/check_vllm.sh [RELEASE=expected ...], e.g. .ci/check_vllm.sh 0.33.0=ok 0.31.0=conflict
set -uo pipefail
cd "$(dirname "$0")/.."
checks=("$@")
[ ${#checks[@]} -eq 0 ] && checks=(0.33.0=ok 0.32.0=ok 0.31.0=conflict)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for check in "${checks[@]}"; do
  release=${check%%=*} expected=${check#*=}
  if python3 -m pip install --dry-run --ignore-installed --quiet --report "$scratch/$release.json" \
       "vllm==$release" . >"$scratch/$release.log" 2>&1; then
    got=ok
    picked=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(', '.join(f\"{i['metadata']['name']} {i['metadata']['version']}\" for i in r['install'] if i['metadata']['name'].lower() in ('transformers', 'torch')))" "$scratch/$release.json")
  else
    got=conflict
    picked=$(grep -m1 "^ERROR: Cannot install" "$scratch/$release.log")
  fi
  echo "vllm $release: $got ($picked)"
  [ "$got" = "$expected" ] || { echo "  expected $expected"; status=1; }
done
exit $status
