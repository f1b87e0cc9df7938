import Foundation
import H264
import H264TestSupport
import Testing

/// Issue 21's must-show: a camera of our own (Scripts/quirky-camera.py) exhibits each quirk real
/// cameras have, one per run and all at once, and `h264 receive` gets the very NAL units FFmpeg
/// gets from it. Per quirk, `h264 receive URL --frames 60` and `ffmpeg -rtsp_transport tcp|udp
/// -i URL -c copy -copyinkf -frames:v 60 -f h264` play it at the same time; the camera starts
/// each session at the file's first access unit, so both ask for the same 60 access units. Ours
/// must be the file's first 60 (its parameter sets aside: we write the stream's before each
/// IDR), and FFmpeg's picture NAL units must equal ours, element for element. Where FFmpeg 5.1
/// cannot play a quirk, the case says why and checks that FFmpeg fails so.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(2))) struct QuirkyCameraTests {
    struct Quirk: CustomTestStringConvertible, Sendable {
        /// The script's `--quirk`.
        var name: String
        /// `h264 receive --transport`.
        var transport = "auto"
        /// The `-rtsp_transport`s FFmpeg plays it with.
        var ffmpeg = ["tcp"]
        /// What FFmpeg 5.1.9 prints on standard error when it fails on the quirk (with exit
        /// status 1); nil when it plays it.
        var ffmpegFails: String?
        var testDescription: String { name }
    }

    static let quirks: [Quirk] = [
        // SDP
        Quirk(name: "plid-base64"), Quirk(name: "rtpmap-space"), Quirk(name: "bad-sprop"), Quirk(name: "no-sprop"),
        Quirk(name: "no-origin"), Quirk(name: "empty-fmtp", ffmpeg: ["tcp", "udp"]),
        Quirk(name: "content-base-no-scheme"), Quirk(name: "content-base-path"), Quirk(name: "control-absolute"),
        // rtsp.c appends a media-level `*` to the base: SETUP …/stream/*, which the camera answers 404.
        Quirk(name: "control-star", ffmpegFails: "method SETUP failed: 404 Not Found"),
        // RTSP
        Quirk(name: "no-cseq", ffmpeg: ["tcp", "udp"]),
        // A reply's first line empty, or junk read as a reply line.
        Quirk(name: "crlf-before-reply", ffmpegFails: "Invalid data found when processing input"),
        Quirk(name: "junk-before-reply", transport: "tcp", ffmpegFails: "Invalid data found when processing input"),
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
        // Everything that can go together (the script's ALL): the stray CRLF stops FFmpeg first.
        Quirk(name: "all", ffmpegFails: "Invalid data found when processing input"),
    ]

    static let file = "conformance/BA1_FT_C.264"
    /// The access units each side asks for.
    static let frames = 60

    /// The NAL units of Annex-B `bytes` but SPS and PPS, and the SPS and PPS apart.
    static func nalUnits(_ bytes: [UInt8]) -> (pictures: [ArraySlice<UInt8>], parameterSets: [ArraySlice<UInt8>]) {
        let units = ReferenceAnnexB.split(bytes)
        let isParameterSet = { (unit: ArraySlice<UInt8>) in [7, 8].contains(unit.first! & 0x1F) }
        return (units.filter { !isParameterSet($0) }, units.filter(isParameterSet))
    }

    /// The picture NAL units (no SPS, no PPS) of each access unit of the file.
    static func filePictures() throws -> [[ArraySlice<UInt8>]] {
        AccessUnitAssembler.accessUnits(inAnnexB: try TestFixtures.data(file)).map { unit in
            nalUnits(unit.nalUnits.flatMap { [0, 0, 0, 1] + $0 }).pictures
        }
    }

    /// How many access units FFmpeg loses at the start of the camera's session: over TCP the
    /// rtp-before-play-reply camera interleaves its first access unit before the PLAY answer,
    /// and FFmpeg's rtsp.c (ff_rtsp_read_reply) skips interleaved packets while it waits for an
    /// answer, so its stream begins at the file's second access unit. (Over UDP those packets
    /// wait in the socket and FFmpeg reads them after the answer: none lost.)
    static func accessUnitsFFmpegLoses(_ quirk: Quirk, transport: String) -> Int {
        quirk.name == "rtp-before-play-reply" && transport == "tcp" ? 1 : 0
    }

    /// `ffmpeg -rtsp_transport TRANSPORT -i URL -c copy -frames:v 60 -f h264 OUTPUT`.
    static func ffmpeg(_ url: String, transport: String, output: String) throws -> Subprocess.Output {
        try Subprocess.run("timeout", ["60", "ffmpeg", "-nostdin", "-v", "error", "-timeout", "10000000", "-rtsp_transport", transport,
                                       "-i", url, "-map", "0:v", "-c", "copy", "-copyinkf", "-frames:v", String(frames),
                                       "-f", "h264", "-y", output])
    }

    @Test(arguments: quirks) func getsTheNALUnitsFFmpegGets(quirk: Quirk) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try QuirkyCamera(file: try TestFixtures.path(Self.file), quirks: [quirk.name])
        defer { camera.kill() }
        // FFmpeg plays the camera while h264 receive does.
        let ffmpeg = Locked([String: Result<Subprocess.Output, any Error>]())
        let group = DispatchGroup()
        for transport in quirk.ffmpeg {
            let output = directory.appendingPathComponent("ffmpeg-\(transport).h264").path
            DispatchQueue.global().async(group: group) {
                let result = Result { try Self.ffmpeg(camera.url, transport: transport, output: output) }
                ffmpeg.withLock { $0[transport] = result }
            }
        }
        let ours = directory.appendingPathComponent("ours.h264").path
        let received = try CLI.run(["receive", camera.url, "-o", ours, "--frames", String(Self.frames), "--idle-timeout", "10",
                                    "--transport", quirk.transport])
        group.wait()

        #expect(received.status == 0 && received.stderr.contains("wrote \(Self.frames) access units"), "\(received.stderr)")
        let units = Self.nalUnits(try Array(Data(contentsOf: URL(fileURLWithPath: ours))))
        let file = try Self.filePictures()
        #expect(units.pictures == Array(file.prefix(Self.frames).joined()),
                "ours: \(units.pictures.count) picture NAL units, the file's first \(Self.frames) access units: \(file.prefix(Self.frames).joined().count)")
        let fileParameterSets = Set(Self.nalUnits(try TestFixtures.data(Self.file)).parameterSets)
        #expect(!units.parameterSets.isEmpty && units.parameterSets.allSatisfy(fileParameterSets.contains))

        for transport in quirk.ffmpeg {
            let result = try #require(try ffmpeg.withLock { $0[transport] }?.get(), "ffmpeg -rtsp_transport \(transport) did not run")
            if let failure = quirk.ffmpegFails {
                #expect(result.status == 1 && result.stderr.contains(failure), "ffmpeg -rtsp_transport \(transport): \(result.stderr)")
                continue
            }
            #expect(result.status == 0, "ffmpeg -rtsp_transport \(transport): \(result.stderr)")
            let theirs = Self.nalUnits(try Array(Data(contentsOf: directory.appendingPathComponent("ffmpeg-\(transport).h264"))))
            #expect(Set(theirs.parameterSets).isSubset(of: fileParameterSets))
            // The same access units on both sides: ours from the first, FFmpeg's from the first
            // it did not lose; both asked for as many.
            let lost = Self.accessUnitsFFmpegLoses(quirk, transport: transport)
            #expect(theirs.pictures == Array(file[lost..<(lost + Self.frames)].joined()),
                    "ffmpeg -rtsp_transport \(transport): \(theirs.pictures.count) picture NAL units")
            #expect(Array(theirs.pictures.dropLast(file[Self.frames..<(Self.frames + lost)].joined().count))
                        == Array(units.pictures.dropFirst(file[0..<lost].joined().count)),
                    "ffmpeg -rtsp_transport \(transport): not ours over access units \(lost)..<\(Self.frames)")
        }
    }
}
