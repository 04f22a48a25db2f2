// swift-tools-version:6.1
//===----------------------------------------------------------------------===//
// A consumer of PrecisionTimerMetrics, as a user's package depends on it: the
// product `PrecisionTimerMetrics` only. `.ci/consumer-check` builds it and
// checks what it resolves (never swift-prometheus, which only the metrics
// example uses), what it builds and what its binary needs at run time. A
// package of its own, as Tests/Consumer is. It enables the trait `Metrics`,
// which the product needs, as a user's package does.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "ConsumerMetrics",
    dependencies: [
        // A path dependency is known by its folder's name (a clone's may be
        // anything): `name:` lets the product below name it PrecisionTimer.
        .package(name: "PrecisionTimer", path: "../..", traits: ["Metrics"]),
    ],
    targets: [
        .executableTarget(
            name: "consumer-metrics",
            dependencies: [
                .product(name: "PrecisionTimerMetrics", package: "PrecisionTimer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
