"""The multifunction unit's tables (src/sim/mufu_table.hpp) from a
recording of `warpforge-difftest mufu` (scripts/gpu-triton-mufu.sh):

    python3 tools/difftest/mufu_tables.py RECORDING_DIR src/sim/mufu

RECORDING_DIR holds the recording's <function>.npz files. For each function
over its reduced domain (src/sim/mufu_f32.cpp: every mantissa of [1, 2) for
rcp, of [1, 4) for rsqrt and sqrt, every x = k·2^-23 of [-1, 1) for ex2) the
GPU's result y, in units of its binade's last place, is predicted as
floor(F + e + 1/2): F the exact function in those units, e a quadratic in
the position t in [-1, 1) within each of 512 equal intervals of the domain,
fitted to y - F by least squares; the table holds the coefficients and the
residual y - prediction (nonzero for 0.4-1.8% of the inputs), encoded as
mufu_table.hpp describes. The simulator computes the prediction with the
same double operations."""
import os
import sys

import numpy as np

INTERVAL_BITS = 9


def encode(table, coefficients=np.zeros((0, 3)), interval_bits=0):
    """The WFMC bytes of an int8 residual table (values in [-127, 127]) and
    the intervals' coefficients."""
    table = np.asarray(table, dtype=np.int8)
    if (table == -128).any():
        raise ValueError("a table entry of -128 (outside the int8 range the recording keeps)")
    where = np.flatnonzero(table)
    values = table[where].astype(np.int64)
    gaps = np.diff(np.concatenate(([-1], where))) - 1
    mean = gaps.mean() if len(gaps) else 1.0
    k = max(0, int(np.floor(np.log2(max(mean, 1.0) * 0.69))))  # near-optimal for geometric gaps
    q, r = gaps >> k, gaps & ((1 << k) - 1)
    m = np.abs(values) - 1
    lengths = q + 1 + k + 1 + m + 1
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    bits = np.zeros(int(lengths.sum()), dtype=np.uint8)

    def ones(begin, count):  # bits[begin_i : begin_i + count_i] = 1
        total = int(count.sum())
        if total:
            offsets = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
            bits[np.repeat(begin, count) + offsets] = 1

    ones(starts, q)
    for j in range(k):  # remainder, most significant bit first
        bits[starts + q + 1 + j] = (r >> (k - 1 - j)) & 1
    bits[starts + q + 1 + k] = values < 0
    ones(starts + q + 2 + k, m)
    header = b"WFMC" + bytes([2, k, interval_bits, 0]) + np.array([len(table), len(where)], "<u4").tobytes()
    return header + np.asarray(coefficients, "<f8").tobytes() + np.packbits(bits).tobytes()


def decode(data):
    """The residual table of WFMC bytes (the encoder's test; the simulator's decoder is C++)."""
    assert data[:5] == b"WFMC\x02"
    k, interval_bits = data[5], data[6]
    entries, nonzero = np.frombuffer(data[8:16], "<u4")
    at_bits = 16 + 24 * ((1 << interval_bits) if interval_bits else 0)
    bits = np.unpackbits(np.frombuffer(data[at_bits:], np.uint8))
    table, at, pos = np.zeros(entries, np.int8), 0, 0
    for _ in range(nonzero):
        q = 0
        while bits[pos]:
            q, pos = q + 1, pos + 1
        pos += 1
        r = 0
        for _ in range(k):
            r, pos = r << 1 | int(bits[pos]), pos + 1
        negative, pos = bits[pos], pos + 1
        m = 0
        while bits[pos]:
            m, pos = m + 1, pos + 1
        pos += 1
        at += q << k | r
        table[at] = -(m + 1) if negative else m + 1
        at += 1
    return table


def f32_bits(first, count):
    return (np.uint32(first) + np.arange(count, dtype=np.uint32)).view(np.float32).astype(np.float64)


# Each table: its file, the recording's function and set, the domain's x
# (float64) and the exact function F (float64, as the simulator computes it).
TABLES = [
    ("rcp", "rcp", "ftz_1to2", lambda: f32_bits(0x3F800000, 1 << 23), lambda x: 1.0 / x),
    ("rsqrt", "rsqrt", "ftz_1to4", lambda: f32_bits(0x3F800000, 1 << 24), lambda x: 1.0 / np.sqrt(x)),
    ("sqrt", "sqrt", "ftz_1to4", lambda: f32_bits(0x3F800000, 1 << 24), np.sqrt),
    ("ex2", "ex2", "ftz_grid", lambda: np.arange(-(1 << 23), 1 << 23, dtype=np.float64) * 2.0**-23,
     lambda x: np.exp2(x.astype(np.longdouble)).astype(np.float64)),
]


def gpu_results(npz, set_name, x, opcode_ftz_f):
    """The GPU's f32 results: the correctly rounded f32 of F plus the recorded differences."""
    d = npz[set_name + ".d"].astype(np.int64)
    if (d == -128).any():
        raise ValueError(f"{set_name}: results outside the int8 range")
    cr = opcode_ftz_f(x)
    bits = cr.astype(np.float32).view(np.uint32).astype(np.int64)  # positive results
    return (bits + d).astype(np.uint32).view(np.float32).astype(np.float64)


def prediction(F, coefficients, interval_bits):
    """floor(F·sc + e(t) + 1/2), sc the binade's units, as the simulator computes it."""
    n = len(F)
    per = n >> interval_bits
    i = np.arange(n)
    t = (i % per) / per * 2.0 - 1.0
    c = coefficients[i // per]
    e = (c[:, 0] + c[:, 1] * t) + c[:, 2] * (t * t)
    sc = np.where(F < 1.0, 2.0**24, 2.0**23)
    return np.floor(F * sc + e + 0.5), sc


def table_of(npz, set_name, x, F_of):
    F = F_of(x)
    # The recording's correctly rounded results are F rounded once to f32
    # (the tool's long double references agree with these on this domain,
    # which the residuals' range check below would show otherwise).
    y = gpu_results(npz, set_name, x, lambda v: F)
    n = len(x)
    per = n >> INTERVAL_BITS
    sc = np.where(F < 1.0, 2.0**24, 2.0**23)
    yu = y * sc
    if not (yu == np.round(yu)).all():
        raise ValueError(f"{set_name}: a result outside its predicted binade")
    err = yu - F * sc
    t = (np.arange(per) / per) * 2.0 - 1.0
    V = np.stack([np.ones(per), t, t * t], 1)
    coefficients = np.stack([np.linalg.lstsq(V, err[j * per:(j + 1) * per], rcond=None)[0]
                             for j in range(1 << INTERVAL_BITS)])
    p, _ = prediction(F, coefficients, INTERVAL_BITS)
    residual = yu - p
    if np.abs(residual).max() > 127:
        raise ValueError(f"{set_name}: a residual beyond 127")
    return residual.astype(np.int8), coefficients


def main(recording, out):
    os.makedirs(out, exist_ok=True)
    for name, function, set_name, x_of, F_of in TABLES:
        npz = np.load(os.path.join(recording, function + ".npz"))
        residual, coefficients = table_of(npz, set_name, x_of(), F_of)
        data = encode(residual, coefficients, INTERVAL_BITS)
        with open(os.path.join(out, name + ".wfmc"), "wb") as f:
            f.write(data)
        values, counts = np.unique(residual, return_counts=True)
        print(f"{name}: {len(residual)} entries, residuals {dict(zip(values.tolist(), counts.tolist()))}, "
              f"{len(data)} bytes")


if __name__ == "__main__":
    if len(sys.argv) == 3:
        main(*sys.argv[1:])
        sys.exit(0)
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        rng = np.random.default_rng(1)
        t = (rng.choice([0, 0, 0, 0, 0, 0, 1, -1, 2, -3], size=5000)).astype(np.int8)
        t[0], t[-1] = 5, -7
        assert (decode(encode(t)) == t).all()
        assert (decode(encode(t, np.ones((4, 3)), 2)) == t).all()
        print("ok")
        sys.exit(0)
    sys.exit(__doc__)
