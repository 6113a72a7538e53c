"""The simulator's report of a fault, said in a Triton programmer's terms.

The simulator names the kernel, the PTX line and instruction, the source
position the PTX's `.loc` directives give for it (Triton writes one for every
operation of the kernel's Python source), the block and the thread. A Triton
program is one block of num_warps*32 threads along x, so the block is
tl.program_id and the thread is a warp and a lane.
"""

import linecache
import re

from .errors import KernelFault

_WHERE = re.compile(r"kernel '(?P<kernel>[^']*)', PTX line (?P<ptx_line>\d+) \((?P<instruction>.*?)\)"
                    r"(?: from (?P<source>.+?:\d+(?::\d+)?)(?: \(inlined: (?P<inlined>.+?:\d+(?::\d+)?)\))?)?"
                    r": block \((?P<block>\d+,\d+,\d+)\)"
                    r"(?: thread \((?P<thread>\d+),\d+,\d+\))?: (?P<detail>.*)", re.S)


def source_line(source):
    """The text of the source line at "file:line[:column]", or None."""
    match = re.match(r"(.+?):(\d+)(?::\d+)?$", source or "")
    if not match:
        return None
    text = linecache.getline(match.group(1), int(match.group(2))).strip()
    return text or None


def kernel_fault(error):
    """A KernelFault for a warpforge.SimError raised while a kernel ran (its
    message leads with the Triton source position, program id and lane), or
    None for another SimError (the simulator refusing the PTX)."""
    message = str(error)
    match = _WHERE.search(message)
    if not match:
        return None
    fields = {
        "kernel": match.group("kernel"),
        "ptx_line": int(match.group("ptx_line")),
        "instruction": match.group("instruction"),
        "source": match.group("source"),
        "inlined": match.group("inlined"),
        "program_id": tuple(int(x) for x in match.group("block").split(",")),
        "detail": match.group("detail").strip(),
    }
    if match.group("thread") is not None:
        thread = int(match.group("thread"))
        fields.update(thread=thread, warp=thread // 32, lane=thread % 32)
    fields["source_text"] = source_line(fields["source"])
    where = f"at {fields['source']}" if fields["source"] else "(the PTX has no line information)"
    if fields["inlined"]:
        where += f" (in {fields['inlined']}, inlined there)"
    lines = [f"Triton kernel '{fields['kernel']}' {where}, program_id {fields['program_id']}"
             + (f", thread {fields['thread']} (warp {fields['warp']}, lane {fields['lane']})"
                if "thread" in fields else "") + f": {fields['detail']}"]
    if fields["source_text"]:
        lines.append(f"    {fields['source_text']}")
    lines.append(f"  (PTX line {fields['ptx_line']}: {fields['instruction']})")
    return KernelFault("\n".join(lines), **fields)
