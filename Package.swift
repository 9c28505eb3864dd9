// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Flipbook",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Flipbook", targets: ["Flipbook"]),
        .library(name: "FlipbookService", targets: ["FlipbookService"]),
        .library(name: "FlipbookIngest", targets: ["FlipbookIngest"]),
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
        // `make docs`: the DocC catalogs of Flipbook and FlipbookService as a static site.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // `flipbook worker` (issue 20): PostgreSQL is the job queue.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // The TLS context of the worker's own connections (`Session`); postgres-nio already builds on it.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Traces (issue 45): the API the libraries take a tracer through, and OTLP export in the executable only.
        // swift-otel's OTLPHTTP trait alone: its default also builds the gRPC exporter (grpc-swift-2 and its
        // HTTP/2 transport), which Flipbook never uses.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The HTTP client under object storage and remote sources (issues 43 and 44); the server suite's client too.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // libjpeg-turbo's TurboJPEG API, linked directly: the still path needs it at once.
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        // libjpeg-turbo's libjpeg API: the still path streams a JPEG through its source manager (a
        // 64 KiB read buffer) instead of handing TurboJPEG the whole file.
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
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
        // Little CMS 2: embedded ICC profiles to sRGB.
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        // libwebp's decode API (scaled decoding straight to the thumbnail size) and its demuxer and
        // animation decoder (animated WebP), in one module.
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        // libheif: HEIC (libde265) and AVIF (libaom/dav1d) stills.
        // Headers only: CHeifLoader loads the library with dlopen on first use.
        .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
        // libheif loaded on first use (most processes never decode HEIF, and libheif brings x265, libde265,
        // libaom and dav1d: 2 MB and 7-30 ms at every start), and a libheif decoder plugin over dav1d
        // with one frame in flight: libheif 1.15's own keeps dav1d's frame pipelining, which doubles a still
        // AVIF's peak memory (bench/heif_decode.py).
        .target(name: "CHeifLoader", linkerSettings: [.linkedLibrary("dav1d"), .linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // libpng 1.6, row by row, so a large PNG's memory follows the thumbnail.
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        // Intel's ISA-L: its SIMD inflate and CRC-32 for the PNG fast path (8-bit RGB/RGBA), about 1.6x
        // zlib's inflate speed, which libpng is bound to.
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        // The default CMYK profile (the one libvips uses), compiled in with #embed.
        .target(name: "CFlipbookProfiles", exclude: ["cmyk.icm"]),
        // The library in three targets by stage (issue 14); users import `Flipbook`, which re-exports the two
        // below it. Across them, what users do not need is `package`, not `public`.
        // The core: byte sources, sniffing, limits, errors, cancellation, geometry, images, results. No C.
        .target(name: "FlipbookCore"),
        // The codecs: one owner class per C object (TurboJPEG, giflib, libav, swscale, libwebp, libpng,
        // libheif, lcms), the header readers, and the pixel work decoders do while decoding (resampling,
        // shrink-on-load, swscale rendering, tone mapping).
        .target(
            name: "FlipbookCodecs",
            dependencies: ["FlipbookCore", "CTurboJPEG", "CJPEG", "CGIF", "CFFmpeg", "CLCMS2", "CWebP", "CHeif", "CHeifLoader", "CPNG",
                           "CISAL", "CFlipbookProfiles"]
        ),
        // The pipelines (still, animation, video, conversion), frame sources and selectors, sinks, the router
        // and `MediaInput`, the library's entry point.
        .target(
            name: "Flipbook",
            dependencies: ["FlipbookCore", "FlipbookCodecs", "CTurboJPEG", "CFFmpeg", "CWebP"]
        ),
        // Where media lives (issues 43 and 44): a store (a local root, an S3 prefix, a remote HTTP origin) and
        // its sources (resolve, identity, size, ranged reads, listing, atomic writes). S3 is spoken directly:
        // Signature Version 4, the shared AWS configuration and credentials, ListObjectsV2, multipart uploads,
        // over AsyncHTTPClient; remote URLs are fetched through a guard against server-side request forgery.
        .target(
            name: "FlipbookStorage",
            dependencies: [
                "FlipbookCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The async front object (issue 11): coalescing, caches, a bounded worker pool. No HTTP server in here,
        // so another server (Vapor, say) can use it the same way; sources beyond the disk (an S3 prefix as the
        // root, URLs) come through FlipbookStorage.
        .target(
            name: "FlipbookService",
            dependencies: [
                "Flipbook",
                "FlipbookStorage",
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
                "FlipbookStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The gallery (issue 12): folder listings and the page that plays them; HTTP-free, mounted by the server.
        .target(
            name: "FlipbookGallery",
            dependencies: ["Flipbook", "FlipbookIngest", "FlipbookStorage"]
        ),
        // The ingestion stage's library (issue 20): recipes, placeholders (ThumbHash, BlurHash) and the result
        // of one upload, written under an output root by content hash. `flipbook ingest` and `flipbook worker`
        // are thin layers over it.
        .target(
            name: "FlipbookIngest",
            dependencies: ["Flipbook", "FlipbookStorage", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Tracing", package: "swift-distributed-tracing")]
        ),
        // The PostgreSQL job queue behind `flipbook worker` (issue 20): migrations, claims, leases, LISTEN/NOTIFY
        // wake-ups and metrics. It runs jobs through a closure, so it does not know how a file is ingested.
        .target(
            name: "FlipbookWorker",
            dependencies: [
                "FlipbookService",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "flipbook",
            dependencies: [
                "Flipbook",
                "FlipbookStorage",
                "FlipbookServer",
                "FlipbookWorker",
                "FlipbookIngest",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // One process per poster or thumbnail, so start-up is part of every job (issue 14). lld packs the
            // ~110,000 relative relocations of this PIE into RELR (2.6 MB of RELA read at every start -> 21 KB;
            // glibc >= 2.36), and --no-export-dynamic undoes the static stdlib's -export-dynamic, which put our
            // ~27,000 symbols into the dynamic symbol table that each dlopened libav dependency searches first.
            // Together: 1080p poster peak RSS 65.6 -> 60.4 MB, measured here with /usr/bin/time.
            //
            // Release builds also place the functions the one-shot commands run first in .text, in the order of
            // Sources/flipbook/startup.order (scripts/order-startup-code.py; `make release` compiles with
            // function sections so that lld can move them one by one). Scattered, the ~480 KB they are spanned
            // 2 MB of pages, and the kernel's 64 KB fault-around made 6-7 MB of .text resident in every process.
            exclude: ["startup.order"],
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
                             .when(platforms: [.linux])),
                .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/flipbook/startup.order",
                              "-Xlinker", "--no-warn-symbol-ordering"],
                             .when(platforms: [.linux], configuration: .release)),
            ]
        ),
        // Measurements for `make bench`; not a product.
        .executableTarget(
            name: "flipbook-bench",
            dependencies: ["Flipbook"]
        ),
        // What every test target shares: `.offPool` runs test bodies on threads of their own (not the
        // cooperative pool, which the code under test needs).
        .target(name: "FlipbookTestSupport", path: "Tests/FlipbookTestSupport"),
        .testTarget(
            name: "FlipbookTests",
            dependencies: ["Flipbook", "FlipbookTestSupport", "CFFmpeg", "CTurboJPEG", "CGIF", "CLCMS2"]
        ),
        .testTarget(
            name: "FlipbookServerTests",
            dependencies: [
                "FlipbookServer",
                "FlipbookService",
                "FlipbookStorage",
                "Flipbook",
                "FlipbookTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "FlipbookWorkerTests",
            dependencies: [
                "FlipbookWorker",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FlipbookStorageTests",
            dependencies: ["FlipbookStorage", "FlipbookTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "FlipbookIngestTests",
            dependencies: ["FlipbookIngest", "Flipbook", "FlipbookTestSupport"]
        ),
        .testTarget(
            name: "FlipbookGalleryTests",
            dependencies: ["FlipbookGallery", "Flipbook", "FlipbookIngest", "FlipbookTestSupport"]
        ),
    ]
)

// Examples/derivative-server's source, compiled a second time as a target of this package, so `make test` checks it
// against the dependencies this build already has instead of building NIO, Hummingbird and the rest again for a
// second root (five minutes of a fresh clone's test run). `packageAccess: false` keeps `package` declarations out
// of its reach, as they are for a user's package; `make examples` still builds the example as a package of its own.
package.targets.append(.executableTarget(
    name: "derivative-server-example",
    dependencies: ["Flipbook", "FlipbookService", .product(name: "Hummingbird", package: "hummingbird")],
    path: "Examples/derivative-server/Sources/derivative-server",
    packageAccess: false
))

// libFuzzer targets (`make fuzz`), only when FLIPBOOK_FUZZ=1: they are built with -sanitize=fuzzer,address
// into their own scratch path (.build-fuzz), so normal builds and `swift test` never see them.
if Context.environment["FLIPBOOK_FUZZ"] == "1" {
    package.targets.append(.target(name: "FuzzDriver", path: "Tests/Fuzz/Driver"))
    for name in ["fuzz-sniff", "fuzz-gif", "fuzz-frames", "fuzz-jpeg", "fuzz-png-webp", "fuzz-probe"] {
        package.targets.append(.executableTarget(name: name, dependencies: ["Flipbook", "FuzzDriver"], path: "Tests/Fuzz/Targets/\(name)"))
    }
    // The server's Range parser and path normaliser, once the FlipbookServer target exists (issue 11).
    if package.targets.contains(where: { $0.name == "FlipbookServer" }) {
        for name in ["fuzz-range", "fuzz-path"] {
            package.targets.append(.executableTarget(name: name, dependencies: ["FlipbookServer", "FuzzDriver"], path: "Tests/Fuzz/Targets/\(name)"))
        }
    }
}
