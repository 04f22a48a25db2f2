// swift-tools-version:6.0
//===----------------------------------------------------------------------===//
// A consumer of PrecisionTimer, as a user's package depends on it: the product
// `PrecisionTimer` only. `.ci/consumer-check` builds it and checks what it
// resolves and what its binary needs at run time. A package of its own: the
// root package declares its targets one by one, and none of them is here.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [
        // A path dependency is known by its folder's name (a clone's may be
        // anything): `name:` lets the product below name it PrecisionTimer.
        .package(name: "PrecisionTimer", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "consumer",
            dependencies: [
                .product(name: "PrecisionTimer", package: "PrecisionTimer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
