"""The console entry points of the pip-installed package (rpe._tools) and
the version the tools and the C API report, from the checkout's build."""

import os
import subprocess
import sys

import pytest

from rpe import _capi, _tools


def _tool_env():
    """The environment for running the tools: without the shared sanitizer
    runtime the sanitized test run preloads into Python (a sanitized tool
    links its own, and two ASan runtimes abort)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def test_tool_path_finds_the_build():
    build = os.environ.get("RPE_BUILD_DIR")
    for name in ("rpe-opt", "rpe-compile"):
        path = _tools.tool_path(name)
        assert os.path.basename(path) == name and os.access(path, os.X_OK)
        if build:
            assert path == os.path.join(os.path.abspath(build), "bin", name)


def test_tool_path_missing_tool_says_where_it_looked():
    with pytest.raises(FileNotFoundError, match="no-such-tool not found"):
        _tools.tool_path("no-such-tool")


@pytest.mark.parametrize("name", ["rpe-opt", "rpe-compile"])
def test_entry_point_runs_the_tool(name):
    # What the console script does: exec the tool with the arguments.
    code = ("import sys; sys.argv = [%r, '--version']; "
            "from rpe import _tools; _tools.%s()" % (name, name.replace("-", "_")))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, check=True, env=_tool_env()).stdout
    assert "rpe 0.1.0 (LLVM 22." in out


def test_library_and_tools_report_one_version():
    library = _capi.Compiler().version()
    assert library.startswith("rpe 0.1.0 (LLVM 22."), library
    for name in ("rpe-opt", "rpe-compile"):
        out = subprocess.run([_tools.tool_path(name), "--version"],
                             capture_output=True, text=True, check=True,
                             env=_tool_env()).stdout
        assert library in out.splitlines(), (name, out)



def test_compile_object_not_written_to_a_terminal():
    # stdout a terminal (a pseudo-terminal here): an object is refused with
    # a diagnostic, and nothing reaches the terminal.
    import pty
    source = os.path.join(os.path.dirname(__file__), "..", "..", "test",
                          "Tools", "rpe-compile", "Inputs", "small.mlir")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([_tools.tool_path("rpe-compile"), source,
                               "--emit=obj"], stdout=follower,
                              stderr=subprocess.PIPE, text=True,
                              env=_tool_env(), timeout=120)
        os.set_blocking(leader, False)
        try:
            printed = os.read(leader, 65536)
        except BlockingIOError:
            printed = b""
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 1
    assert ("error: not writing --emit=obj (binary) to the terminal"
            in proc.stderr), proc.stderr
    assert printed == b""
