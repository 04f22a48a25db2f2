#!/usr/bin/env python3
"""Writes the README's performance table from the committed bench report.

The generated report (docs/bench-report.json) is the only home of measured
figures. This script renders the rows the README shows between the markers
<!-- bench-table:begin --> and <!-- bench-table:end -->. With --check it changes
nothing and exits 1 when the README's table is not what the report gives (CI
runs it so), so a figure never appears twice with two values.

    python3 scripts/bench-figures.py            # rewrite the table in README.md
    python3 scripts/bench-figures.py --check    # fail if it is out of date
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "bench-report.json"
README = ROOT / "README.md"
BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"

# (contender in periodic-1khz, what the README calls it)
ROWS = [
    ("PrecisionClock.wait(.spin)", "`PrecisionClock.wait(until:strategy: .spin)`"),
    ("PrecisionClock.wait(.adaptive)", "`PrecisionClock.wait(until:)` (adaptive)"),
    ("RepeatingTimer", "`RepeatingTimer`"),
    ("TimerScheduler.actor", "an actor on a `TimerScheduler`"),
    ("DispatchSourceTimer", "`DispatchSourceTimer`"),
    ("Task.sleep", "`Task.sleep`"),
    ("NIO.scheduleTask", "SwiftNIO `scheduleTask`"),
    ("cyclictest.fifo", "cyclictest, SCHED_FIFO 90 (the kernel's reference)"),
]


def duration(ns):
    """A lateness as a person writes it: three significant digits."""
    if ns < 1_000:
        return f"{ns:.0f} ns"
    for unit, scale in (("µs", 1e3), ("ms", 1e6)):
        value = ns / scale
        if value < 1_000:
            text = f"{value:.3g}"
            return f"{text} {unit}"
    return f"{ns / 1e9:.3g} s"


def table(report):
    env = report["environment"]
    periodic = next(s for s in report["scenarios"] if s["name"] == "periodic-1khz")
    by_name = {c["name"]: c for c in periodic["contenders"]}
    lines = [
        f"Lateness of a 1 kHz loop, {env['ticks_per_round'] * env['rounds']:,} ticks per contender "
        f"({env['cpu']}, {env['cores']} cores, Linux {env['kernel'].split('-')[0]}, "
        f"Swift {env['swift']}, {env['build']} build, from `docs/bench-report.json`):",
        "",
        "| contender | p50 | p99 | CPU |",
        "|---|---:|---:|---:|",
    ]
    for name, label in ROWS:
        c = by_name[name]
        late = c["lateness_ns"]
        cpu = c["cpu_ns_per_tick"] / 1e6 * 100  # one tick per millisecond
        lines.append(f"| {label} | {duration(late['p50'])} | {duration(late['p99'])} | {cpu:.1f} % |")
    return "\n".join(lines)


def main():
    check = "--check" in sys.argv[1:]
    report = json.loads(REPORT.read_text())
    text = README.read_text()
    try:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
    except ValueError:
        print(f"bench-figures: README.md has no {BEGIN} … {END} block", file=sys.stderr)
        return 1
    wanted = f"{head}{BEGIN}\n{table(report)}\n{END}{tail}"
    if wanted == text:
        print("bench-figures: README's table matches docs/bench-report.json")
        return 0
    if check:
        print("bench-figures: README's table differs from docs/bench-report.json; "
              "run python3 scripts/bench-figures.py", file=sys.stderr)
        return 1
    README.write_text(wanted)
    print("bench-figures: README's table rewritten from docs/bench-report.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
