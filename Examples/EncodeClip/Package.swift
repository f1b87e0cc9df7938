// swift-tools-version:6.1
// A downstream package that depends on swift-h264, as a user's package would. Built and run by
// .ci/run from a clean scratch folder, so the products, the module imports and the system
// libraries a consumer needs are checked on every submission.
//
// A user names the repository instead of the path:
//     .package(url: "https://github.com/OWNER/swift-h264", from: "0.1.0")
// and then `.product(name: "H264", package: "swift-h264")`.
import Foundation
import PackageDescription

// A local dependency's identity is the name of its folder (`swift-h264` in a plain clone, but a
// checkout may be named otherwise): read it off the path rather than assume it.
let swiftH264 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL.lastPathComponent

let package = Package(
    name: "EncodeClip",
    platforms: [.macOS(.v15)],
    dependencies: [
        // H.264 only: without swift-h264's default trait HEVCEncoding, neither building nor
        // running needs libx265 (.ci/run checks that the binary does not link it).
        .package(path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "EncodeClip",
            dependencies: [
                .product(name: "H264", package: swiftH264),
                .product(name: "H264Encoder", package: swiftH264),
                .product(name: "MediaContainers", package: swiftH264),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
