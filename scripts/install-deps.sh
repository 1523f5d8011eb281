#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages rpe needs when missing.
# Called by the README commands (`make demo`, `make test`) and by .ci/run.
set -euo pipefail

PKGS=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22
      libclang-rt-22-dev libomp-22-dev ninja-build cmake gcc g++ libgtest-dev python3
      python3-venv python3-numpy python3-pytest python3-pytest-xdist python3-matplotlib
      python3-psutil python3-pytest-timeout)

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

# nvdisasm (SASS of the assembled kernels: the lit tests check for tensor-core
# HMMA instructions). The CUDA toolkit here has ptxas but not nvdisasm; PyPI's
# nvidia-cuda-nvdisasm wheel has it. Unpacked into a cache directory (no
# environment is touched); a failed download only leaves those tests
# unsupported.
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
TOOLS=${XDG_CACHE_HOME:-$HOME/.cache}/rpe-cuda-tools
if [[ -x $CUDA_ROOT/bin/ptxas ]] && ! command -v nvdisasm >/dev/null \
   && [[ ! -x $CUDA_ROOT/bin/nvdisasm ]] && [[ ! -x $TOOLS/bin/nvdisasm ]]; then
  echo "install-deps: fetching nvdisasm (PyPI nvidia-cuda-nvdisasm) into $TOOLS"
  tmp=$(mktemp -d)
  if /usr/bin/python3 -m pip download -q --no-deps -d "$tmp" nvidia-cuda-nvdisasm \
     && /usr/bin/python3 - "$tmp" "$TOOLS" <<'PY'
import glob, os, stat, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(src, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/nvdisasm"))
    os.makedirs(os.path.join(dst, "bin"), exist_ok=True)
    out = os.path.join(dst, "bin", "nvdisasm")
    with open(out, "wb") as f:
        f.write(z.read(name))
    os.chmod(out, os.stat(out).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
PY
  then :; else
    echo "install-deps: warning: could not fetch nvdisasm; the SASS checks will be unsupported" >&2
  fi
  rm -rf "$tmp"
fi
