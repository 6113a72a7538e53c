"""Every instruction of the PTX vocabulary from Python, made from the
vocabulary's tables rather than a binding each: `k.op` spells an instruction
as PTX does, one attribute per word, and emits it when called.

    k.op.add.u32(d, a, 1)
    k.op.shf.l.wrap.b32(d, lo, hi, n)
    k.op.mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32(acc, a, b, acc)
    k.op.ld.global_.v4.b32([r0, r1, r2, r3], warpforge.at(p))

Opcodes and words are warpforge.Opcode and warpforge.Mod, named as the C++
enumerators (Opcode.and_, Mod.shared_cta for .shared::cta; a Python keyword
takes a trailing "_": Mod.global_), which `k.op` also accepts. The operand
count and the target are checked as Kernel.inst checks them; the typed
wrappers (k.ld, k.mma_sync, ...) check operand types as well."""

from . import _warpforge

_ptx = _warpforge.ptx
Opcode = _ptx.Opcode
Mod = _ptx.Mod


def _member(enum, name, what):
    for candidate in (name, name + "_"):
        member = getattr(enum, candidate, None)
        if member is not None and isinstance(member, enum):
            return member
    raise _warpforge.DslError(f"'{name}' is not {what} of the PTX vocabulary")


class Form:
    """An opcode and the modifiers written so far; calling it emits the instruction."""

    __slots__ = ("_kernel", "_opcode", "_modifiers")

    def __init__(self, kernel, opcode, modifiers=()):
        self._kernel, self._opcode, self._modifiers = kernel, opcode, tuple(modifiers)

    def __getattr__(self, word):
        if word.startswith("__"):
            raise AttributeError(word)
        return Form(self._kernel, self._opcode, self._modifiers + (_member(Mod, word, "a modifier"),))

    def __call__(self, *operands):
        self._kernel.instruction(self._opcode, list(self._modifiers), list(operands))

    def __repr__(self):
        return ".".join([_ptx.spelling(self._opcode)] + [_ptx.spelling(m) for m in self._modifiers])


class Instructions:
    """k.op: the opcodes of the vocabulary, each starting a Form."""

    __slots__ = ("_kernel",)

    def __init__(self, kernel):
        self._kernel = kernel

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Form(self._kernel, _member(Opcode, name, "an opcode"))

    def __dir__(self):
        return [name for name in dir(Opcode) if isinstance(getattr(Opcode, name), Opcode)]


_warpforge.Kernel.op = property(Instructions, doc="Every PTX instruction, word by word (warpforge.instructions).")
