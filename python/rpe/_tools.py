"""Console entry points `rpe-opt` and `rpe-compile` of the pip-installed
package: they run the executables installed in rpe/bin (or those of the build
named by $RPE_BUILD_DIR, or of the checkout's build/)."""

import os
import sys

from ._capi import _candidate_dirs


def tool_path(name):
    """Path of the executable `name` (rpe-opt, rpe-compile)."""
    candidates = [os.path.join(d, name) for d in _candidate_dirs("bin")]
    for path in candidates:
        if os.access(path, os.X_OK):
            return os.path.abspath(path)
    raise FileNotFoundError(
        "%s not found (looked in: %s); build rpe or pip install it"
        % (name, ", ".join(os.path.abspath(p) for p in candidates)))


def _exec(name):
    try:
        path = tool_path(name)
    except FileNotFoundError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    os.execv(path, [path] + sys.argv[1:])
    return 1  # not reached


def rpe_opt():
    return _exec("rpe-opt")


def rpe_compile():
    return _exec("rpe-compile")
