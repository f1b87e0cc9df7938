// Encodes a y4m clip with swift-h264's EncoderSession, writes Annex-B, reads the stream back
// with the bitstream toolkit and prints one line:
//
//     swift run EncodeClip ../../Fixtures/cars_320x240_30f.y4m [out.h264]
import Foundation
import H264
import H264Encoder
import MediaContainers

@main
struct EncodeClip {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard let input = arguments.first else {
            FileHandle.standardError.write(Data("usage: EncodeClip CLIP.y4m [OUT.h264]\n".utf8))
            exit(2)
        }
        let clip = try Y4MClip(contentsOf: input)

        // VTCompressionSessionCreate / EncodeFrame / CompleteFrames / Invalidate, on libx264.
        // `frames` is read after the whole clip is encoded: let it hold every frame.
        var configuration = EncoderConfiguration.liveCapture
        configuration.frameBuffering = .keepingOldest(max(clip.frames.count, 1))
        let session = try EncoderSession(width: clip.width, height: clip.height, configuration: configuration)
        let outputs = session.frames
        for (index, pixels) in clip.frames.enumerated() {
            let frame = try VideoFrame(pixelFormat: .i420, width: clip.width, height: clip.height, contiguous: pixels)
            try session.encode(frame, presentationTimeStamp: clip.frameRate.frameDuration * index)
        }
        try session.completeFrames()
        session.invalidate()

        // AVCC samples → one Annex-B stream (SPS/PPS before every IDR).
        var writer = AnnexBWriter()
        var annexB: [UInt8] = []
        var encoded = 0
        for await frame in outputs {
            try writer.write(frame, to: &annexB)
            encoded += 1
        }
        if let output = arguments.dropFirst().first {
            try Data(annexB).write(to: URL(fileURLWithPath: output))
        }

        // Read it back: access units and the SPS, as any receiver of the stream would.
        let accessUnits = AccessUnitAssembler.accessUnits(inAnnexB: annexB)
        guard let sps = accessUnits.first?.formatDescription?.sequenceParameterSet else {
            FileHandle.standardError.write(Data("no SPS in the encoded stream\n".utf8))
            exit(1)
        }
        // Built without the HEVCEncoding trait (Package.swift): H.265 is refused with a clear error.
        var hevc = EncoderConfiguration()
        hevc.codec = .hevc
        let hevcSession = Result { () throws(MediaError) in try EncoderSession(width: clip.width, height: clip.height, configuration: hevc) }
        guard case .failure(let refusal) = hevcSession, refusal.code == .unsupported else {
            FileHandle.standardError.write(Data("an H.265 session was not refused in a build without HEVCEncoding\n".utf8))
            exit(1)
        }

        print("encoded \(encoded) frames \(clip.width)x\(clip.height) into \(annexB.count) bytes of Annex-B: "
              + "\(accessUnits.count) access units, SPS \(sps.profileName) level \(sps.levelIdc), "
              + "\(sps.displayWidth)x\(sps.displayHeight)")
    }
}

/// The frames of an 8-bit 4:2:0 y4m file, read by H264Media.
struct Y4MClip {
    var width: Int, height: Int
    var frameRate: FrameRate
    var frames: [[UInt8]]

    init(contentsOf path: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (header, frames) = try Y4MStreamReader.frames(in: bytes)
        guard !frames.isEmpty else { throw CocoaError(.fileReadCorruptFile) }
        (width, height, frameRate, self.frames) = (header.width, header.height, header.rate, frames)
    }
}
