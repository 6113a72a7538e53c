"""The pieces the row-kernel examples (rms_norm.py, softmax.py) share,
written with the Python DSL one PTX instruction per call: the launch shape
of a row a CTA, a thread's 16-byte vectors of a bf16 row, their values as
f32, and an all-reduce of partial results over the CTA (shfl.sync.bfly in
each warp, then the warps' results through shared memory and one bar.sync).
The C++ library's kernels are built from the same ideas (src/ops/rows,
include/warpforge/tile/reduction.hpp), with more shapes (a row a warp or a
cluster, any dtype and alignment) and overflow-safe sums."""

import numpy as np

import warpforge
from warpforge import Shfl

VECTOR = 8  # bf16 elements in one 16-byte access


def threads_for(n, vectors_per_thread=2):
    """Threads of the CTA that holds a row of n bf16: a power of two, 32..1024."""
    t = 32
    while t < 1024 and t * vectors_per_thread * VECTOR < n:
        t *= 2
    return t


def vectors_for(n, threads):
    return -(-n // (VECTOR * threads))


class Row:
    """A thread's part of row `row` of a (rows, n) bf16 tensor at `base`:
    vector j covers elements (j·threads + tid)·8 ... + 7."""

    def __init__(self, k, n, threads):
        self.k, self.n, self.threads = k, n, threads
        self.vectors = vectors_for(n, threads)
        self.tid = k.sreg("tid.x")
        self.offset = k.reg("u64")
        k.mul_wide(self.offset, self.tid, VECTOR * 2)

    def in_row(self, j):
        """None where vector j lies in the row for every thread, else a predicate."""
        if (j + 1) * self.threads * VECTOR <= self.n:
            return None
        return self.k.setp(warpforge.Cmp.lt, self.tid + j * self.threads, self.n // VECTOR)

    def address(self, base, row):
        at_row = self.k.reg("u64")
        self.k.mul_wide(at_row, row, self.n * 2)
        return base + at_row + self.offset

    def load(self, base, row, fill_bits=0):
        """The thread's vectors (4 b32 words each: 8 bf16), `fill_bits` outside the row."""
        k, address, words = self.k, self.address(base, row) if row is not None else base + self.offset, []
        for j in range(self.vectors):
            w = k.regs("b32", 4)
            p = self.in_row(j)
            if p is not None:
                for r in w:
                    k.mov(r, fill_bits)
            load = lambda: k.ld("global", "b32", w, warpforge.at(address, j * self.threads * VECTOR * 2))  # noqa: E731
            k.guarded(p, load) if p is not None else load()
            words.append(w)
        return words

    def value(self, words, j, e):
        """Element e of vector j as an f32 register: a bf16 is the upper half of its f32."""
        k, word, out = self.k, words[j][e // 2], self.k.reg("b32")
        if e % 2 == 0:
            k.shl(out, word, 16)
        else:
            k.and_(out, word, 0xFFFF0000)
        f = k.reg("f32")
        k.mov(f, out)
        return f

    def store(self, base, row, value):
        """Stores value(j, e) (f32) rounded to bf16 for every element of the row's vectors."""
        k, address = self.k, self.address(base, row)
        for j in range(self.vectors):
            packed = []
            for e in range(0, VECTOR, 2):
                w = k.reg("b32")
                k.cvt_pack("bf16x2", w, value(j, e + 1), value(j, e))
                packed.append(w)
            p = self.in_row(j)
            store = lambda: k.st("global", "b32", warpforge.at(address, j * self.threads * VECTOR * 2), packed)  # noqa: E731
            k.guarded(p, store) if p is not None else store()


def allreduce(k, values, combine, threads, name="partials"):
    """Every thread of the CTA ends with combine() over all threads' values
    (f32 registers, updated in place): a butterfly over each warp's lanes,
    lane 0 of each warp writing its result to shared memory, bar.sync, then
    a butterfly over the warps' results, read by lane l from warp l % warps."""

    def butterfly(lanes):
        mask = 1
        while mask < lanes:
            other = [k.reg("f32") for _ in values]
            for v, o in zip(values, other):
                k.shfl_sync(Shfl.bfly, o, v, mask, 0x1F)
            combine(values, other)
            mask *= 2

    butterfly(32)
    warps = threads // 32
    if warps == 1:
        return
    partials = k.shared(name, 4 * len(values) * warps)
    lane, warp = k.sreg("laneid"), k.sreg("tid.x") >> 5
    base = k.address_of(partials)
    mine = base + warp * (4 * len(values))
    k.guarded(k.setp(warpforge.Cmp.eq, lane, 0),
              lambda: [k.st("shared", "f32", warpforge.at(mine, 4 * i), v) for i, v in enumerate(values)])
    k.bar_sync(0)
    theirs = base + (lane & (warps - 1)) * (4 * len(values))
    for i, v in enumerate(values):
        k.ld("shared", "f32", v, warpforge.at(theirs, 4 * i))
    butterfly(warps)


def check_shapes(shapes, run, close, device, convert, back, rng):
    """run() over `shapes`, printing each shape's error against its
    reference; returns how many were outside close()'s bound."""
    failures = 0
    for rows, n in shapes:
        y, ref = run(rows, n, device, rng, convert, back)
        ok = close(y, ref)
        failures += not ok
        print(f"rows={rows} n={n}: max |y - ref| = {np.abs(y - ref).max():.2e}", "ok" if ok else "FAILED")
    return failures
