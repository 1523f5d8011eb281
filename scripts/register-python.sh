#!/usr/bin/env bash
# Makes `import rpe` work for Debian's python3 and for the python3 first on
# PATH (when that is another interpreter): a .pth file pointing at python/,
# plus NumPy/matplotlib for an interpreter that lacks them. The package finds
# build/lib/librpe-c.so next to it. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD/python"

register() { # $1 = interpreter
  local py=$1 site
  site=$("$py" -c 'import site, sys; p = [d for d in site.getsitepackages() if d.startswith(sys.prefix) or "dist-packages" in d]; print(p[0])' 2>/dev/null) || return 0
  mkdir -p "$site"
  if [[ "$(cat "$site/rpe.pth" 2>/dev/null)" != "$src" ]]; then
    echo "$src" > "$site/rpe.pth"
    echo "register-python: $py now imports rpe from $src"
  fi
  if ! "$py" -c 'import numpy, matplotlib' >/dev/null 2>&1; then
    if [[ "$py" == /usr/bin/python3 ]]; then
      echo "register-python: python3-numpy/python3-matplotlib missing" >&2
      return 1
    fi
    echo "register-python: installing numpy and matplotlib for $py (PyPI)"
    "$py" -m pip install -q numpy matplotlib pytest \
      || echo "register-python: warning: pip failed for $py; use /usr/bin/python3" >&2
  fi
}

register /usr/bin/python3
other=$(command -v python3 || true)
if [[ -n "$other" && "$(readlink -f "$other")" != "$(readlink -f /usr/bin/python3)" ]]; then
  register "$other"
fi
