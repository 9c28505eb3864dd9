// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flipbook",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Flipbook", targets: ["Flipbook"]),
        .executable(name: "flipbook", targets: ["flipbook"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // libjpeg-turbo's TurboJPEG API, linked directly: the still path needs it at once.
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        // giflib ships no pkg-config file on Debian; the module map links -lgif.
        .systemLibrary(
            name: "CGIF",
            providers: [.apt(["libgif-dev"])]
        ),
        // libavformat, libavcodec, libavutil and libswscale: headers only at build time. The libraries are
        // opened with dlopen on first use (see loader.c) so that a process which only thumbnails JPEGs
        // does not load libav and its ~130 dependent shared objects (24 ms and 28 MB measured here).
        .target(
            name: "CFFmpeg",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        .target(
            name: "Flipbook",
            dependencies: ["CTurboJPEG", "CGIF", "CFFmpeg"]
        ),
        .executableTarget(
            name: "flipbook",
            dependencies: [
                "Flipbook",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Measurements for `make bench`; not a product.
        .executableTarget(
            name: "flipbook-bench",
            dependencies: ["Flipbook"]
        ),
        .testTarget(
            name: "FlipbookTests",
            dependencies: ["Flipbook", "CFFmpeg", "CTurboJPEG", "CGIF"]
        ),
    ]
)

// libFuzzer targets (`make fuzz`), only when FLIPBOOK_FUZZ=1: they are built with -sanitize=fuzzer,address
// into their own scratch path (.build-fuzz), so normal builds and `swift test` never see them.
if Context.environment["FLIPBOOK_FUZZ"] == "1" {
    for name in ["fuzz-sniff", "fuzz-gif", "fuzz-jpeg", "fuzz-png-webp", "fuzz-probe"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["Flipbook"], path: "Tests/Fuzz/Targets/\(name)"))
    }
    // The server's Range parser and path normaliser, once the FlipbookServer target exists (issue 11).
    if package.targets.contains(where: { $0.name == "FlipbookServer" }) {
        for name in ["fuzz-range", "fuzz-path"] {
            package.targets.append(.executableTarget(name: name, dependencies: ["FlipbookServer"], path: "Tests/Fuzz/Targets/\(name)"))
        }
    }
}
