"""Triton's tutorial kernels (warpforge.triton.tutorials) compiled by Triton's
CUDA backend for sm_80 and sm_90a and run on the simulator through
warpforge.triton's driver, each within the tutorial's tolerance of a
float64 reference on the same inputs (outputs poisoned before the launch)."""

import pytest

from conftest import have

pytestmark = pytest.mark.skipif(not (have("torch") and have("triton")), reason="torch and triton are not installed")

if have("torch") and have("triton"):
    from warpforge.triton.tutorials import cases
    from warpforge.triton.tutorials.case import check_close, tensor_bytes

    CASES = cases()
else:
    CASES = []


@pytest.fixture(params=["sm_80", "sm_90a"])
def target(request):
    import warpforge.triton

    warpforge.triton.use_simulator(request.param)
    yield request.param
    warpforge.triton.reset()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tutorial_within_its_tolerance_of_the_reference(case, target):
    tensors = case.make_tensors("cpu")
    inputs = {name: t.clone() for name, t in tensors.items() if name not in case.outputs}
    case.launch(tensors)
    expected = case.reference(tensors)
    for name, (atol, rtol) in case.outputs.items():
        check_close(f"{case.name} on {target}: {name}", tensors[name], expected[name], atol, rtol)
    for name, before in inputs.items():  # the kernels wrote nothing else (scratch tensors excepted)
        if case.tensors[name].init in ("uniform", "values"):
            assert tensor_bytes(tensors[name]) == tensor_bytes(before), f"{case.name}: input '{name}' was written"
