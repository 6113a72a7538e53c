"""Packs a `warpforge-difftest mufu` sweep (one folder per function of .npy
arrays and sets.txt) into one deflated .npz per function, as
np.savez_compressed writes them; a function whose file would pass 15 MiB
(the GPU runs' limit is 16 per file) is packed one file per set instead,
<function>.<set>.npz, each with the function's sets.txt.

    python3 scripts/pack_mufu_sweep.py SWEEP_DIR OUT_DIR
"""
import os
import sys
import zipfile
from concurrent.futures import ProcessPoolExecutor

LIMIT = 15 * 2**20


def pack(path, folder, names):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.write(os.path.join(folder, name), name)
    return os.path.getsize(path)


def pack_function(work, out, function):
    folder = os.path.join(work, function)
    names = sorted(os.listdir(folder))
    path = os.path.join(out, function + ".npz")
    if pack(path, folder, names) <= LIMIT:
        return [(path, os.path.getsize(path))]
    os.remove(path)
    packed = []
    for s in sorted({n.split(".")[0] for n in names if n.endswith(".npy")}):
        part = os.path.join(out, f"{function}.{s}.npz")
        packed.append((part, pack(part, folder, ["sets.txt"] + [n for n in names if n.split(".")[0] == s])))
    return packed


def main(work, out):
    os.makedirs(out, exist_ok=True)
    with ProcessPoolExecutor() as pool:
        packed = [p for ps in pool.map(pack_function, *zip(*[(work, out, f) for f in sorted(os.listdir(work))]))
                  for p in ps]
    for path, size in packed:
        print(f"pack: {path}: {size / 2**20:.2f} MiB" + ("  OVER 16 MiB" if size > 16 * 2**20 else ""))
    print(f"pack: {sum(s for _, s in packed) / 2**20:.2f} MiB in all")


if __name__ == "__main__":
    main(*sys.argv[1:])
