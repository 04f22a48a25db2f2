//===----------------------------------------------------------------------===//
// --svg: the report as plots, readable without the table. One panel per
// scenario: for the lateness scenarios a CDF per contender on a log time axis
// (y stretched towards the tail: 50 %, 90 %, 99 %, 99.9 %…) beside a histogram
// per contender (log bins, each row scaled to its own peak); for overrun,
// clock-read, coalescing and scale, labelled bars. Plain SVG 1.1 text, no
// scripts or external fonts, so it renders in any browser.
//===----------------------------------------------------------------------===//
import Foundation

enum SVGReport {
    static let width = 1100.0
    /// Tableau's ten, then eight more of distinct hue (a lateness panel has up to 15 contenders).
    static let palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                          "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#e6ab02", "#393b79", "#66c2a5",
                          "#fb9a99", "#6a3d9a", "#b15928", "#a6cee3"]

    static func esc(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func n(_ v: Double) -> String { Fmt.fixed(v, 1) }

    /// A stable colour per contender name over the whole document.
    struct Colors {
        var map: [String: String] = [:]

        /// Gives the names of one panel that have no colour yet one that no
        /// other name of the panel has (and, while there are, one nobody has).
        mutating func assign(_ names: [String]) {
            var taken = Set(names.compactMap { map[$0] })
            for name in names where map[name] == nil {
                let used = Set(map.values)
                let c = SVGReport.palette.first { !taken.contains($0) && !used.contains($0) }
                    ?? SVGReport.palette.first { !taken.contains($0) }
                    ?? SVGReport.palette[map.count % SVGReport.palette.count]
                map[name] = c
                taken.insert(c)
            }
        }

        mutating func color(_ name: String) -> String {
            if let c = map[name] { return c }
            let c = SVGReport.palette[map.count % SVGReport.palette.count]
            map[name] = c
            return c
        }
    }

    /// The y position (0…1 of the plot height, 0 at the bottom) of percentile p:
    /// −log10(1 − p) over 0…4 (0 % … 99.99 %), the maximum drawn at the top.
    static func tailY(_ p: Double) -> Double {
        if p >= 100 { return 1 }
        return Swift.min(1, -log10(1 - p / 100) / 4.3)
    }

    static func render(_ r: BenchResults) -> String {
        var colors = Colors()
        var panels: [(height: Double, body: (Double) -> String)] = []
        var header: [String] = []
        let e = r.environment
        header.append("PrecisionTimer benchmark — \(e.build) build\(r.quick ? ", --quick" : "")")
        header.append("\(e.cpu), \(e.cores) cores, kernel \(e.kernel), clocksource \(e.clocksource), Swift \(e.swift), "
                      + "realtime \(e.realtime)")
        for w in r.warnings { header.append("WARNING: " + w) }

        for p in r.latencyScenarios {
            colors.assign(p.contenders.map(\.name))
            let title = shortTitle(p)
            let c = colors
            let shown = p.contenders.filter { !$0.cdf.isEmpty }.count
            let plotH = Swift.max(300, Double(shown) * 30)
            panels.append((plotH + 106 + legendHeight(entries: shown), { y in
                latencyPanel(p, title: title, top: y, plotH: plotH, colors: c)
            }))
        }
        if let o = r.overrun {
            let rows = o.contenders.map { f -> BarRow in
                BarRow(label: f.name, value: Double(Swift.max(1, abs(f.medianScheduleErrorNs))),
                       text: "median error \(Fmt.duration(f.medianScheduleErrorNs)), final "
                           + "\(Fmt.duration(f.finalScheduleErrorNs)) · grid \(f.grid.rawValue) · \(f.fires) fires, "
                           + "\(f.missedInferred ? "~" : "")\(f.reportedMissed) missed of \(f.ticksDue) due",
                       color: colors.color(f.name))
            }
            let title = ReportBuilder.overrun(o).title
            panels.append((Double(rows.count) * 26 + 90, { y in
                barPanel(title: title, subtitle: "bar: median schedule error of the run's second half (log scale; "
                         + "shorter is better)", rows: rows, log: true, top: y, unit: Fmt.duration)
            }))
        }
        if let c = r.clockRead {
            let rows = c.contenders.map {
                BarRow(label: $0.name, value: $0.nsPerOp,
                       text: Fmt.fixed($0.nsPerOp, 2) + ($0.readsClock ? " ns/read" : " ns/call (not a clock read)"),
                       color: "#4e79a7")
            }
            let title = ReportBuilder.clockRead(c).title
            panels.append((Double(rows.count) * 26 + 90, { y in
                barPanel(title: title, subtitle: "ns per read or call (shorter is better)", rows: rows, log: false, top: y,
                         unit: { Fmt.fixed($0, 1) + " ns" })
            }))
        }
        if let c = r.coalescing {
            let rows = c.runs.map {
                BarRow(label: "\($0.name) · leeway \(Fmt.duration($0.leewayNs))", value: Swift.max(1, $0.wakeupsPerSecond),
                       text: "\(Fmt.fixed($0.wakeupsPerSecond, 0)) wake-ups/s, CPU \(Fmt.fixed($0.cpuSeconds, 3)) s, "
                           + "\(Fmt.percent($0.withinWindow)) within window",
                       color: $0.name == Coalescing.engineName ? "#2ca02c" : "#1f77b4")
            }
            let title = ReportBuilder.coalescing(c).title
            panels.append((Double(rows.count) * 26 + 90, { y in
                barPanel(title: title, subtitle: "wake-ups per second (log scale; shorter is better)", rows: rows,
                         log: true, top: y, unit: { Fmt.fixed($0, 0) + "/s" })
            }))
        }
        if let s = r.scale {
            let f = s.figures
            let lines = ["schedule+cancel: \(Fmt.rate(f.scheduleCancel.perSecond)); re-arm in place: "
                            + "\(Fmt.rate(f.rearm.perSecond)), from 2 threads \(Fmt.rate(f.rearmTwoThreads.perSecond))",
                         "bytes per live timer: \(Fmt.fixed(f.bytes.perTimer, 1)), "
                            + "capturing a reference \(Fmt.fixed(f.bytesCapturing.perTimer, 1))",
                         "cancel all: \(Fmt.fixed(Double(f.cancelAllNs) / 1e6, 2)) ms"]
                + f.batches.map { b in
                    "fire \(Fmt.count(b.timers)) timers due at one instant: first "
                        + "\(Fmt.duration(b.firstNs)), last \(Fmt.fixed(Double(b.lastNs) / 1e6, 2)) ms"
                }
                + ["precise 1 kHz timer p99: \(Fmt.duration(f.precise.idle.summary.p99)) idle, "
                   + "\(Fmt.duration(f.precise.loaded.summary.p99)) under \(Fmt.rate(f.precise.load.perSecond)) re-arms"]
            panels.append((Double(lines.count) * 20 + 60, { y in
                var out = "<text x=\"20\" y=\"\(n(y + 24))\" class=\"title\">\(esc(ReportBuilder.scale(s).title))</text>\n"
                for (i, l) in lines.enumerated() {
                    out += "<text x=\"30\" y=\"\(n(y + 50 + Double(i) * 20))\" class=\"label\">\(esc(l))</text>\n"
                }
                return out
            }))
        }

        let headerH = 30 + Double(header.count) * 18
        let height = headerH + panels.reduce(0) { $0 + $1.height + 10 } + 10
        var svg = """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" \
        viewBox="0 0 \(n(width)) \(n(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
        <style>
        .title { font-size: 15px; font-weight: bold; fill: #222; }
        .sub { font-size: 12px; fill: #555; }
        .label { font-size: 12px; fill: #222; }
        .tick { font-size: 11px; fill: #555; }
        .grid { stroke: #ddd; stroke-width: 1; }
        .axis { stroke: #888; stroke-width: 1; }
        .warn { font-size: 12px; fill: #b00; }
        </style>
        <rect x="0" y="0" width="\(n(width))" height="\(n(height))" fill="#ffffff"/>

        """
        for (i, line) in header.enumerated() {
            let cls = i == 0 ? "title" : (line.hasPrefix("WARNING") ? "warn" : "sub")
            svg += "<text x=\"20\" y=\"\(n(24 + Double(i) * 18))\" class=\"\(cls)\">\(esc(line))</text>\n"
        }
        var y = headerH
        for panel in panels {
            svg += "<g>\n<rect x=\"8\" y=\"\(n(y))\" width=\"\(n(width - 16))\" height=\"\(n(panel.height))\" "
                + "fill=\"none\" stroke=\"#ccc\"/>\n"
            svg += panel.body(y)
            svg += "</g>\n"
            y += panel.height + 10
        }
        svg += "</svg>\n"
        return svg
    }

    static func shortTitle(_ p: PeriodicResult) -> String {
        let c = p.config
        if c.scenario == Drift.name {
            return "drift: \(Fmt.duration(c.intervalNs)) grid, \(Fmt.count(c.ticks)) ticks "
                + "(\(Fmt.fixed(Double(c.ticks) * Double(c.intervalNs) / 1e9, 0)) s), contenders concurrently"
        }
        return "\(c.scenario): \(Fmt.duration(c.intervalNs)) grid, \(c.rounds) interleaved rounds × \(c.ticks) ticks"
            + (c.hogs > 0 ? ", \(c.hogs) CPU hogs competing" : "")
    }

    /// Decade range [lo, hi] (ns) covering every CDF point, at least 100 ns … 1 ms.
    static func range(_ p: PeriodicResult) -> (Double, Double) {
        var lo = 1e9
        var hi = 1.0
        for f in p.contenders {
            for c in f.cdf {
                let v = Double(Swift.max(1, c.valueNs))
                lo = Swift.min(lo, v)
                hi = Swift.max(hi, v)
            }
        }
        let dlo = Swift.max(10, pow(10, floor(log10(Swift.max(1, lo)))))
        let dhi = pow(10, ceil(log10(Swift.max(hi, dlo * 10))))
        return (Swift.min(dlo, 100), Swift.max(dhi, 1e6))
    }

    /// The CDF legend: `legendColumns` entries per row under the plots.
    static let legendColumns = 3
    static let legendRowHeight = 18.0

    static func legendHeight(entries: Int) -> Double {
        Double((entries + legendColumns - 1) / legendColumns) * legendRowHeight
    }

    /// One line sample and name per contender (the CDF's legend), in rows of
    /// `legendColumns`, from `top`.
    static func legend(_ names: [String], top: Double, colors: inout Colors) -> String {
        let x0 = 70.0, columnWidth = 340.0
        var out = ""
        for (i, name) in names.enumerated() {
            let x = x0 + Double(i % legendColumns) * columnWidth
            let y = top + Double(i / legendColumns) * legendRowHeight + legendRowHeight / 2
            let color = colors.color(name)
            out += "<g class=\"legend\"><line x1=\"\(n(x))\" y1=\"\(n(y))\" x2=\"\(n(x + 26))\" y2=\"\(n(y))\" "
                + "stroke=\"\(color)\" stroke-width=\"3\"\(dash(name))/>"
                + "<text x=\"\(n(x + 32))\" y=\"\(n(y + 4))\" class=\"label\">\(esc(name))</text></g>\n"
        }
        return out
    }

    /// The naive reference loop is drawn dashed.
    static func dash(_ name: String) -> String {
        name.contains("naive") ? " stroke-dasharray=\"5,3\"" : ""
    }

    static func latencyPanel(_ p: PeriodicResult, title: String, top: Double, plotH: Double,
                             colors: Colors) -> String {
        var colors = colors
        let (lo, hi) = range(p)
        let cdfX0 = 70.0, cdfX1 = 520.0
        let histLabelX = 755.0, histX0 = 760.0, histX1 = 1080.0
        let plotTop = top + 56
        let plotBottom = plotTop + plotH
        func x(_ v: Double, _ x0: Double, _ x1: Double) -> Double {
            let t = (log10(Swift.max(lo, Swift.min(hi, v))) - log10(lo)) / (log10(hi) - log10(lo))
            return x0 + t * (x1 - x0)
        }
        var out = "<text x=\"20\" y=\"\(n(top + 22))\" class=\"title\">\(esc(title))</text>\n"
        out += "<text x=\"20\" y=\"\(n(top + 40))\" class=\"sub\">left: lateness CDF (log time axis; y stretched "
            + "towards the tail; further left is better) · right: histogram per contender (log bins, each row "
            + "scaled to its own peak)</text>\n"
        // Axes and grid: decades on x, tail percentiles on y.
        var d = lo
        while d <= hi * 1.0001 {
            for (x0, x1) in [(cdfX0, cdfX1), (histX0, histX1)] {
                let gx = x(d, x0, x1)
                out += "<line x1=\"\(n(gx))\" y1=\"\(n(plotTop))\" x2=\"\(n(gx))\" y2=\"\(n(plotBottom))\" class=\"grid\"/>\n"
                out += "<text x=\"\(n(gx))\" y=\"\(n(plotBottom + 16))\" class=\"tick\" text-anchor=\"middle\">"
                    + "\(esc(Fmt.duration(d).replacingOccurrences(of: ".00", with: "")))</text>\n"
            }
            d *= 10
        }
        for (p, label) in [(0.0, "0 %"), (50.0, "50 %"), (90.0, "90 %"), (99.0, "99 %"), (99.9, "99.9 %"),
                           (99.99, "99.99 %"), (100.0, "max")] {
            let gy = plotBottom - tailY(p) * plotH
            out += "<line x1=\"\(n(cdfX0))\" y1=\"\(n(gy))\" x2=\"\(n(cdfX1))\" y2=\"\(n(gy))\" class=\"grid\"/>\n"
            out += "<text x=\"\(n(cdfX0 - 6))\" y=\"\(n(gy + 4))\" class=\"tick\" text-anchor=\"end\">\(label)</text>\n"
        }
        out += "<rect x=\"\(n(cdfX0))\" y=\"\(n(plotTop))\" width=\"\(n(cdfX1 - cdfX0))\" height=\"\(n(plotH))\" "
            + "fill=\"none\" class=\"axis\"/>\n"
        out += "<text x=\"\(n((cdfX0 + cdfX1) / 2))\" y=\"\(n(plotBottom + 34))\" class=\"sub\" "
            + "text-anchor=\"middle\">lateness (wake − deadline)</text>\n"
        out += "<text x=\"\(n((histX0 + histX1) / 2))\" y=\"\(n(plotBottom + 34))\" class=\"sub\" "
            + "text-anchor=\"middle\">lateness (wake − deadline)</text>\n"
        // CDF lines, their legend under the plots, then the histogram rows.
        let shown = p.contenders.filter { !$0.cdf.isEmpty }
        out += legend(shown.map(\.name), top: plotBottom + 44, colors: &colors)
        for f in shown {
            let color = colors.color(f.name)
            let points = f.cdf.map { "\(n(x(Double(Swift.max(1, $0.valueNs)), cdfX0, cdfX1))),"
                + "\(n(plotBottom - tailY($0.percentile) * plotH))" }
            out += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.8\"\(dash(f.name)) "
                + "points=\"\(points.joined(separator: " "))\"><title>\(esc(f.name))</title></polyline>\n"
        }
        let rowH = plotH / Double(Swift.max(1, shown.count))
        let perDecade = 10
        for (i, f) in shown.enumerated() {
            let color = colors.color(f.name)
            let rowTop = plotTop + Double(i) * rowH
            let rowBottom = rowTop + rowH - 3
            out += "<text x=\"\(n(histLabelX - 4))\" y=\"\(n(rowTop + rowH / 2 - 1))\" class=\"label\" "
                + "text-anchor=\"end\" fill=\"\(color)\">\(esc(f.name))</text>\n"
            out += "<text x=\"\(n(histLabelX - 4))\" y=\"\(n(rowTop + rowH / 2 + 11))\" class=\"tick\" "
                + "text-anchor=\"end\">p50 \(esc(Fmt.duration(f.lateness.p50))) · p99 "
                + "\(esc(Fmt.duration(f.lateness.p99))) · max \(esc(Fmt.duration(f.lateness.max)))</text>\n"
            out += "<line x1=\"\(n(histX0))\" y1=\"\(n(rowBottom))\" x2=\"\(n(histX1))\" y2=\"\(n(rowBottom))\" "
                + "class=\"axis\"/>\n"
            let bins = Distribution.logBins(f.raw, lowNs: lo, highNs: hi, perDecade: perDecade)
            let peak = Double(bins.max() ?? 0)
            guard peak > 0 else { continue }
            for (b, count) in bins.enumerated() where count > 0 {
                let bx0 = x(Distribution.binEdge(b, lowNs: lo, perDecade: perDecade), histX0, histX1)
                let bx1 = x(Distribution.binEdge(b + 1, lowNs: lo, perDecade: perDecade), histX0, histX1)
                let h = Swift.max(1, Double(count) / peak * (rowH - 6))
                out += "<rect x=\"\(n(bx0))\" y=\"\(n(rowBottom - h))\" width=\"\(n(Swift.max(1, bx1 - bx0 - 0.5)))\" "
                    + "height=\"\(n(h))\" fill=\"\(color)\"><title>\(esc(f.name)): \(count)</title></rect>\n"
            }
        }
        return out
    }

    struct BarRow {
        var label: String
        var value: Double
        var text: String
        var color: String
    }

    static func barPanel(title: String, subtitle: String, rows: [BarRow], log: Bool, top: Double,
                         unit: (Double) -> String) -> String {
        var out = "<text x=\"20\" y=\"\(n(top + 22))\" class=\"title\">\(esc(title))</text>\n"
        out += "<text x=\"20\" y=\"\(n(top + 40))\" class=\"sub\">\(esc(subtitle))</text>\n"
        let x0 = 260.0, x1 = 520.0
        let maxV = rows.map(\.value).max() ?? 1
        let minV = Swift.max(1e-9, rows.map(\.value).min() ?? 1)
        let lo = log ? pow(10, floor(log10(minV))) : 0
        let hi = log ? pow(10, ceil(log10(Swift.max(maxV, lo * 10)))) : maxV
        func w(_ v: Double) -> Double {
            if log { return (log10(Swift.max(lo, v)) - log10(lo)) / (log10(hi) - log10(lo)) * (x1 - x0) }
            return hi > 0 ? v / hi * (x1 - x0) : 0
        }
        for (i, r) in rows.enumerated() {
            let y = top + 56 + Double(i) * 26
            out += "<text x=\"\(n(x0 - 8))\" y=\"\(n(y + 13))\" class=\"label\" text-anchor=\"end\">\(esc(r.label))</text>\n"
            out += "<rect x=\"\(n(x0))\" y=\"\(n(y))\" width=\"\(n(Swift.max(1, w(r.value))))\" height=\"18\" "
                + "fill=\"\(r.color)\"/>\n"
            out += "<text x=\"\(n(x1 + 8))\" y=\"\(n(y + 13))\" class=\"tick\">\(esc(r.text))</text>\n"
        }
        out += "<line x1=\"\(n(x0))\" y1=\"\(n(top + 50))\" x2=\"\(n(x0))\" y2=\"\(n(top + 56 + Double(rows.count) * 26))\" "
            + "class=\"axis\"/>\n"
        out += "<text x=\"\(n(x1))\" y=\"\(n(top + 50))\" class=\"tick\" text-anchor=\"end\">\(esc(unit(hi)))</text>\n"
        return out
    }
}
