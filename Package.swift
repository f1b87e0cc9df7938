// swift-tools-version:6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-h264",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "H264", targets: ["H264"]),
        .library(name: "HEVC", targets: ["HEVC"]),
        .library(name: "H264Encoder", targets: ["H264Encoder"]),
        .library(name: "H264Decoder", targets: ["H264Decoder"]),
        .library(name: "H264Media", targets: ["H264Media"]),
        .library(name: "H264Streaming", targets: ["H264Streaming"]),
        .executable(name: "h264", targets: ["h264"]),
    ],
    traits: [
        // libx265 behind EncoderSession (EncoderConfiguration.codec = .hevc). On by default; a
        // package that only encodes H.264 drops it (`traits: []` in its `.package` line) and then
        // needs no libx265 to build or run.
        .trait(name: "HEVCEncoding", description: "H.265 encoding with libx265 in H264Encoder (needs libx265-dev)."),
        .default(enabledTraits: ["HEVCEncoding"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // MD5 and SHA-256 for RTSP Digest authentication (RFC 2617 / RFC 7616).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // TLS for RTSPS (rtsps://), client and server.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Counts heap allocations in H264Benchmarks (allocations_per_frame); nothing else uses it.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        // `swift package generate-documentation` for the DocC catalogs; no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CX264",
            pkgConfig: "x264",
            providers: [.apt(["libx264-dev", "libyuv-dev"]), .brew(["x264", "libyuv"])]
        ),
        // libx265, only with the HEVCEncoding trait (H264Encoder depends on it under that condition).
        .systemLibrary(
            name: "CX265",
            pkgConfig: "x265",
            providers: [.apt(["libx265-dev"]), .brew(["x265"])]
        ),
        .systemLibrary(
            name: "CAVCodec",
            pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev", "libavutil-dev", "libyuv-dev"]), .brew(["ffmpeg", "libyuv"])]
        ),
        .target(name: "H264", swiftSettings: strictSwift),
        // Pure Swift H.265 bitstream toolkit over H264's codec-neutral parts (bit reading, RBSP,
        // Annex-B scanning, length-prefix framing, H264Error): NAL header, VPS/SPS/PPS, access units.
        .target(name: "HEVC", dependencies: ["H264"], swiftSettings: strictSwift),
        // Pure Swift files over H264: y4m, framemd5, FLV with timestamps, the inspection model. No I/O.
        .target(name: "H264Media", dependencies: ["H264", "HEVC"], swiftSettings: strictSwift),
        // What both sessions share (package access only; no product: H264Encoder and
        // H264Decoder pull it in): the lifecycle, the job queue, the output sink.
        .target(name: "H264SessionCore", dependencies: ["H264"], swiftSettings: strictSwift),
        .target(
            name: "H264Decoder",
            dependencies: [
                "H264", "HEVC", "H264Media", "H264SessionCore", "CAVCodec",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "H264Encoder",
            dependencies: [
                "H264", "HEVC", "H264SessionCore", "CX264",
                .target(name: "CX265", condition: .when(traits: ["HEVCEncoding"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // SwiftNIO: the RTSP servers, the live fan-out, RTP over UDP, pacing. No printing.
        .target(
            name: "H264Streaming",
            dependencies: [
                "H264", "HEVC",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "h264",
            dependencies: [
                "H264", "HEVC", "H264Media", "H264Encoder", "H264Decoder", "H264Streaming",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        .target(name: "H264TestSupport", dependencies: ["H264", "H264Media"], path: "Tests/H264TestSupport", swiftSettings: strictSwift),
        .testTarget(name: "H264Tests", dependencies: ["H264", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "HEVCTests", dependencies: ["H264", "HEVC", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "H264MediaTests", dependencies: ["H264", "HEVC", "H264Media", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "H264SessionCoreTests", dependencies: ["H264", "H264SessionCore", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "H264EncoderTests", dependencies: [
            "H264", "HEVC", "H264Encoder", "H264SessionCore", "H264TestSupport",
            // The H.265 encoder tests decode with our DecoderSession too.
            "H264Decoder",
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264DecoderTests", dependencies: [
            "H264", "HEVC", "H264Decoder", "H264Encoder", "H264SessionCore", "H264TestSupport",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strictSwift),
        // A plain C loop over libx264 and other baselines, used only by H264Benchmarks.
        .target(name: "CX264Baseline", path: "Sources/CX264Baseline", linkerSettings: [.linkedLibrary("x264")]),
        // A plain C loop over libx265 (hevc_encoder_vs_c), used only by H264Benchmarks.
        .target(name: "CX265Baseline", dependencies: ["CX265"], path: "Sources/CX265Baseline"),
        // A plain C loop over libavcodec, used only by H264Benchmarks.
        .target(name: "CAVCodecBaseline", dependencies: ["CAVCodec"], path: "Sources/CAVCodecBaseline"),
        .testTarget(name: "H264Benchmarks", dependencies: [
            "H264", "H264Encoder", "H264Decoder", "H264TestSupport", "CX264Baseline", "CAVCodecBaseline",
            .target(name: "CX265Baseline", condition: .when(traits: ["HEVCEncoding"])),
            "h264", // ServeBenchmarks runs `h264 serve`
            "H264Streaming", // RTSPIngestBenchmarks receives with RTSPClient
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264StreamingTests", dependencies: [
            "H264", "HEVC", "H264Streaming", "H264TestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ], swiftSettings: strictSwift),
        // What Examples/LiveCamera and Examples/RTSPViewer do, as library calls against real peers
        // (gst-rtsp-server, ffprobe); .ci/run builds and runs the example packages themselves.
        .testTarget(name: "H264ExamplesTests", dependencies: [
            "H264", "H264Media", "H264Encoder", "H264Decoder", "H264Streaming", "H264TestSupport",
            .product(name: "NIOPosix", package: "swift-nio"),
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264CLITests", dependencies: [
            "H264", "HEVC", "H264Media", "H264Decoder", "h264", "H264Streaming", "H264TestSupport",
            // The serve broadcaster's unit tests run it on EmbeddedChannel.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ], swiftSettings: strictSwift),
    ]
)
