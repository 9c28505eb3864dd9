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
        // `flipbook serve` (issue 11): HTTP, lifecycle, logging, metrics, HMAC and content hashes.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // Tests only: a real HTTP client for the server suite.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
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
        // The async front object (issue 11): coalescing, caches, a bounded worker pool. No HTTP in here, so
        // another server (Vapor, say) can use it the same way.
        .target(
            name: "FlipbookService",
            dependencies: [
                "Flipbook",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The thin Hummingbird 2 adapter over FlipbookService: routes, ranges, signing, metrics.
        .target(
            name: "FlipbookServer",
            dependencies: [
                "FlipbookService",
                "FlipbookGallery",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The gallery (issue 12): folder listings and the page that plays them; HTTP-free, mounted by the server.
        .target(
            name: "FlipbookGallery",
            dependencies: ["Flipbook"]
        ),
        .executableTarget(
            name: "flipbook",
            dependencies: [
                "Flipbook",
                "FlipbookServer",
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
        .testTarget(
            name: "FlipbookServerTests",
            dependencies: [
                "FlipbookServer",
                "FlipbookService",
                "Flipbook",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "FlipbookGalleryTests",
            dependencies: ["FlipbookGallery", "Flipbook"]
        ),
    ]
)
