"""The Python DSL made from the PTX vocabulary: warpforge.Opcode and
warpforge.Mod hold every opcode and word the C++ vocabulary has (nothing
listed in Python), k.op emits any of them spelled as PTX spells it, with
the C++ escape hatch's checks, and the typed wrappers are checked against
the same vocabulary (every instruction they emit reads back through it)."""

import re

import pytest

import warpforge
from warpforge import Mod, Opcode, _warpforge

ptx = _warpforge.ptx


def statements(k):
    body = k.ptx().split("{", 1)[1].rsplit("}", 1)[0]
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith(".reg")]


def members(enum):
    return [getattr(enum, name) for name in dir(enum) if isinstance(getattr(enum, name), enum)]


def test_the_enums_are_the_vocabulary():
    opcodes = members(Opcode)
    # every opcode once, each spelled as PTX does and read back to itself
    assert len({ptx.spelling(o) for o in opcodes}) == len(opcodes) > 100  # 135 with PTX ISA 9.0
    for o in opcodes:
        assert ptx.parse_opcode(ptx.spelling(o)) == (o, [])
    mods = members(Mod)
    assert len({ptx.spelling(m) for m in mods}) == len(mods) > 500  # 559 with PTX ISA 9.0
    assert ptx.spelling(Mod.shared_cta) == "shared::cta" and ptx.spelling(Mod.global_) == "global"
    assert ptx.spelling(Mod.m64n256k16) == "m64n256k16"
    assert ptx.parse_opcode("ld.global.v4.b32") == (Opcode.ld, [Mod.global_, Mod.v4, Mod.b32])
    # a word means what its opcode takes: .lo compares in setp, halves in mul
    assert ptx.meaning(Mod.lo, Opcode.setp) == "comparison"
    assert ptx.meaning(Mod.lo, Opcode.mul) == "multiply mode"
    assert ptx.meaning(Mod.trans, Opcode.add) is None
    fewest, most, classes, targets = ptx.info(Opcode.wgmma)
    assert (fewest, most) == (0, 9) and "wgmma shape" in classes and "sm_90a" in targets


def test_k_op_spells_every_instruction_word_by_word():
    k = warpforge.Kernel("spelled", "sm_90a")
    d, a, b = k.reg("b32"), k.reg("b32"), k.reg("b32")
    p = k.reg("u64")
    k.op.shf.l.wrap.b32(d, a, b, 3)
    k.op.ld.global_.v2.b32([a, b], warpforge.at(p, 8))
    k.op.add.u32(d, a, 1)
    k.op.and_.b32(d, a, 0xFF)
    k.op.prmt.b32.f4e(d, a, b, 0)
    k.op.membar.gl()
    assert statements(k)[:6] == [
        "shf.l.wrap.b32 %r0, %r1, %r2, 3;",
        "ld.global.v2.b32 {%r1, %r2}, [%rd0+8];",
        "add.u32 %r0, %r1, 1;",
        "and.b32 %r0, %r1, 255;",
        "prmt.b32.f4e %r0, %r1, %r2, 0;",
        "membar.gl;",
    ]
    assert repr(k.op.cp.async_.bulk.tensor._2d) == "cp.async.bulk.tensor.2d"


def test_k_op_refuses_what_ptx_does_not_have_and_checks_as_inst_does():
    k = warpforge.Kernel("refused", "sm_80")
    r = k.reg("b32")
    with pytest.raises(warpforge.DslError, match="'frobnicate' is not an opcode"):
        k.op.frobnicate
    with pytest.raises(warpforge.DslError, match="'q32' is not a modifier"):
        k.op.add.q32
    with pytest.raises(warpforge.DslError, match="takes 3 operands, got 2"):
        k.op.add.u32(r, r)
    with pytest.raises(warpforge.TargetError, match="sm_90"):
        k.op.elect.sync(r, 0xFFFFFFFF)  # elect is sm_90's
    with pytest.raises(warpforge.DslError, match="is not a modifier of any PTX instruction"):
        k.inst("add.q32", r, r, r)


def test_the_typed_wrappers_emit_words_of_the_vocabulary():
    """A kernel that uses many typed wrappers: every instruction it emits reads
    back through the vocabulary to the same spelling."""
    k = warpforge.Kernel("typed", "sm_90a")
    x = k.param_ptr("x", 4)
    i = k.sreg("tid.x")
    f = k.reg("f32")
    k.ld("global", "f32", f, x)
    k.fma(f, f, warpforge.f32(2.0), warpforge.f32(1.0))
    k.cvt(k.reg("f16"), f, round=warpforge.Round.rn)
    k.shfl_sync(warpforge.Shfl.bfly, k.reg("b32"), i, 1, 31)
    k.wgmma_fence()
    k.fence_proxy_async_shared()
    k.st("global", "f32", x, f)
    seen = 0
    for line in statements(k):
        word = re.match(r"(?:@!?\S+\s+)?([a-z][\w.:]*)", line)
        if word and not line.endswith(":"):
            opcode, modifiers = ptx.parse_opcode(word.group(1))
            assert ".".join([ptx.spelling(opcode)] + [ptx.spelling(m) for m in modifiers]) == word.group(1)
            seen += 1
    assert seen >= 10
