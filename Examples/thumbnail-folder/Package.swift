// swift-tools-version:6.0
import Foundation
import PackageDescription

// Flipbook by path, as a user's package would take it. SwiftPM names a path dependency after its folder,
// which is whatever the checkout is called, so the manifest reads it.
let flipbookPath = "../.."
let flipbook = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(flipbookPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "thumbnail-folder",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: flipbookPath)],
    targets: [
        .executableTarget(name: "thumbnail-folder", dependencies: [.product(name: "Flipbook", package: flipbook)]),
    ]
)
