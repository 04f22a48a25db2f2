// swift-tools-version:6.1
//===----------------------------------------------------------------------===//
// PrecisionTimer: a C-accelerated, high-precision timing library for Linux.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "PrecisionTimer",
    // Two libraries. A consumer resolves only what it needs: swift-collections
    // and swift-log for PrecisionTimer; swift-metrics as well for
    // PrecisionTimerMetrics, whose dependency on it is behind the trait
    // `Metrics` (SwiftPM resolves the dependencies of every library product
    // of a package it depends on, unless a trait leaves them out). The executables below are not declared as products,
    // and need not be: a root package gets an executable product for each
    // executable target (`swift run -c release bench`, `swift run fps-meter`),
    // and dependencies only they use are not resolved for a consumer.
    // Tests/Consumer checks this (.ci/consumer-check).
    products: [
        .library(name: "PrecisionTimer", targets: ["PrecisionTimer"]),
        // A scheduler's statistics, exported through swift-metrics.
        .library(name: "PrecisionTimerMetrics", targets: ["PrecisionTimerMetrics"]),
    ],
    traits: [
        .trait(
            name: "Metrics",
            description: "PrecisionTimerMetrics: a scheduler's statistics exported through swift-metrics"
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // The Prometheus registry of Examples/metrics only; no library links it.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        // `swift package generate-documentation` (the DocC catalog in
        // Sources/PrecisionTimer/PrecisionTimer.docc); a plugin, never linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // SwiftNIO's event-loop timers, a contender of the bench only (BenchSupport);
        // the library never links it.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    ],
    targets: [
        // The thin C layer over clock_gettime / clock_nanosleep / prctl / futex.
        // Its timespec comparisons are macros of libbsd's <bsd/sys/time.h>
        // (Debian: libbsd-dev), a header needed to build only: no libbsd
        // function is called, so nothing of libbsd is linked. The source file
        // stops with an install hint when the header is missing.
        .target(name: "CMonoClock"),
        .target(
            name: "PrecisionTimer",
            dependencies: [
                "CMonoClock",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["README.md"]  // the layers, for maintainers
        ),
        // Exports a TimerScheduler's statistics through swift-metrics; with the
        // trait `Metrics` only (without it, the module is empty).
        .target(
            name: "PrecisionTimerMetrics",
            dependencies: [
                "PrecisionTimer",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ]
        ),
        // What the examples share: their command line, a stop on SIGINT or
        // SIGTERM, colour only on a terminal.
        .target(
            name: "ExampleSupport",
            path: "Examples/Support"
        ),
        // A terminal FPS meter: FrameLink + RateMeter (`swift run fps-meter`).
        .executableTarget(
            name: "fps-meter",
            dependencies: ["PrecisionTimer", "ExampleSupport"],
            path: "Examples/fps-meter"
        ),
        // A 1 kHz async loop in an actor on its own TimerScheduler, reporting
        // the lateness of its wakes (`swift run -c release async-loop`).
        .executableTarget(
            name: "async-loop",
            dependencies: ["PrecisionTimer", "ExampleSupport"],
            path: "Examples/async-loop"
        ),
        // A few timers and an overloaded handler, exported through swift-metrics
        // to a Prometheus registry whose text it prints (`swift run metrics`).
        .executableTarget(
            name: "metrics",
            dependencies: [
                "PrecisionTimer",
                "ExampleSupport",
                "PrecisionTimerMetrics",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Examples/metrics"
        ),
        // The benchmark's logic (scenarios, statistics, report writers), a
        // library so that BenchTests can test it; `bench` is its thin command.
        .target(
            name: "BenchSupport",
            dependencies: [
                "PrecisionTimer",
                "CMonoClock",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/BenchSupport"
        ),
        .executableTarget(
            name: "bench",
            dependencies: ["BenchSupport"],
            path: "Benchmarks/bench"
        ),
        .testTarget(
            name: "CMonoClockTests",
            dependencies: ["CMonoClock", "TestSupport"]
        ),
        // Swift helpers both test targets use: a value behind a lock that
        // ThreadSanitizer sees, and a signal handler installed and put back.
        .target(
            name: "TestSupport",
            dependencies: ["CMonoClock"],
            path: "Tests/TestSupport"
        ),
        // Test-only C helpers (tgkill, a thread's CPU clock, /proc/self/task,
        // dropping a capability); used by PrecisionTimerTests only. Test hooks
        // live here, never in CMonoClock's public header.
        .target(
            name: "CTestSupport",
            path: "Tests/CTestSupport"
        ),
        // Makes one bad call of the public API per run, named by its argument:
        // PreconditionTrapTests runs it to see each precondition stop the process
        // with its message (a trap ends the process it happens in).
        .executableTarget(
            name: "precondition-probe",
            dependencies: ["PrecisionTimer"],
            path: "Tests/PreconditionProbe"
        ),
        .testTarget(
            name: "PrecisionTimerTests",
            dependencies: [
                "PrecisionTimer",
                "CMonoClock",
                "CTestSupport",
                "TestSupport",
                // Not imported: the dependency makes `swift test` build the probe.
                "precondition-probe",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                // LatencyHistogram's percentiles are checked against hdrhistogram-swift's.
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PrecisionTimerMetricsTests",
            dependencies: [
                "PrecisionTimer",
                "PrecisionTimerMetrics",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "BenchTests",
            dependencies: [
                "BenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
