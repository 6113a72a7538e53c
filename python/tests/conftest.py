"""Shared helpers of the pytest suite: seeded random inputs in the cuDNN
frontend's reference form (U(-2, 2) quantized) and the framework probes
that skip tests, saying why, where a framework or a GPU is absent."""

import atexit
import importlib.util
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile

import numpy as np
import pytest


# JAX would otherwise take most of the GPU's memory at its first array,
# leaving torch, in the same process, too little.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# Triton keys its on-disk cache by a kernel's source, not its file: a kernel
# compiled from another checkout of these tests comes back with that file's
# path in its line table, and the fault reports' source lines would name it.
# The suite compiles into a cache of its own, removed at exit.
if "TRITON_CACHE_DIR" not in os.environ:
    import shutil

    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="warpforge-triton-cache-")
    atexit.register(shutil.rmtree, os.environ["TRITON_CACHE_DIR"], True)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skips, saying so, without one)")


def have(module):
    return importlib.util.find_spec(module) is not None


def torch_or_skip():
    if not have("torch"):
        pytest.skip("torch is not installed")
    import torch

    return torch


def cpp_torch_or_skip():
    """torch, where warpforge.torch registered the C++ kernels (warpforge._warpforge_torch)."""
    torch = torch_or_skip()
    import warpforge.torch as wtorch

    if not wtorch.CPP_KERNELS:
        pytest.skip("warpforge._warpforge_torch was not built (no torch when the package was configured)")
    return torch


def recording_mode(kind):
    """A torch function mode ("function") or dispatch mode ("dispatch") that
    runs what it sees and records it (.seen: each function's str), for tests
    that torch sees an operator."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    base = TorchFunctionMode if kind == "function" else TorchDispatchMode

    def init(self):
        base.__init__(self)
        self.seen = []

    def record(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))

    method = "__torch_function__" if kind == "function" else "__torch_dispatch__"
    return type(f"Recording{base.__name__}", (base,), {"__init__": init, method: record})()


def core_only_pythonpath(folder):
    """A PYTHONPATH whose package has _warpforge alone beside the Python
    sources (linked into `folder`), as a build that did not see torch makes it."""
    import warpforge

    core = warpforge._warpforge.__file__
    (folder / "warpforge").mkdir()
    (folder / "warpforge" / os.path.basename(core)).symlink_to(core)
    sources = os.path.dirname(os.path.dirname(warpforge.__file__))
    return f"{folder}{os.pathsep}{sources}"


_zygote = None


def run_python(args, env, cwd=None, timeout=300):
    """subprocess.run([sys.executable, *args], env=env, cwd=cwd,
    capture_output=True, text=True, timeout=timeout) for a program that
    imports torch: forked by torch_zygote.py, an interpreter that imported
    torch once for all of them (4 CPU-s a program, most of its run), and run
    there as a fresh interpreter would run it in `env` (sys.path from its
    PYTHONPATH); a plain subprocess where torch is not installed."""
    global _zygote
    command = [sys.executable, *args]
    if not have("torch"):
        return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if _zygote is None or _zygote.poll() is not None:
        zygote_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        _zygote = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "torch_zygote.py")],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=zygote_env, bufsize=0)
        atexit.register(_end_zygote, _zygote)
    with tempfile.TemporaryDirectory() as folder:
        out, err = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
        request = pickle.dumps((list(args), dict(env), os.path.abspath(cwd or os.getcwd()), out, err))
        _zygote.stdin.write(struct.pack("<I", len(request)) + request)
        _zygote.stdin.flush()
        pid = _zygote_reply()
        if not select.select([_zygote.stdout], [], [], timeout)[0]:
            os.kill(pid, signal.SIGKILL)
            _zygote_reply()
            raise subprocess.TimeoutExpired(command, timeout)
        returncode = _zygote_reply()
        with open(out) as stdout, open(err) as stderr:
            return subprocess.CompletedProcess(command, returncode, stdout.read(), stderr.read())


def _end_zygote(zygote):
    zygote.stdin.close()
    zygote.wait()


def _zygote_reply():
    def read(size):
        data = b""
        while len(data) < size:
            chunk = os.read(_zygote.stdout.fileno(), size - len(data))
            if not chunk:
                raise RuntimeError(f"torch_zygote.py ended (exit {_zygote.wait()}): its errors are above")
            data += chunk
        return data

    return pickle.loads(read(struct.unpack("<I", read(4))[0]))


def torch_cuda_or_skip():
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA GPU")
    return torch


@pytest.fixture
def rng():
    return np.random.default_rng(2026)


def uniform(rng, *shape):
    return rng.uniform(-2.0, 2.0, size=shape).astype(np.float32)


def affine_kernel():
    """y = 2x + 1 for 256 floats, one thread each: parameters x, then the result y."""
    import warpforge

    k = warpforge.Kernel("affine", "sm_80")
    x, y = k.param_ptr("x", 4), k.param_ptr("y", 4)
    offset = k.reg("u64")
    k.mul_wide(offset, k.sreg("tid.x"), 4)
    v = k.reg("f32")
    k.ld("global", "f32", v, x + offset)
    k.fma(v, v, warpforge.f32(2.0), warpforge.f32(1.0))
    k.st("global", "f32", y + offset, v)
    return k
