// swift-tools-version:6.0
import Foundation
import PackageDescription

// Flipbook by path, as a user's package would take it. SwiftPM names a path dependency after its folder,
// which is whatever the checkout is called, so the manifest reads it.
let flipbookPath = "../.."
let flipbook = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(flipbookPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "derivative-server",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: flipbookPath),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(name: "derivative-server", dependencies: [
            .product(name: "FlipbookService", package: flipbook),
            .product(name: "Hummingbird", package: "hummingbird"),
        ]),
    ]
)
