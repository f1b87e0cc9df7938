// swift-tools-version:6.1
// A downstream package that depends on swift-h264 by path, as a user's package would: encodes a
// y4m clip in a loop at its frame rate with H264Encoder's EncoderSession, as a camera would, and
// serves it with H264Streaming's RTSPServer:
//
//     swift run LiveCamera ../../Fixtures/cars_320x240_30f.y4m 8554
//     ffplay rtsp://127.0.0.1:8554/live
//
// A user names the repository instead of the path:
//     .package(url: "https://github.com/OWNER/swift-h264", from: "0.1.0")
import Foundation
import PackageDescription

// A local dependency's identity is the name of its folder: read it off the path rather than assume it.
let swiftH264 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL.lastPathComponent

let package = Package(
    name: "LiveCamera",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "LiveCamera",
            dependencies: [
                .product(name: "H264", package: swiftH264),
                .product(name: "H264Encoder", package: swiftH264),
                .product(name: "MediaContainers", package: swiftH264),
                .product(name: "H264Streaming", package: swiftH264),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
