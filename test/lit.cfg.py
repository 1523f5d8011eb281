# -*- Python -*-
# lit configuration for rpe's regression tests.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "RPE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rpe_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "README.md"]

# A test that hangs (a pattern applied forever, a kernel that never ends)
# fails after 20 minutes with its name, instead of holding the suite until
# CI's limit. The slowest test takes about 30 s (a few times that sanitized).
# lit needs psutil for this (scripts/install-deps.sh installs it); a
# --timeout given to lit wins.
try:
    import psutil  # noqa: F401

    if not lit_config.maxIndividualTestTime:
        lit_config.maxIndividualTestTime = 1200
except ImportError:
    lit_config.note("psutil is missing: no per-test time limit")

config.substitutions.append(("%rpe_src_root", config.rpe_src_root))
config.substitutions.append(("%rpe_obj_root", config.rpe_obj_root))
config.substitutions.append(("%llvm_lib_dir", config.llvm_lib_dir))

# Runs a module lowered by rpe-cpu-pipeline whose `main` returns nothing.
runner_libs = ",".join(
    os.path.join(config.llvm_lib_dir, lib)
    for lib in ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so"))
config.substitutions.append(
    ("%mlir_runner",
     os.path.join(config.llvm_tools_dir, "mlir-runner")
     + " -e main -entry-point-result=void -shared-libs=" + runner_libs))
config.substitutions.append(
    ("%omp_mlir_runner",
     os.path.join(config.llvm_tools_dir, "mlir-runner")
     + " -e main -entry-point-result=void -shared-libs=" + runner_libs + ","
     + os.path.join(config.llvm_lib_dir, "libomp.so")))
config.substitutions.append(("%mlir_runner_libs", runner_libs))
config.substitutions.append(("%python", sys.executable))
# A C program that links the sanitized librpe-c.so (RPE_SANITIZE with clang)
# needs the shared ASan runtime first: `%rpe_preload prog args`.
if config.rpe_sanitizer_runtime:
    config.substitutions.append(
        ("%rpe_preload", "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0"
         % config.rpe_sanitizer_runtime))
else:
    config.substitutions.append(("%rpe_preload", ""))

# A build with RPE_SANITIZE: its static libraries need the sanitizer runtime
# in whatever links them.
if config.rpe_sanitize:
    config.available_features.add("rpe-sanitized")

# A C compiler driver for the tests that link compiled modules into programs.
cc = next((shutil.which(name) for name in ("cc", "gcc", "clang", "clang-22")
           if shutil.which(name)), None)
if cc:
    config.available_features.add("c-compiler")
    config.substitutions.append(("%cc", cc))

# The CUDA toolkit's ptxas (assembles the PTX of rpe-nvptx-pipeline) and
# libdevice (which gpu-module-to-binary links into kernels that call math
# functions): tests that produce device code need both; no GPU is needed.
cuda_root = os.environ.get("CUDA_ROOT", "/usr/local/cuda")
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_root, "bin", "ptxas")
    if os.path.exists(os.path.join(cuda_root, "bin", "ptxas")) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    if os.path.exists(os.path.join(cuda_root, "nvvm", "libdevice",
                                   "libdevice.10.bc")):
        config.available_features.add("cuda-toolkit")

# nvdisasm (the SASS of assembled kernels): the toolkit's, or the one
# scripts/install-deps.sh unpacks from PyPI's nvidia-cuda-nvdisasm.
cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
nvdisasm = next((p for p in (shutil.which("nvdisasm"),
                             os.path.join(cuda_root, "bin", "nvdisasm"),
                             os.path.join(cache, "rpe-cuda-tools", "bin",
                                          "nvdisasm"))
                 if p and os.access(p, os.X_OK)), None)
if nvdisasm:
    config.available_features.add("nvdisasm")
    config.substitutions.append(("%nvdisasm", nvdisasm))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.rpe_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("rpe-opt", unresolved="fatal"),
         ToolSubst("rpe-compile", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
