import Foundation
import H264
import H264TestSupport
import Testing

/// Issue 21's must-show: a camera of our own (Scripts/quirky-camera.py) exhibits each quirk real
/// cameras have, one per run and all at once, and `h264 receive` gets every NAL unit FFmpeg gets
/// from it. Per quirk, `h264 receive URL --frames 60` and `ffmpeg -rtsp_transport tcp|udp -i URL
/// -c copy -copyinkf -frames:v 50 -f h264` play it at the same time; the camera starts each
/// session at the file's first access unit. Ours must be the file's first 60 access units (its
/// parameter sets aside: we write the stream's before each IDR), and FFmpeg's NAL units must all
/// be in ours, in order (FFmpeg asks for fewer frames so that its range ends inside ours even
/// where it loses the first access unit). Where FFmpeg 5.1 cannot play a quirk, the case says
/// why and checks ours against the file only.
@Suite(.ownThread) struct QuirkyCameraTests {
    struct Quirk: CustomTestStringConvertible, Sendable {
        /// The script's `--quirk`.
        var name: String
        /// `h264 receive --transport`.
        var transport = "auto"
        /// The `-rtsp_transport`s FFmpeg plays it with.
        var ffmpeg = ["tcp"]
        /// Why FFmpeg 5.1.9 fails on it; nil when it plays it.
        var ffmpegFails: String?
        var testDescription: String { name }
    }

    static let quirks: [Quirk] = [
        // SDP
        Quirk(name: "plid-base64"), Quirk(name: "rtpmap-space"), Quirk(name: "bad-sprop"), Quirk(name: "no-sprop"),
        Quirk(name: "no-origin"), Quirk(name: "empty-fmtp", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "content-base-no-scheme"), Quirk(name: "content-base-path"), Quirk(name: "control-absolute"),
        Quirk(name: "control-star", ffmpegFails: "rtsp.c appends a media-level `*` to the base: SETUP …/stream/*, 404"),
        // RTSP
        Quirk(name: "no-cseq", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "crlf-before-reply", ffmpegFails: "a reply's first line empty: \"Invalid data found when processing input\""),
        Quirk(name: "junk-before-reply", transport: "tcp", ffmpegFails: "reads junk as a reply line: \"Invalid data found when processing input\""),
        Quirk(name: "rtp-before-play-reply", transport: "tcp", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "server-requests", transport: "tcp", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "bogus-rtp-info", ffmpeg: ["tcp", "udp"]),
        // RTP, over both transports
        Quirk(name: "startcode-payload", ffmpeg: ["tcp", "udp"]), Quirk(name: "empty-fua-end", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "marker-on-parameter-sets", ffmpeg: ["tcp", "udp"]), Quirk(name: "no-marker", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "fua-start-end", ffmpeg: ["tcp", "udp"]), Quirk(name: "timestamp-jump", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "startcode-payload", transport: "tcp"), Quirk(name: "empty-fua-end", transport: "tcp"),
        Quirk(name: "no-marker", transport: "tcp"),
        // Transport: --transport auto falls back on 461, and when UDP packets never arrive (after 3 s);
        // with udp-blocked (and all) a single NAL unit received proves the fallback
        Quirk(name: "udp-only", ffmpeg: ["udp"]), Quirk(name: "tcp-only"), Quirk(name: "udp-blocked"),
        // Everything that can go together (the script's ALL)
        Quirk(name: "all", ffmpegFails: "the stray CRLF, the junk and the media-level `*`, as above"),
    ]

    static let file = "conformance/BA1_FT_C.264"

    /// The NAL units of Annex-B `bytes` but SPS and PPS, and the SPS and PPS apart.
    static func nalUnits(_ bytes: [UInt8]) -> (pictures: [ArraySlice<UInt8>], parameterSets: [ArraySlice<UInt8>]) {
        let units = ReferenceAnnexB.split(bytes)
        let isParameterSet = { (unit: ArraySlice<UInt8>) in [7, 8].contains(unit.first! & 0x1F) }
        return (units.filter { !isParameterSet($0) }, units.filter(isParameterSet))
    }

    /// Whether `part` is `whole` with elements left out.
    static func isSubsequence(_ part: [ArraySlice<UInt8>], of whole: [ArraySlice<UInt8>]) -> Bool {
        var position = whole.startIndex
        for unit in part {
            guard let found = whole[position...].firstIndex(of: unit) else { return false }
            position = found + 1
        }
        return true
    }

    @Test(arguments: quirks) func getsEveryNALUnitFFmpegGets(quirk: Quirk) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try QuirkyCamera(file: try TestFixtures.path(Self.file), quirks: [quirk.name])
        defer { camera.kill() }
        // FFmpeg plays the camera while h264 receive does.
        let runs = quirk.ffmpegFails == nil ? quirk.ffmpeg : []
        let ffmpeg = Locked([String: Subprocess.Output]())
        let group = DispatchGroup()
        for transport in runs {
            let output = directory.appendingPathComponent("ffmpeg-\(transport).h264").path
            DispatchQueue.global().async(group: group) {
                let result = try? Subprocess.run("ffmpeg", ["-nostdin", "-v", "error", "-timeout", "10000000", "-rtsp_transport", transport,
                                                            "-i", camera.url, "-map", "0:v", "-c", "copy", "-copyinkf", "-frames:v", "50",
                                                            "-f", "h264", "-y", output])
                ffmpeg.withLock { $0[transport] = result }
            }
        }
        let ours = directory.appendingPathComponent("ours.h264").path
        let received = try CLI.run(["receive", camera.url, "-o", ours, "--frames", "60", "--idle-timeout", "10", "--transport", quirk.transport])
        group.wait()

        #expect(received.status == 0 && received.stderr.contains("wrote 60 access units"), "\(received.stderr)")
        let units = Self.nalUnits(try Array(Data(contentsOf: URL(fileURLWithPath: ours))))
        let fileBytes = try TestFixtures.data(Self.file)
        let file = AccessUnitAssembler.accessUnits(inAnnexB: fileBytes)
        let expected = Self.nalUnits(file.prefix(60).flatMap { [0, 0, 0, 1] + $0.nalUnits.flatMap { [0, 0, 0, 1] + $0 } })
        #expect(units.pictures == expected.pictures, "ours: \(units.pictures.count) NAL units, the file's first 60 access units: \(expected.pictures.count)")
        let fileParameterSets = Set(Self.nalUnits(fileBytes).parameterSets)
        #expect(!units.parameterSets.isEmpty && units.parameterSets.allSatisfy(fileParameterSets.contains))

        for transport in runs {
            let result = try #require(ffmpeg.withLock { $0[transport] }, "ffmpeg -rtsp_transport \(transport) did not run")
            #expect(result.status == 0, "ffmpeg -rtsp_transport \(transport): \(result.stderr)")
            let theirs = Self.nalUnits(try Array(Data(contentsOf: directory.appendingPathComponent("ffmpeg-\(transport).h264"))))
            #expect(theirs.pictures.count >= 50, "ffmpeg -rtsp_transport \(transport) got \(theirs.pictures.count) NAL units")
            #expect(Self.isSubsequence(theirs.pictures, of: units.pictures), "a NAL unit ffmpeg -rtsp_transport \(transport) got is not in ours")
            #expect(Set(theirs.parameterSets).isSubset(of: fileParameterSets))
        }
    }
}
