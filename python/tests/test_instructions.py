"""The Python DSL made from the PTX vocabulary: warpforge.Opcode and
warpforge.Mod hold every opcode and word the C++ vocabulary has (nothing
listed in Python), k.op emits any of them spelled as PTX spells it, with
the C++ escape hatch's checks, and the hand-written bindings are checked
against the same vocabulary: every opcode is reachable from Python (or
listed as absent, with why), and every Kernel method is either listed as no
instruction wrapper or emits, in a sample call, opcodes of the vocabulary,
among them the one its name names."""

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


# --- the Python DSL's bindings checked against the vocabulary ---------------

# Opcodes of the vocabulary that k.op does not emit from Python, each with
# why. None: k.op reaches every one (the test below emits each).
ABSENT_FROM_PYTHON = {}


def test_every_opcode_of_the_vocabulary_is_reachable_from_python():
    """Each opcode emitted through k.op, bare, with its fewest operands, on
    the last target that has it: the instruction comes out spelled as PTX
    spells it (its modifiers are the caller's to add, as in
    test_k_op_spells_every_instruction_word_by_word)."""
    reached = []
    for o in members(Opcode):
        if o in ABSENT_FROM_PYTHON:
            continue
        fewest, _, _, targets = ptx.info(o)
        k = warpforge.Kernel("reach", targets.split(", ")[-1])
        getattr(k.op, str(o).split(".")[-1])(*[k.reg("b32") for _ in range(fewest)])
        assert statements(k)[0].split(" ")[0].rstrip(";") == ptx.spelling(o)
        reached.append(o)
    assert len(reached) + len(ABSENT_FROM_PYTHON) == len(members(Opcode)) > 100


class Operands:
    """Registers of a kernel for the wrappers' sample calls."""

    def __init__(self, k):
        self.u, self.u2 = k.reg("u32"), k.reg("u32")
        self.d = k.reg("u64")
        self.f = k.reg("f32")
        self.b = k.reg("b32")
        self.p = k.pred()
        self.x4 = [k.reg("b32") for _ in range(4)]
        self.f4 = [k.reg("f32") for _ in range(4)]
        self.smem = k.shared("buffer", 1024, 128)
        self.map = k.param_bytes("map", 128, 64)


def branch(k, o, conditional):
    target = k.label()
    k.bra_if(o.p, target) if conditional else k.bra(target)
    k.place(target)


def loop(k, o):
    k.for_range(0, o.u, 1, lambda i: None)


def until(k, o):
    k.while_loop(lambda: o.u < 4, lambda: k.add(o.u, o.u, 1))


# Every hand-written instruction wrapper of warpforge.Kernel: a sample call
# and the opcodes (as the vocabulary spells them) of what it emits.
WRAPPERS = {
    "abs": (lambda k, o: k.abs(o.f, o.f), {"abs"}),
    "add": (lambda k, o: k.add(o.u, o.u, 1), {"add"}),
    "address_of": (lambda k, o: k.address_of(o.smem), {"mov"}),
    "and_": (lambda k, o: k.and_(o.b, o.b, 1), {"and"}),
    "bar_sync": (lambda k, o: k.bar_sync(1, 64), {"bar"}),
    "bar_warp_sync": (lambda k, o: k.bar_warp_sync(), {"bar"}),
    "bra": (lambda k, o: branch(k, o, False), {"bra"}),
    "bra_if": (lambda k, o: branch(k, o, True), {"bra"}),
    "bulk_commit_group": (lambda k, o: k.bulk_commit_group(), {"cp"}),
    "bulk_wait_group": (lambda k, o: k.bulk_wait_group(0), {"cp"}),
    "bulk_wait_group_read": (lambda k, o: k.bulk_wait_group_read(0), {"cp"}),
    "brev": (lambda k, o: k.brev(o.b, o.b), {"brev"}),
    "clz": (lambda k, o: k.clz(o.u, o.b), {"clz"}),
    "cp_async": (lambda k, o: k.cp_async(warpforge.CpAsyncCache.cg, 16, o.smem, o.d), {"cp"}),
    "cp_async_commit": (lambda k, o: k.cp_async_commit(), {"cp"}),
    "cp_async_wait": (lambda k, o: k.cp_async_wait(1), {"cp"}),
    "cp_async_wait_all": (lambda k, o: k.cp_async_wait_all(), {"cp"}),
    "cvt": (lambda k, o: k.cvt(o.f, o.u, round=warpforge.Round.rn), {"cvt"}),
    "cvt_pack": (lambda k, o: k.cvt_pack("bf16x2", o.b, o.f, o.f), {"cvt"}),
    "cvta_from": (lambda k, o: k.cvta_from("shared", o.d, o.d), {"cvta"}),
    "cvta_to": (lambda k, o: k.cvta_to("global", o.d, o.d), {"cvta"}),
    "div": (lambda k, o: k.div(o.u, o.u, o.u2), {"div"}),
    "elect_sync": (lambda k, o: k.elect_sync(o.u, o.p), {"elect"}),
    "ex2_approx": (lambda k, o: k.ex2_approx(o.f, o.f), {"ex2"}),
    "exit": (lambda k, o: k.exit(), {"exit"}),
    "fence": (lambda k, o: k.fence(warpforge.FenceSem.acq_rel, warpforge.Scope.gpu), {"fence"}),
    "fence_mbarrier_init": (lambda k, o: k.fence_mbarrier_init(), {"fence"}),
    "fence_proxy_async_shared": (lambda k, o: k.fence_proxy_async_shared(), {"fence"}),
    "fma": (lambda k, o: k.fma(o.f, o.f, o.f, o.f), {"fma"}),
    "for_range": (loop, {"mov", "setp", "bra", "add"}),
    "if_else": (lambda k, o: k.if_else(o.p, lambda: None, lambda: None), {"bra"}),
    "if_then": (lambda k, o: k.if_then(o.p, lambda: None), {"bra"}),
    "ld": (lambda k, o: k.ld("global", "f32", o.f, o.d), {"ld"}),
    "ldmatrix": (lambda k, o: k.ldmatrix(o.x4, o.smem), {"ldmatrix"}),
    "lop3": (lambda k, o: k.lop3(o.b, o.b, o.b, o.b, 0x96), {"lop3"}),
    "mad": (lambda k, o: k.mad(o.u, o.u, o.u, 1), {"mad"}),
    "max": (lambda k, o: k.max(o.u, o.u, o.u2), {"max"}),
    "mbarrier_arrive": (lambda k, o: k.mbarrier_arrive(o.smem), {"mbarrier"}),
    "mbarrier_arrive_expect_tx": (lambda k, o: k.mbarrier_arrive_expect_tx(o.smem, 256), {"mbarrier"}),
    "mbarrier_init": (lambda k, o: k.mbarrier_init(o.smem, 1), {"mbarrier"}),
    "mbarrier_try_wait_parity": (lambda k, o: k.mbarrier_try_wait_parity(o.p, o.smem, 0), {"mbarrier"}),
    "mbarrier_wait_parity": (lambda k, o: k.mbarrier_wait_parity(o.smem, 0), {"mbarrier", "bra"}),
    "membar": (lambda k, o: k.membar(warpforge.MembarLevel.gl), {"membar"}),
    "min": (lambda k, o: k.min(o.u, o.u, o.u2), {"min"}),
    "mma_sync": (lambda k, o: k.mma_sync(warpforge.MmaShape.m16n8k16, "bf16", "bf16", "f32", o.f4, o.x4,
                                         o.x4[:2], o.f4), {"mma"}),
    "mov": (lambda k, o: k.mov(o.u, 7), {"mov"}),
    "mul": (lambda k, o: k.mul(o.u, o.u, 3), {"mul"}),
    "mul_hi": (lambda k, o: k.mul_hi(o.u, o.u, 3), {"mul"}),
    "mul_wide": (lambda k, o: k.mul_wide(o.d, o.u, 3), {"mul"}),
    "neg": (lambda k, o: k.neg(o.f, o.f), {"neg"}),
    "not_": (lambda k, o: k.not_(o.b, o.b), {"not"}),
    "or_": (lambda k, o: k.or_(o.b, o.b, 1), {"or"}),
    "param": (lambda k, o: k.param("u32", "n"), {"ld"}),
    "param_generic_address": (lambda k, o: k.param_generic_address(o.map), {"mov", "cvta"}),
    "param_ptr": (lambda k, o: k.param_ptr("x"), {"ld", "cvta"}),
    "popc": (lambda k, o: k.popc(o.u, o.b), {"popc"}),
    "prefetch_tensormap": (lambda k, o: k.prefetch_tensormap(o.d), {"prefetch"}),
    "prmt": (lambda k, o: k.prmt(o.b, o.b, o.b, 0x3210), {"prmt"}),
    "rcp": (lambda k, o: k.rcp(o.f, o.f, round=warpforge.Round.rn), {"rcp"}),
    "redux_sync": (lambda k, o: k.redux_sync(warpforge.Redux.add, o.u, o.u), {"redux"}),
    "rem": (lambda k, o: k.rem(o.u, o.u, o.u2), {"rem"}),
    "ret": (lambda k, o: k.guarded(o.p, k.ret), {"ret"}),
    "selp": (lambda k, o: k.selp(o.u, o.u, 1, o.p), {"selp"}),
    "setp": (lambda k, o: k.setp(warpforge.Cmp.lt, o.u, 4), {"setp"}),
    "shfl_sync": (lambda k, o: k.shfl_sync(warpforge.Shfl.bfly, o.b, o.b, 1, 31), {"shfl"}),
    "shl": (lambda k, o: k.shl(o.b, o.b, 2), {"shl"}),
    "shr": (lambda k, o: k.shr(o.u, o.u, 2), {"shr"}),
    "sqrt": (lambda k, o: k.sqrt(o.f, o.f, round=warpforge.Round.rn), {"sqrt"}),
    "sreg": (lambda k, o: k.sreg("tid.x"), {"mov"}),
    "st": (lambda k, o: k.st("global", "f32", o.d, o.f), {"st"}),
    "stmatrix": (lambda k, o: k.stmatrix(o.smem, o.x4), {"stmatrix"}),
    "sub": (lambda k, o: k.sub(o.u, o.u, 1), {"sub"}),
    "tma_load": (lambda k, o: k.tma_load(o.smem, o.d, [o.u, o.u], warpforge.at(o.smem, 512)), {"cp"}),
    "tma_store": (lambda k, o: k.tma_store(o.d, [o.u, o.u], o.smem), {"cp"}),
    "wgmma_commit_group": (lambda k, o: k.wgmma_commit_group(), {"wgmma"}),
    "wgmma_fence": (lambda k, o: k.wgmma_fence(), {"wgmma"}),
    "wgmma_mma_async": (lambda k, o: k.wgmma_mma_async("bf16", "bf16", o.f4, o.d, o.d, True), {"wgmma"}),
    "wgmma_wait_group": (lambda k, o: k.wgmma_wait_group(0), {"wgmma"}),
    "while_loop": (until, {"setp", "bra", "add"}),
    "xor_": (lambda k, o: k.xor_(o.b, o.b, 1), {"xor"}),
}

# Wrappers whose names are not an opcode's: what they name instead.
DESCRIPTIVE_NAMES = {
    "address_of": "a shared variable's address (mov)",
    "bulk_commit_group": "cp.async.bulk.commit_group",
    "bulk_wait_group": "cp.async.bulk.wait_group",
    "bulk_wait_group_read": "cp.async.bulk.wait_group.read",
    "for_range": "a loop (setp, bra)",
    "if_else": "a branch (bra)",
    "if_then": "a branch (bra)",
    "param": "a parameter's load (ld.param)",
    "param_generic_address": "a parameter's generic address (mov, cvta.param)",
    "param_ptr": "a pointer parameter's load (ld.param, cvta.to.global)",
    "sreg": "a special register's read (mov)",
    "tma_load": "cp.async.bulk.tensor, global to shared",
    "tma_store": "cp.async.bulk.tensor, shared to global",
    "while_loop": "a loop (setp, bra)",
}

# Kernel's methods that emit no instruction of their own: handles,
# declarations, structure, and the two escape hatches (inst, instruction)
# and k.op, which take the vocabulary's words themselves.
NOT_WRAPPERS = {"dynamic_shared", "guarded", "inst", "instruction", "label", "maxntid", "name", "op",
                "param_bytes", "param_count", "place", "pred", "ptx", "reg", "regs", "reqntid", "scope",
                "shared"}


def emitted_opcodes(k):
    """The opcodes of k's instructions, but the ret that closes every kernel."""
    lines = statements(k)
    assert lines[-1] == "ret;"
    opcodes = set()
    for line in lines[:-1]:
        word = re.match(r"(?:@!?\S+\s+)?([a-z][\w.:]*)", line)
        if word and not line.endswith(":"):
            opcodes.add(ptx.spelling(ptx.parse_opcode(word.group(1))[0]))
    return opcodes


def test_every_hand_written_binding_is_listed():
    """A binding added to Kernel joins WRAPPERS (with a sample) or NOT_WRAPPERS."""
    methods = {name for name in dir(warpforge.Kernel) if not name.startswith("_")}
    assert not WRAPPERS.keys() & NOT_WRAPPERS
    assert methods - WRAPPERS.keys() - NOT_WRAPPERS == set()
    assert WRAPPERS.keys() | NOT_WRAPPERS == methods


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_each_hand_written_binding_emits_opcodes_of_the_vocabulary(name):
    """The wrapper's sample call emits exactly the opcodes listed, each read
    back through the vocabulary; and the wrapper's name names an opcode of
    the vocabulary (its first word: mbarrier_arrive is mbarrier's) that it
    emits, or is one of DESCRIPTIVE_NAMES."""
    call, opcodes = WRAPPERS[name]
    k = warpforge.Kernel("wrapper", "sm_90a")
    call(k, Operands(k))
    assert emitted_opcodes(k) == opcodes
    first_word = name.split("_")[0] if not name.endswith("_") else name[:-1]
    if name in DESCRIPTIVE_NAMES:
        assert not hasattr(Opcode, first_word)
    else:
        assert ptx.spelling(getattr(Opcode, first_word + ("_" if name.endswith("_") else ""))) in opcodes


def test_the_dsl_enums_of_modifier_words_are_the_vocabulary_s():
    """Round, Cmp and MmaShape are bound from the DSL's enums, each value
    named as the vocabulary spells its word."""
    expected = {
        warpforge.Round: ["rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"],
        warpforge.Cmp: ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
                        "gtu", "geu", "num", "nan"],
        warpforge.MmaShape: ["m16n8k8", "m16n8k16", "m16n8k32"],
    }
    for enum, names in expected.items():
        assert sorted(v.name for v in members(enum)) == sorted(names)
        for v in members(enum):
            assert ptx.spelling(getattr(Mod, v.name)) == v.name
