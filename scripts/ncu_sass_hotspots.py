# Where a kernel's warps wait, from ncu's source page (SASS lines with their
# PC samples and stall reasons):
#   ncu --set full -o rep ...; ncu -i rep.ncu-rep --page source --csv --print-source sass > src.csv
#   python3 scripts/ncu_sass_hotspots.py src.csv [--top 24]
# For each kernel in the file: its samples by stall reason, its executed
# instructions and samples by opcode, and the SASS lines that hold the most
# samples with their two main reasons. Samples are ncu's (a warp's PC taken
# at a fixed interval), so a line's share of them is its share of the warps'
# time: issued and waiting alike ("Not-issued" counts the waiting alone).
import csv
import sys
from collections import defaultdict

ALL = "Warp Stall Sampling (All Samples)"
NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def kernels(path):
    """(name, header, rows) for each kernel of an ncu source CSV."""
    name, header, rows = None, None, []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                if header:
                    yield name, header, rows
                name, header, rows = row[1], None, []
            elif row[0] == "Address" and name is not None:
                header = row
            elif header and len(row) == len(header):
                rows.append(dict(zip(header, row)))
    if header:
        yield name, header, rows


def report(name, header, rows, top):
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    total = sum(number(r[ALL]) for r in rows) or 1.0
    waiting = sum(number(r[NOT_ISSUED]) for r in rows)
    executed = sum(number(r[EXECUTED]) for r in rows)
    print(f"\n== {name}: {int(total)} samples ({waiting / total:.0%} not issued), "
          f"{executed / 1e6:.2f}M warp instructions executed ==")
    by_reason = sorted(((sum(number(r[c]) for r in rows), c) for c in reasons), reverse=True)
    print("samples by reason: " + ", ".join(f"{c[6:]} {s / total:.1%}" for s, c in by_reason[:9] if s))
    by_op = defaultdict(lambda: [0.0, 0.0])
    for r in rows:
        parts = r["Source"].split()
        op = parts[1] if parts and parts[0].startswith("@") and len(parts) > 1 else (parts[0] if parts else "?")
        by_op[op][0] += number(r[EXECUTED])
        by_op[op][1] += number(r[ALL])
    print("| opcode | executed (share) | samples (share) |\n|---|---|---|")
    for op, (ex, s) in sorted(by_op.items(), key=lambda x: -x[1][1])[:16]:
        print(f"| {op} | {ex / max(executed, 1):.1%} | {s / total:.1%} |")
    print(f"| line | SASS | samples | not issued | executed | main reasons |\n|---|---|---|---|---|---|")
    for i, r in sorted(enumerate(rows), key=lambda x: -number(x[1][ALL]))[:top]:
        mains = sorted(((number(r[c]), c[6:]) for c in reasons), reverse=True)[:2]
        why = ", ".join(f"{c} {s / max(number(r[ALL]), 1):.0%}" for s, c in mains if s)
        print(f"| {i} | {r['Source'].strip()[:58]} | {number(r[ALL]) / total:.2%} | "
              f"{number(r[NOT_ISSUED]) / total:.2%} | {int(number(r[EXECUTED]))} | {why} |")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ncu_sass_hotspots.py SOURCE.csv [--top N]")
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 24
    found = False
    for name, header, rows in kernels(sys.argv[1]):
        found = True
        report(name, header, rows, top)
    if not found:
        sys.exit(f"{sys.argv[1]}: no ncu source page (a 'Kernel Name' line and an 'Address' header)")


if __name__ == "__main__":
    main()
