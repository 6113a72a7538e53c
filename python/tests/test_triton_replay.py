"""The GPU's results for Triton's tutorial kernels, replayed on the simulator
bit for bit (warpforge.triton.recording): each recording in
tests/gpu_truth/triton/ (made by PART=tutorials scripts/gpu-triton.sh on an H100 or H200)
runs its recorded PTX on the simulator, which must give every recorded byte.
A case and target without a recording is reported as skipped, NOT VERIFIED,
naming the file it waits for. The recording machinery itself is checked on
recordings the simulator makes: a replay reproduces them, a changed byte is
found, regenerated inputs that differ are refused."""

import base64
import os

import pytest

from conftest import have

pytestmark = pytest.mark.skipif(not (have("torch") and have("triton")), reason="torch and triton are not installed")

TRUTH = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "gpu_truth", "triton")

if have("torch") and have("triton"):
    from warpforge import _warpforge
    from warpforge.triton import recording
    from warpforge.triton.tutorials import cases

    PAIRS = [(c.name, t) for c in cases() for t in c.targets]
else:
    PAIRS = []


@pytest.mark.parametrize("case,target", PAIRS, ids=[f"{c}-{t}" for c, t in PAIRS])
def test_gpu_recording_replays_bit_for_bit(case, target):
    path = os.path.join(TRUTH, recording.file_name(case, target))
    if not os.path.exists(path):
        pytest.skip(f"NOT VERIFIED: no GPU recording of {case} for {target} ({os.path.relpath(path)}); "
                    "PART=tutorials scripts/gpu-triton.sh on an H100/H200 makes it")
    truth = recording.load(path)
    differing = recording.differences(truth, recording.replay(truth))
    listed = recording.departure(truth, differing) if differing else None
    report = (f"{case} on {target}, recorded on {truth['gpu']} ({truth['recorded']}, Triton {truth['triton']}): " +
              "; ".join(f"{n}: {k} elements differ, first {i}: GPU {w}, simulator {g}" for n, k, i, w, g in differing))
    assert not differing or (listed and not listed.startswith("beyond")), report + (f"; {listed}" if listed else "")
    if differing:
        pytest.xfail(f"NOT BIT FOR BIT (a known departure: {listed}): {report}")


@pytest.fixture(scope="module")
def simulator_recordings():
    # Pointer tables, host TMA maps and kernel-built ones (scratch memory):
    # the parameters a replay must rebuild.
    simulator = _warpforge.triton_simulator("sm_90a", False)
    wanted = ("grouped_gemm", "persistent_matmul_host_descriptor", "persistent_matmul_device_descriptor",
              "layer_norm")
    return [recording.record(c, "sm_90a", simulator) for c in cases() if c.name in wanted]


def test_replay_reproduces_a_recording_the_simulator_made(simulator_recordings):
    for made in simulator_recordings:
        assert made["launches"] and made["outputs"]
        assert recording.differences(made, recording.replay(made)) == [], made["case"]


def test_replay_finds_a_changed_byte(simulator_recordings):
    made = dict(simulator_recordings[0])
    name = next(iter(made["outputs"]))
    data = bytearray(base64.b64decode(made["outputs"][name]))
    data[6] ^= 0x01  # the element holding byte 6
    made["outputs"] = dict(made["outputs"], **{name: base64.b64encode(bytes(data)).decode()})
    found = recording.differences(made, recording.replay(made))
    assert len(found) == 1 and found[0][0] == name and found[0][1] == 1


def test_replay_refuses_inputs_that_regenerate_differently(simulator_recordings):
    made = dict(simulator_recordings[0])
    name = next(iter(made["input_digests"]))
    made["input_digests"] = dict(made["input_digests"], **{name: "0" * 64})
    with pytest.raises(recording.StaleRecording, match=f"input '{name}' regenerated here differs"):
        recording.replay(made)
