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
        // The gallery (issue 12): folder listings and the page that plays them; HTTP-free, mounted by the server.
        .target(
            name: "FlipbookGallery",
            dependencies: ["Flipbook"]
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
        .testTarget(
            name: "FlipbookGalleryTests",
            dependencies: ["FlipbookGallery", "Flipbook"]
        ),
    ]
)
