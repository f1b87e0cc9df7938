// swift-tools-version:6.1
// A downstream package that depends on swift-h264 by path, as a user's package would: plays an
// RTSP URL with H264Streaming's RTSPClient and decodes it with H264Decoder's DecoderSession.
//
//     swift run RTSPViewer rtsp://127.0.0.1:8554/live [FRAMES]
//
// A user names the repository instead of the path:
//     .package(url: "https://github.com/OWNER/swift-h264", from: "0.1.0")
import Foundation
import PackageDescription

// A local dependency's identity is the name of its folder: read it off the path rather than assume it.
let swiftH264 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardizedFileURL.lastPathComponent

let package = Package(
    name: "RTSPViewer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "RTSPViewer",
            dependencies: [
                .product(name: "H264", package: swiftH264),
                .product(name: "H264Decoder", package: swiftH264),
                .product(name: "HEVC", package: swiftH264),
                .product(name: "H264Streaming", package: swiftH264),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
