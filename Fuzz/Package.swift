// swift-tools-version:6.1
// libFuzzer targets and the leak check for swift-h264, kept in their own package so that the
// root package's `swift build` / `swift test` never see an executable without `main` (the fuzz
// entry gets its `main` from libFuzzer). Built and run by Scripts/fuzz.sh and Scripts/leakcheck.sh.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which differs between checkouts
// (swift-h264, main, wt-fuzz …).
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-h264-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // One executable, many entries: FUZZ_TARGET picks the parser (see Targets.swift).
        .executableTarget(
            name: "H264Fuzz",
            dependencies: [
                .product(name: "H264", package: rootIdentity), .product(name: "MediaContainers", package: rootIdentity),
                .product(name: "H264Decoder", package: rootIdentity), .product(name: "HEVC", package: rootIdentity),
                .product(name: "RTP", package: rootIdentity), .product(name: "RTSPMessages", package: rootIdentity),
                .product(name: "RTMPMessages", package: rootIdentity), .product(name: "AudioCodecs", package: rootIdentity),
            ],
            swiftSettings: strictSwift
        ),
        // Create/encode/invalidate cycles for valgrind (Scripts/leakcheck.sh); built without sanitizers.
        .executableTarget(
            name: "H264LeakCheck",
            dependencies: [.product(name: "H264Encoder", package: rootIdentity), .product(name: "H264Decoder", package: rootIdentity),
                           .product(name: "HEVC", package: rootIdentity),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift
        ),
    ]
)
