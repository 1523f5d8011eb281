#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages rpe needs when missing.
# Called by the README commands (`make demo`, `make test`) and by .ci/run.
set -euo pipefail

PKGS=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
      libclang-rt-22-dev libomp-22-dev ninja-build cmake gcc g++ libgtest-dev python3
      python3-venv python3-numpy python3-pytest python3-pytest-xdist python3-matplotlib)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# lit is shipped by llvm-22-tools as /usr/lib/llvm-22/build/utils/lit/lit.py.
if [[ ! -x /usr/lib/llvm-22/bin/FileCheck ]]; then
  echo "install-deps: FileCheck missing after install" >&2
  exit 1
fi
