"""A tutorial kernel as a test case: its tensors (inputs generated from a
seed, outputs poisoned), the launches that compute the outputs, the float64
reference and the tutorial's tolerance.

The same case runs on the simulator (CPU tensors), on a GPU (CUDA tensors,
to record the GPU's results: recording.py) and under TRITON_INTERPRET=1 (the
benchmark), so its inputs must be the same bits everywhere: they come from
a counter-based generator (SplitMix64 of the element index and the seed)
computed in integers and float64, then rounded to the tensor's dtype by
torch.
"""

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

_POISON = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF, 8: 0xFFFFFFFFFFFFFFFF}


def _splitmix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def uniform(seed, count, low, high):
    """`count` float64 values in [low, high): 53-bit uniforms of SplitMix64
    of (seed, index), the same on every machine."""
    with np.errstate(over="ignore"):
        index = np.arange(count, dtype=np.uint64) + np.uint64(seed) * np.uint64(0x100000001B3)
        bits = _splitmix64(_splitmix64(index))
    u = (bits >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return low + (high - low) * u


@dataclass
class Tensor:
    """One tensor of a case. init: 'uniform' (in [low, high)), 'zeros',
    'poison' (all bits set: NaN, -1), 'values' (the given `values`), or
    'pointers' (int64 addresses of the tensors named in `points_to`, for
    kernels that read tables of pointers)."""

    shape: tuple
    dtype: str  # a torch dtype's name: float16, float32, float8_e5m2, int32, int64, ...
    init: str = "uniform"
    low: float = -2.0
    high: float = 2.0
    points_to: tuple = ()
    values: tuple = ()

    @property
    def count(self):
        return math.prod(self.shape)


@dataclass
class Case:
    """name: the tutorial and variant ('matmul_fp16'); tensors: name ->
    Tensor, in the order they are made; outputs: the tensors the kernels
    write, compared with the reference within (atol, rtol) each; launch(t):
    runs the kernels on the dict of tensors; reference(t): float64 expected
    outputs from the inputs; targets: where the tutorial runs."""

    name: str
    tensors: dict
    outputs: dict  # name -> (atol, rtol)
    launch: object
    reference: object
    seed: int = 1
    targets: tuple = ("sm_80", "sm_90a")
    notes: str = ""
    extra: dict = field(default_factory=dict)

    def make_tensors(self, device):
        """The case's tensors on `device` ('cpu' or a CUDA device)."""
        return make_tensors(self.tensors, self.seed, device)


def make_tensors(specs, seed, device):
    """Tensors of the specs (name -> Tensor) on `device`, inputs from the
    seed (the i-th tensor's seed is seed * 1000 + i)."""
    import torch

    made = {}
    for i, (name, spec) in enumerate(specs.items()):
        dtype = getattr(torch, spec.dtype)
        if spec.init == "uniform":
            values = torch.from_numpy(uniform(seed * 1000 + i, spec.count, spec.low, spec.high))
            t = values.reshape(spec.shape).to(dtype)
        elif spec.init == "zeros":
            t = torch.zeros(spec.shape, dtype=dtype)
        elif spec.init == "poison":
            t = torch.empty(spec.shape, dtype=dtype)
            size = t.element_size()
            t.view(_byte_view_dtype(size)).fill_(_signed(_POISON[size], size))
        elif spec.init == "values":
            t = torch.tensor(spec.values, dtype=dtype).reshape(spec.shape)
        elif spec.init == "pointers":
            t = None  # after the others: it holds their addresses on `device`
        else:
            raise ValueError(f"tensor '{name}': init '{spec.init}' is not one of uniform, zeros, poison, values, "
                             "pointers")
        made[name] = None if t is None else t.to(device)
    for name, spec in specs.items():
        if spec.init == "pointers":
            made[name] = torch.tensor([made[n].data_ptr() for n in spec.points_to], dtype=torch.int64, device=device)
    return made


def _byte_view_dtype(size):
    import torch

    return {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]


def _signed(value, size):
    return value - (1 << (8 * size)) if value >= 1 << (8 * size - 1) else value


def digest(tensor):
    """SHA-256 of a tensor's bytes (a CPU copy), for comparing inputs
    generated on two machines."""
    return hashlib.sha256(tensor_bytes(tensor)).hexdigest()


def tensor_bytes(tensor):
    import torch

    t = tensor.detach().contiguous().cpu()
    return t.view(torch.uint8).numpy().tobytes() if t.element_size() == 1 else \
        t.view(_byte_view_dtype(t.element_size())).numpy().tobytes()


def check_close(name, actual, expected, atol, rtol):
    """Fails (AssertionError naming the tensor, the worst element and the
    tolerance) unless |actual - expected| <= atol + rtol * |expected|
    everywhere, with NaN where and only where the reference has NaN."""
    import torch

    a = actual.detach().cpu().to(torch.float64)
    e = expected.detach().cpu().to(torch.float64)
    if a.shape != e.shape:
        raise AssertionError(f"{name}: shape {tuple(a.shape)}, expected {tuple(e.shape)}")
    nan_a, nan_e = torch.isnan(a), torch.isnan(e)
    if not torch.equal(nan_a, nan_e):
        where = torch.nonzero(nan_a != nan_e)[0].tolist()
        raise AssertionError(f"{name}: NaN at {where} in one of result ({a[tuple(where)].item()}) and "
                             f"reference ({e[tuple(where)].item()}) only")
    err = (a - e).abs().masked_fill(nan_e, 0)
    bound = atol + rtol * e.abs().masked_fill(nan_e, 0)
    if bool((err > bound).any()):
        worst = torch.argmax(err - bound).item()
        idx = np.unravel_index(worst, tuple(a.shape))
        raise AssertionError(f"{name}: {int((err > bound).sum())} of {a.numel()} elements outside atol={atol} "
                             f"rtol={rtol}; worst at {tuple(int(i) for i in idx)}: {a[idx].item()} vs "
                             f"{e[idx].item()}")
