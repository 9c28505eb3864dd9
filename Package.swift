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
        // libwebp's demuxer and animation decoder (animated WebP): Debian's libwebp-dev, pkg-config libwebpdemux.
        .systemLibrary(
            name: "CWebPDemux",
            pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"])]
        ),
        // Little CMS 2: embedded ICC profiles to sRGB.
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // libwebp's decode API, for scaled decoding straight to the thumbnail size.
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        // libheif: HEIC (libde265) and AVIF (libaom/dav1d) stills.
        .systemLibrary(name: "CHeif", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        // libpng 1.6, row by row, so a large PNG's memory follows the thumbnail.
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        // The default CMYK profile (the one libvips uses), compiled in with #embed.
        .target(name: "CFlipbookProfiles", exclude: ["cmyk.icm"]),
        .target(
            name: "Flipbook",
            dependencies: ["CTurboJPEG", "CGIF", "CFFmpeg", "CLCMS2", "CWebP", "CHeif", "CPNG", "CFlipbookProfiles", "CWebPDemux"]
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
            dependencies: ["Flipbook", "CFFmpeg", "CTurboJPEG", "CGIF", "CLCMS2"]
        ),
    ]
)

// libFuzzer targets (`make fuzz`), only when FLIPBOOK_FUZZ=1: they are built with -sanitize=fuzzer,address
// into their own scratch path (.build-fuzz), so normal builds and `swift test` never see them.
if Context.environment["FLIPBOOK_FUZZ"] == "1" {
    for name in ["fuzz-sniff", "fuzz-gif", "fuzz-jpeg", "fuzz-png-webp", "fuzz-probe"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["Flipbook"], path: "Tests/Fuzz/Targets/\(name)"))
    }
}
