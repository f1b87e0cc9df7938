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
        .library(name: "MediaCore", targets: ["MediaCore"]),
        .library(name: "H264", targets: ["H264"]),
        .library(name: "HEVC", targets: ["HEVC"]),
        .library(name: "AudioCodecs", targets: ["AudioCodecs"]),
        .library(name: "MediaContainers", targets: ["MediaContainers"]),
        .library(name: "RTP", targets: ["RTP"]),
        .library(name: "RTSPMessages", targets: ["RTSPMessages"]),
        .library(name: "RTMPMessages", targets: ["RTMPMessages"]),
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
        // HTTP/2 for the HLS server over TLS (ALPN h2).
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
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
        // The codec-neutral core, pure Swift: bit reading, RBSP, Exp-Golomb, Annex-B and
        // length-prefixed framing, the streaming reader, diagnostics and the one error type,
        // frame rate, the format description both codecs share.
        .target(name: "MediaCore", swiftSettings: strictSwift),
        // One codec each, side by side over MediaCore (neither imports the other): NAL header and
        // types, parameter sets, slice headers, the access-unit rule, avcC / hvcC.
        .target(name: "H264", dependencies: ["MediaCore"], swiftSettings: strictSwift),
        .target(name: "HEVC", dependencies: ["MediaCore"], swiftSettings: strictSwift),
        // The audio codecs' configurations beside them: MPEG-4 AudioSpecificConfig, Opus, G.711.
        .target(name: "AudioCodecs", dependencies: ["MediaCore"], swiftSettings: strictSwift),
        // Pure Swift containers for both codecs, no I/O: FLV (with AMF0 script data), y4m,
        // framemd5, the inspection model.
        .target(name: "MediaContainers", dependencies: ["MediaCore", "H264", "HEVC", "AudioCodecs"], swiftSettings: strictSwift),
        // RTP/RTCP and SDP, and the one packetizer/depacketizer engine over the two payload
        // formats (RFC 6184, RFC 7798). Sans-I/O.
        .target(name: "RTP", dependencies: ["MediaCore", "H264", "HEVC", "AudioCodecs"], swiftSettings: strictSwift),
        // Sans-I/O RTSP messages: requests, responses, the message reader, authentication, Transport.
        .target(name: "RTSPMessages", dependencies: ["MediaCore"], swiftSettings: strictSwift),
        // Sans-I/O RTMP: handshake, chunk reader and writer, messages and commands (AMF0 is FLV's).
        .target(name: "RTMPMessages", dependencies: ["MediaCore", "MediaContainers"], swiftSettings: strictSwift),
        // Re-exports MediaContainers for one minor release (0.2.x): H264Media's old name.
        .target(name: "H264Media", dependencies: ["MediaContainers"], swiftSettings: strictSwift),
        // What both sessions share (package access only; no product: H264Encoder and
        // H264Decoder pull it in): the lifecycle, the job queue, the output sink.
        .target(name: "H264SessionCore", dependencies: ["MediaCore"], swiftSettings: strictSwift),
        .target(
            name: "H264Decoder",
            dependencies: [
                "H264", "HEVC", "AudioCodecs", "MediaContainers", "RTP", "H264SessionCore", "CAVCodec",
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
                "H264", "HEVC", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The HLS server (HLSServer): HTTP/1.1, and HTTP/2 over TLS.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "h264",
            dependencies: [
                "H264", "HEVC", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "H264Encoder", "H264Decoder", "H264Streaming",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSwift
        ),
        .target(name: "H264TestSupport", dependencies: ["H264", "AudioCodecs", "MediaContainers", "RTP", "H264Streaming"], path: "Tests/H264TestSupport", swiftSettings: strictSwift),
        .testTarget(name: "H264Tests", dependencies: ["H264", "MediaCore", "AudioCodecs", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "HEVCTests", dependencies: ["H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "MediaContainersTests", dependencies: ["H264", "MediaCore", "AudioCodecs", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "RTSPMessagesTests", dependencies: ["MediaCore", "RTP", "RTSPMessages", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "RTMPMessagesTests", dependencies: ["MediaCore", "H264", "MediaContainers", "RTMPMessages", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "H264SessionCoreTests", dependencies: ["H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "H264SessionCore", "H264TestSupport"], swiftSettings: strictSwift),
        .testTarget(name: "H264EncoderTests", dependencies: [
            "H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "H264Encoder", "H264SessionCore", "H264TestSupport",
            // The H.265 encoder tests decode with our DecoderSession too.
            "H264Decoder",
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264DecoderTests", dependencies: [
            "H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "AudioCodecs", "H264Decoder", "H264Encoder", "H264SessionCore", "H264TestSupport",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strictSwift),
        // A plain C loop over libx264 and other baselines, used only by H264Benchmarks.
        .target(name: "CX264Baseline", path: "Sources/CX264Baseline", linkerSettings: [.linkedLibrary("x264")]),
        // A plain C loop over libx265 (hevc_encoder_vs_c), used only by H264Benchmarks.
        .target(name: "CX265Baseline", dependencies: ["CX265"], path: "Sources/CX265Baseline"),
        // A plain C loop over libavcodec, used only by H264Benchmarks.
        .target(name: "CAVCodecBaseline", dependencies: ["CAVCodec"], path: "Sources/CAVCodecBaseline"),
        .testTarget(name: "H264Benchmarks", dependencies: [
            "H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "H264Encoder", "H264Decoder", "H264TestSupport", "CX264Baseline", "CAVCodecBaseline",
            .target(name: "CX265Baseline", condition: .when(traits: ["HEVCEncoding"])),
            "h264", // ServeBenchmarks runs `h264 serve`
            "H264Streaming", // RTSPIngestBenchmarks receives with RTSPClient
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264StreamingTests", dependencies: [
            "H264", "MediaCore", "AudioCodecs", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "H264Streaming", "H264TestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strictSwift),
        // What Examples/LiveCamera and Examples/RTSPViewer do, as library calls against real peers
        // (gst-rtsp-server, ffprobe); .ci/run builds and runs the example packages themselves.
        .testTarget(name: "H264ExamplesTests", dependencies: [
            "H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "H264Encoder", "H264Decoder", "H264Streaming", "H264TestSupport",
            .product(name: "NIOPosix", package: "swift-nio"),
        ], swiftSettings: strictSwift),
        .testTarget(name: "H264CLITests", dependencies: [
            "H264", "MediaCore", "MediaContainers", "RTP", "RTSPMessages", "RTMPMessages", "HEVC", "H264Decoder", "h264", "H264Streaming", "H264TestSupport",
            // The serve broadcaster's unit tests run it on EmbeddedChannel.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
        ], swiftSettings: strictSwift),
    ]
)
