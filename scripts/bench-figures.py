#!/usr/bin/env python3
"""Writes the measured figures the documents quote from the committed bench report.

The generated report (docs/bench-report.json) is the only home of measured
figures. This script renders every figure the documents show from it, so a
figure never appears twice with two values:

- README.md: the performance table between <!-- bench-table:begin --> and
  <!-- bench-table:end -->.
- The DocC catalog (Sources/PrecisionTimer/PrecisionTimer.docc/*.md):
  * a figure in running text is written between an opening marker that names it
    and a closing one, `<!-- bench:NAME -->5.15 µs<!-- /bench -->`;
  * a generated block (a table) sits between `<!-- bench:begin NAME -->` and
    `<!-- bench:end NAME -->`, each marker on a line of its own.
  NAME is a key of FIGURES or BLOCKS below; the same name renders the same text
  wherever it appears. DocC drops HTML comments, so the markers do not show; but
  a line that *starts* with `<!--` is an HTML block to it, dropped whole, so an
  inline marker must follow a word on its line (the check says where not).
  Outside the markers and code blocks, the catalog may not carry a figure the
  report shows (a value such as `15.2 µs` or `0.39×` copied by hand): the check
  names each such stray figure. The same holds for README.md outside its table,
  CONTRIBUTING.md and docs/reading-the-bench.md. A constant the report also
  prints (a tolerance, a period) is listed in CONSTANTS.

    python3 scripts/bench-figures.py            # rewrite README.md and the catalog
    python3 scripts/bench-figures.py --check    # change nothing; exit 1 if out of date

With --check it exits 1 when a generated figure differs from what the report
gives, when a marker names an unknown figure, or when the catalog holds a stray
figure (CI runs it so).
"""
import decimal
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "bench-report.json"
REPORT_MD = ROOT / "docs" / "bench-report.md"
README = ROOT / "README.md"
CATALOG = ROOT / "Sources" / "PrecisionTimer" / "PrecisionTimer.docc"
BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"

# (contender in periodic-1khz, what the README calls it)
ROWS = [
    ("PrecisionClock.wait(.spin)", "`PrecisionClock.wait(until:strategy: .spin)`"),
    ("PrecisionClock.wait(.adaptive)", "`PrecisionClock.wait(until:)` (adaptive)"),
    ("PrecisionClock.wait(.sleep)", "`PrecisionClock.wait(until:strategy: .sleep)`"),
    ("RepeatingTimer", "`RepeatingTimer`"),
    ("TimerScheduler.executor", "a task on a `TimerScheduler` as its executor"),
    ("TimerScheduler.actor", "an actor on a `TimerScheduler`"),
    ("DispatchSourceTimer", "`DispatchSourceTimer`"),
    ("Task.sleep", "`Task.sleep`"),
    ("NIO.scheduleTask", "SwiftNIO `scheduleTask`"),
    ("cyclictest.fifo", "cyclictest, SCHED_FIFO 90 (the kernel's reference)"),
]


def duration(ns):
    """A lateness as the report's `Fmt.duration` writes it: whole nanoseconds
    (one decimal under 10 ns), else three significant digits in µs, ms or s."""
    sign, a = ("-" if ns < 0 else ""), abs(ns)
    if a < 1_000:
        return sign + fixed(a, 1 if a < 10 else 0) + " ns"
    for unit, scale in (("µs", 1e3), ("ms", 1e6), ("s", 1e9)):
        if a < scale * 1_000 or unit == "s":
            v = a / scale
            return sign + fixed(v, 2 if v < 10 else 1 if v < 100 else 0) + " " + unit


def fixed(value, places, grouped=False):
    """A number with `places` decimals as the report's `Fmt.fixed` writes it: scaled
    by 10^places in doubles, then rounded half away from zero (Python's own format
    rounds 29974.5 to 29974, and 6.975 to 6.97; the report prints 29975 and 6.98)."""
    scaled = decimal.Decimal(abs(value) * 10.0 ** places).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP)
    exact = scaled.scaleb(-places)
    text = f"{exact:,.{places}f}" if grouped else f"{exact:.{places}f}"
    return ("-" if value < 0 and scaled != 0 else "") + text


SCOPE = {"thread": "(t)", "process": "(p)", "child": "(c)"}


def cpu(contender, interval_ns=1_000_000):
    """A contender's CPU per tick as a share of one core, one decimal, marked as
    the report marks it: the waiting thread's (t), the process's (p) or a child
    process's (c)."""
    return f"{contender['cpu_ns_per_tick'] / interval_ns * 100:.1f} % {SCOPE[contender['cpu_scope']]}"


def table(report):
    env = report["environment"]
    by_name = contenders(report, "periodic-1khz")
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
        lines.append(f"| {label} | {duration(late['p50'])} | {duration(late['p99'])} | {cpu(c)} |")
    lines += ["", "CPU: (t) the waiting thread's, (p) the whole process's, (c) a child process's.",
              "", timeouts(report)]
    return "\n".join(lines)


def timeouts(report):
    """The server-timeout figures of `scale`: the re-arm first, not the kind schedule+cancel."""
    s = scenario(report, "scale")["contenders"][0]
    n = s["timers"]
    size = "1m" if n == 1_000_000 else f"{n // 1000}k"
    return (f"Timeouts, with {n:,} live timers on one scheduler: re-arming a random one to now + 60 s "
            f"runs at {fixed(s['rearm_per_s'] / 1e6, 2)} M/s in place (one thread), each live timer takes "
            f"{fixed(s['bytes_per_timer'], 0)} bytes, {n:,} timers due at one instant take "
            f"{fixed(s[f'fire_{size}_ms'], 0)} ms from their deadline to the last handler "
            f"({fixed(s[f'fire_{size}_first_ms'], 1)} ms to the first), and cancelling them all "
            f"{fixed(s['cancel_all_ms'], 0)} ms.")


# ---------------------------------------------------------------------------
# The DocC catalog


def scenario(report, name):
    return next(s for s in report["scenarios"] if s["name"] == name)


def contenders(report, name):
    return {c["name"]: c for c in scenario(report, name)["contenders"]}


def late(scenario_name, contender, field):
    """A lateness percentile (p50, p99, p999, max) of one contender."""
    return lambda r: duration(contenders(r, scenario_name)[contender]["lateness_ns"][field])


def coalescing(report, contender, leeway_ns):
    return next(c for c in scenario(report, "coalescing")["contenders"]
                if c["name"] == contender and c["leeway_ns"] == leeway_ns)


def scale(report):
    return scenario(report, "scale")["contenders"][0]


def scale_batch(report, field):
    """The JSON key of the largest same-instant batch's `field` (ms or first_ms)."""
    n = scale(report)["timers"]
    return f"fire_{'1m' if n == 1_000_000 else f'{n // 1000}k'}_{field}"


def machine(report):
    env = report["environment"]
    return (f"a {env['cores']}-core {env['cpu']} machine (Linux {env['kernel'].split('-')[0]}, "
            f"clocksource {env['clocksource']}, Swift {env['swift']}, {env['build']} build)")


# Figures in running text: name -> the text the report gives.
FIGURES = {
    "machine": machine,
    # Timer slack: the same absolute sleep with the default slack, and with 1 ns.
    "slack-default-p50": late("periodic-1khz", "clock_nanosleep", "p50"),
    "slack-1ns-p50": late("periodic-1khz", "PrecisionClock.wait(.sleep).noLead", "p50"),
    # Under load: the engine at normal priority, and on a realtime scheduler.
    "load-engine-max": late("periodic-1khz-load", "RepeatingTimer", "max"),
    "load-realtime-max": late("periodic-1khz-load", "RepeatingTimer.realtime", "max"),
    # The coalescing scenario's set-up: how many timers, with which periods.
    "coalescing-timers": lambda r: (
        f"{scenario(r, 'coalescing')['timers']:,} repeating timers (periods "
        f"{duration(scenario(r, 'coalescing')['min_period_ns'])}–"
        f"{duration(scenario(r, 'coalescing')['max_period_ns'])})"),
    # Reading the clock.
    "clock-read-now": lambda r: f"{fixed(contenders(r, 'clock-read')['PrecisionClock.now']['ns_per_op'], 2)} ns",
    "clock-read-now-ratio": lambda r: (
        f"{fixed(contenders(r, 'clock-read')['PrecisionClock.now']['ratio_to_clock_gettime'], 2)}×"),
    # Timeouts at scale: the live count, and what each operation took there.
    "scale-timers": lambda r: f"{scale(r)['timers']:,}",
    "scale-rearm": lambda r: f"{fixed(scale(r)['rearm_per_s'] / 1e6, 2)} M/s",
    "scale-rearm-2threads": lambda r: f"{fixed(scale(r)['rearm_2threads_per_s'] / 1e6, 2)} M/s",
    "scale-rearm-8threads": lambda r: f"{fixed(scale(r)['rearm_8threads_per_s'] / 1e6, 2)} M/s",
    "scale-bytes": lambda r: f"{fixed(scale(r)['bytes_per_timer'], 0)} bytes",
    "scale-cancel-all": lambda r: f"{fixed(scale(r)['cancel_all_ms'], 0)} ms",
    # The same loops reading each timer's state instead: what the walk alone costs.
    "scale-rearm-floor": lambda r: f"{fixed(scale(r)['rearm_floor_per_s'] / 1e6, 2)} M/s",
    "scale-cancel-all-floor": lambda r: f"{fixed(scale(r)['cancel_all_floor_ms'], 0)} ms",
    "scale-fire-last": lambda r: f"{fixed(scale(r)[scale_batch(r, 'ms')], 0)} ms",
    "scale-fire-first": lambda r: duration(scale(r)[scale_batch(r, 'first_ms')] * 1e6),
    "scale-precise-idle-p99": lambda r: duration(scale(r)["precise_idle_p99_ns"]),
    "scale-precise-loaded-p99": lambda r: duration(scale(r)["precise_p99_ns"]),
    # Frame pacing at 60 fps: a FrameLink against a DispatchSourceTimer.
    "framelink-60-p50": late("framelink", "FrameLink.60", "p50"),
    "framelink-60-dispatch-p50": late("framelink", "DispatchSourceTimer.60", "p50"),
}

# (contender in periodic-1khz, what *Precision and its price* calls it)
PRICE_ROWS = [
    ("PrecisionClock.wait(.spin)", "``WaitStrategy/spin``"),
    ("PrecisionClock.wait(.adaptive)", "``WaitStrategy/adaptive`` (the default wait)"),
    ("RepeatingTimer", "a ``RepeatingTimer`` with zero leeway"),
    ("PrecisionClock.sleep(until:)", "``PrecisionClock/sleep(until:tolerance:)`` (async)"),
    ("PrecisionClock.wait(.sleep)", "``WaitStrategy/sleep``"),
    ("DispatchSourceTimer", "`DispatchSourceTimer` (strict, leeway 0)"),
    ("Task.sleep", "`Task.sleep` (tolerance 0)"),
    ("cyclictest.fifo", "`cyclictest` on a `SCHED_FIFO` thread (the kernel's reference)"),
]


def price_table(report):
    by_name = contenders(report, "periodic-1khz")
    lines = ["| contender | p50 | p99 | CPU of a core |", "|---|---:|---:|---:|"]
    for name, label in PRICE_ROWS:
        c = by_name[name]
        lines.append(f"| {label} | {duration(c['lateness_ns']['p50'])} | "
                     f"{duration(c['lateness_ns']['p99'])} | {cpu(c)} |")
    return "\n".join(lines)


def coalescing_table(report):
    lines = ["| leeway | engine wake-ups/s | engine context switches/s | Dispatch context switches/s "
             "| engine CPU | Dispatch CPU |",
             "|---|---:|---:|---:|---:|---:|"]
    for leeway in sorted({c["leeway_ns"] for c in scenario(report, "coalescing")["contenders"]}):
        engine = coalescing(report, "TimerScheduler", leeway)
        dispatch = coalescing(report, "DispatchSourceTimer", leeway)
        label = "0" if leeway == 0 else duration(leeway).replace(".00 ", " ")
        lines.append(f"| {label} | {fixed(engine['wakeups_per_s'], 0, True)} | "
                     f"{fixed(engine['context_switches_per_s'], 0, True)} | "
                     f"{fixed(dispatch['context_switches_per_s'], 0, True)} | "
                     f"{fixed(engine['cpu_s'], 3)} s | {fixed(dispatch['cpu_s'], 3)} s |")
    return "\n".join(lines)


# Generated blocks: name -> the lines between the markers.
BLOCKS = {
    "price-1khz": price_table,
    "coalescing": coalescing_table,
}

INLINE = re.compile(r"<!-- bench:([a-z0-9-]+) -->(.*?)<!-- /bench -->")
BLOCK = re.compile(r"^<!-- bench:begin ([a-z0-9-]+) -->\n(.*?)^<!-- bench:end \1 -->$", re.S | re.M)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
# A figure as the report writes it: a number and its unit.
FIGURE = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})*(?:\.\d+)?\s?(?:ns|µs|ms|s|%|×|M/s)(?!\w)")


def significant(figure):
    digits = re.match(r"[\d,.]+", figure).group().replace(",", "").replace(".", "")
    return len(digits.lstrip("0"))


# Constants of the bench that its report prints too, which the documents may
# state: the self-check's tolerance floor, Dispatch's 60 fps period.
CONSTANTS = {"200 ns", "16,666,667 ns"}


def report_figures():
    """The measured figures of the report as it prints them, with a decimal point or three
    significant digits: the ones a person might copy into an article (`2 ms` or `50 µs` are
    as often a constant as a measurement, and are left alone)."""
    found = set(FIGURE.findall(REPORT_MD.read_text()))
    return {f for f in found if "." in f or significant(f) >= 3} - {"0.0 %", "0.0 ns", "0.00 %"} - CONSTANTS


def render_catalog_file(path, report, problems, stale):
    text = path.read_text()
    rel = path.relative_to(ROOT)

    def line_of(match):
        return match.string.count("\n", 0, match.start()) + 1

    def inline(match):
        name = match.group(1)
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        if not match.string[line_start:match.start()].strip():
            problems.append(f"{rel}:{line_of(match)}: the figure `{name}` starts its line, and DocC drops "
                            "a line that starts with `<!--`; put a word before it on that line")
        if name not in FIGURES:
            problems.append(f"{rel}:{line_of(match)}: unknown figure `{name}` "
                            f"(known: {', '.join(sorted(FIGURES))})")
            return match.group(0)
        figure = FIGURES[name](report)
        if figure != match.group(2):
            stale.append(f"{rel}:{line_of(match)}: `{name}` reads {match.group(2)!r}; "
                         f"the report gives {figure!r}")
        return f"<!-- bench:{name} -->{figure}<!-- /bench -->"

    def block(match):
        name = match.group(1)
        if name not in BLOCKS:
            problems.append(f"{rel}:{line_of(match)}: unknown block `{name}` "
                            f"(known: {', '.join(sorted(BLOCKS))})")
            return match.group(0)
        block = BLOCKS[name](report)
        if block != match.group(2).rstrip("\n"):
            stale.append(f"{rel}:{line_of(match)}: the block `{name}` is not what the report gives")
        return f"<!-- bench:begin {name} -->\n{block}\n<!-- bench:end {name} -->"

    wanted = BLOCK.sub(block, INLINE.sub(inline, text))
    return text, wanted


def stray_figures(path, text, measured, problems):
    """Figures of the report written by hand outside the markers (and outside code)."""
    rel = path.relative_to(ROOT)
    blanked = text
    for pattern in (FENCE, BLOCK, INLINE):
        blanked = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), blanked)
    for match in FIGURE.finditer(blanked):
        if match.group(0) in measured:
            line = blanked.count("\n", 0, match.start()) + 1
            problems.append(f"{rel}:{line}: `{match.group(0)}` is a figure of docs/bench-report.md "
                            f"written by hand; use a <!-- bench:NAME --> marker, or say it without the figure")


def main():
    check = "--check" in sys.argv[1:]
    report = json.loads(REPORT.read_text())
    problems = []
    stale = []
    rewrites = []

    text = README.read_text()
    try:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
    except ValueError:
        print(f"bench-figures: README.md has no {BEGIN} … {END} block", file=sys.stderr)
        return 1
    wanted = f"{head}{BEGIN}\n{table(report)}\n{END}{tail}"
    if wanted != text:
        rewrites.append((README, wanted))

    measured = report_figures()
    for path in sorted(CATALOG.glob("*.md")):
        text, wanted = render_catalog_file(path, report, problems, stale)
        stray_figures(path, text, measured, problems)
        if wanted != text:
            rewrites.append((path, wanted))
    # The other documents quote no figure of the report either (README's own
    # table is generated, above).
    readme_table = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    for path in (README, ROOT / "CONTRIBUTING.md", ROOT / "docs" / "reading-the-bench.md"):
        text = readme_table.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), path.read_text())
        stray_figures(path, text, measured, problems)

    for problem in problems:
        print(f"bench-figures: {problem}", file=sys.stderr)
    if problems:
        return 1
    if not rewrites:
        print("bench-figures: README.md and the DocC catalog match docs/bench-report.json")
        return 0
    names = ", ".join(str(path.relative_to(ROOT)) for path, _ in rewrites)
    if check:
        for line in stale:
            print(f"bench-figures: {line}", file=sys.stderr)
        print(f"bench-figures: {names} differ from docs/bench-report.json; "
              "run python3 scripts/bench-figures.py", file=sys.stderr)
        return 1
    for path, wanted in rewrites:
        path.write_text(wanted)
    print(f"bench-figures: rewrote {names} from docs/bench-report.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
