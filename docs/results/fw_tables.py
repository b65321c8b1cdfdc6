"""The tables of frank_wolfe.md's first section from the fw suite's JSON-lines records.

Usage: ``python docs/results/fw_tables.py RECORDS.jsonl``. Seconds, accuracy and support are
medians [min, max] over the seeds; the speed ratios and accuracy differences are taken within
each seed (methods of a seed ran one after the other in one process), then summarized the same
way.
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

SETS = ("a1a", "a5a", "a8a", "a9a", "w8a", "ijcnn1", "usps", "letter", "shuttle", "reuters",
        "skin_nonskin", "kddcup")  # fmt: skip
METHODS = ("fw", "mfw", "mfw_shrink", "cvm", "svc")
HEADER = (
    "| data set | m | C | method | seeds | seconds, median [min, max] | SVC s / method s "
    "| method s / MFW s | test accuracy % | accuracy - SVC | support, median | status |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def spread(values: list[float], fmt: str = "{:.3g}") -> str:
    """``median [min, max]`` of ``values``, or ``-`` when there are none."""
    if not values:
        return "-"
    parts = (statistics.median(values), min(values), max(values))
    return "{} [{}, {}]".format(*(fmt.format(v) for v in parts))


def by_seed(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[int, dict]]:
    """{(data set, method): {seed: record}} for the records that have seconds."""
    table: dict[tuple[str, str], dict[int, dict]] = {}
    for r in records:
        if "seconds" in r:
            table.setdefault((r["dataset"], r["method"]), {})[r["seed"]] = r
    return table


def row(name: str, method: str, table: dict) -> str | None:
    """One line of the table, or None when the method has no record on the set."""
    runs = table.get((name, method), {})
    if not runs:
        return None
    svc, mfw = table.get((name, "svc"), {}), table.get((name, "mfw"), {})
    seeds = sorted(runs)
    seconds = [runs[s]["seconds"] for s in seeds]
    vs_svc = [svc[s]["seconds"] / runs[s]["seconds"] for s in seeds if s in svc]
    vs_mfw = [runs[s]["seconds"] / mfw[s]["seconds"] for s in seeds if s in mfw]
    gain = [runs[s]["accuracy"] - svc[s]["accuracy"] for s in seeds if s in svc]
    first = runs[seeds[0]]
    cells = [
        name, str(first["m"]), f"{first['C']:g}", method, str(len(seeds)), spread(seconds),
        spread(vs_svc, "{:.2f}") + "x" if method != "svc" and vs_svc else "-",
        spread(vs_mfw, "{:.2f}") if method != "mfw" and vs_mfw else "-",
        spread([runs[s]["accuracy"] for s in seeds], "{:.2f}"),
        spread(gain, "{:+.2f}") if method != "svc" and gain else "-",
        f"{statistics.median(runs[s]['support'] for s in seeds):g}",
        "/".join(sorted({runs[s]["status"] for s in seeds})),
    ]  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def main(path: str) -> None:
    """Print the table and, per set with a CVM run, CVM's time against FW's and MFW's."""
    with open(path) as handle:
        table = by_seed([json.loads(line) for line in handle if line.strip()])
    print(HEADER)
    for name in SETS:
        for method in METHODS:
            line = row(name, method, table)
            if line:
                print(line)
    print()
    for name in SETS:
        for seed, cvm in sorted(table.get((name, "cvm"), {}).items()):
            ratios = [
                f"CVM/{method} {cvm['seconds'] / other[seed]['seconds']:.1f}x"
                for method in ("fw", "mfw", "mfw_shrink")
                if seed in (other := table.get((name, method), {}))
            ]
            print(f"{name} seed {seed}: CVM {cvm['seconds']:.1f} s ({cvm['status']}, "
                  f"{cvm['accuracy']:.2f}%, delta_plus {cvm.get('delta_plus', float('nan')):.2g}, "
                  f"support {cvm['support']}); " + "; ".join(ratios))  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
