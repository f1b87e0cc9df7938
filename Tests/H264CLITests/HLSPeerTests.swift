import Foundation
import H264TestSupport
import Testing

/// HLS and Low-Latency HLS out of `relay` and `serve` (issue 37), read by peers: the playlist
/// keeps the LL-HLS rules (RFC 8216bis: every `EXT-X-PART` ≤ `PART-TARGET`, every `EXTINF`
/// rounded ≤ `EXT-X-TARGETDURATION`, a preload hint, `EXT-X-SERVER-CONTROL` with
/// `CAN-BLOCK-RELOAD=YES` and `PART-HOLD-BACK` ≥ 3 × `PART-TARGET`); a blocking reload is held
/// until its part is there; a far-future `_HLS_msn` gets 400; every answer carries CORS; FFmpeg
/// decodes 90 frames without an error line; GStreamer's `playbin3` (`hlsdemux2`) plays it; headless Chromium
/// plays it natively without a stall (a wait with less than 0.5 s buffered; Scripts/chromium-hls.py).
/// curl is the HTTP client; every program runs
/// under `timeout`.
@Suite(.serialized, .ownThread, .timeLimit(.minutes(4))) struct HLSPeerTests {
    /// An HTTP answer as curl saw it.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
        var seconds: Double
    }

    /// `GET url` with curl (at most `limit` s).
    static func get(_ url: String, limit: Int = 20) throws -> Answer {
        let started = Date()
        let run = try Subprocess.run("timeout", [String(limit + 5), "curl", "-sS", "--max-time", String(limit), "-D", "-", url])
        let seconds = Date().timeIntervalSince(started)
        guard run.status == 0 else { throw LoopbackError("curl \(url): \(run.stderr)") }
        let parts = String(decoding: run.stdout, as: UTF8.self).components(separatedBy: "\r\n\r\n")
        var lines = parts[0].components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: CharacterSet.whitespaces)
        }
        return Answer(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"), seconds: seconds)
    }

    /// `h264 ARGUMENTS… --hls 127.0.0.1:0/live`, started; its playlist URL from its `listening` event.
    static func start(_ arguments: [String]) throws -> (process: LoggingProcess, url: String) {
        let process = try LoggingProcess(executable: CLI.executable, arguments + ["--hls", "127.0.0.1:0/live"], untilListening: "http")
        guard let port = process.listeningPort(scheme: "http") else {
            process.kill()
            throw LoopbackError("h264 did not start HLS: \(process.stderr)")
        }
        return (process, "http://127.0.0.1:\(port)/live/index.m3u8")
    }

    /// The lines of `playlist` starting with `prefix`.
    static func lines(_ playlist: String, _ prefix: String) -> [Substring] {
        playlist.split(separator: "\n").filter { $0.hasPrefix(prefix) }
    }

    /// Attribute `name` of a playlist tag line.
    static func attribute(_ name: String, _ line: Substring) -> String? {
        let list = line.drop { $0 != ":" }.dropFirst()
        for item in list.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == name { return pair[1].replacingOccurrences(of: "\"", with: "") }
        }
        return nil
    }

    /// What is wrong with `playlist` by the LL-HLS rules; empty when nothing.
    static func ruleBreaks(_ playlist: String) -> [String] {
        var breaks: [String] = []
        let target = lines(playlist, "#EXT-X-TARGETDURATION:").first.flatMap { Double($0.split(separator: ":")[1]) } ?? 0
        let partTarget = lines(playlist, "#EXT-X-PART-INF:").first.flatMap { attribute("PART-TARGET", $0) }.flatMap(Double.init) ?? 0
        if target <= 0 { breaks.append("no EXT-X-TARGETDURATION") }
        if partTarget <= 0 { breaks.append("no PART-TARGET") }
        for line in lines(playlist, "#EXTINF:") {
            let duration = Double(line.dropFirst(8).prefix { $0 != "," }) ?? .infinity
            if duration.rounded() > target { breaks.append("\(line) past the target duration \(target)") }
        }
        for line in lines(playlist, "#EXT-X-PART:") {
            let duration = attribute("DURATION", line).flatMap(Double.init) ?? .infinity
            if duration > partTarget { breaks.append("\(line) past PART-TARGET \(partTarget)") }
        }
        if lines(playlist, "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=").count != 1 { breaks.append("no preload hint") }
        let control = lines(playlist, "#EXT-X-SERVER-CONTROL:").first
        if control.flatMap({ attribute("CAN-BLOCK-RELOAD", $0) }) != "YES" { breaks.append("no CAN-BLOCK-RELOAD=YES") }
        let holdBack = control.flatMap { attribute("PART-HOLD-BACK", $0) }.flatMap(Double.init) ?? 0
        if holdBack < 3 * partTarget - 0.0005 { breaks.append("PART-HOLD-BACK \(holdBack) under 3 × PART-TARGET") }
        if control.flatMap({ attribute("CAN-SKIP-UNTIL", $0) }) == nil { breaks.append("no CAN-SKIP-UNTIL") }
        return breaks
    }

    /// The media sequence number and part index the preload hint names.
    static func hint(_ playlist: String) -> (sequence: Int, part: Int)? {
        guard let line = lines(playlist, "#EXT-X-PRELOAD-HINT:").first, let uri = attribute("URI", line) else { return nil }
        let fields = uri.dropFirst("part-".count).dropLast(".m4s".count).split(separator: "-")
        guard fields.count == 2, let sequence = Int(fields[0]), let part = Int(fields[1]) else { return nil }
        return (sequence, part)
    }

    /// Checks the playlist rules, blocking reload, 400, CORS and caching of the stream at `url`.
    static func checkServer(_ url: String) throws {
        // The first playlist is held until the first part exists.
        let first = try get(url)
        #expect(first.status == 200 && first.headers["content-type"] == "application/vnd.apple.mpegurl", "\(first.status) \(first.headers)")
        #expect(first.headers["access-control-allow-origin"] == "*" && first.headers["cache-control"] == "no-cache", "\(first.headers)")
        // A blocking reload of the hinted part: not in the playlist asked for, in the one answered.
        let (sequence, part) = try #require(hint(first.body))
        let name = "part-\(sequence)-\(part).m4s"
        #expect(!lines(first.body, "#EXT-X-PART:").contains { attribute("URI", $0) == name }, "\(first.body)")
        let held = try get(url + "?_HLS_msn=\(sequence)&_HLS_part=\(part)")
        #expect(held.status == 200 && lines(held.body, "#EXT-X-PART:").contains { attribute("URI", $0) == name }, "\(held.body)")
        #expect(ruleBreaks(held.body) == [], "\(held.body)")
        // The part itself, with CORS and a cache lifetime.
        let base = url.dropLast("index.m3u8".count)
        let bytes = try get(base + name)
        #expect(bytes.status == 200 && bytes.headers["access-control-allow-origin"] == "*", "\(bytes.headers)")
        #expect(bytes.headers["cache-control"]?.contains("max-age=") == true, "\(bytes.headers)")
        // Ten segments past the last: 400.
        let far = try get(url + "?_HLS_msn=\(sequence + 10)")
        #expect(far.status == 400, "\(far.status)")
    }

    /// FFmpeg reads the playlist and decodes 90 frames; what it wrote on standard error.
    static func ffmpegDecodes(_ url: String) throws -> (status: Int32, stderr: String) {
        let run = try Subprocess.run("timeout", ["40", "ffmpeg", "-nostdin", "-v", "error", "-i", url, "-frames:v", "90", "-f", "null", "-"])
        return (run.status, run.stderr)
    }

    /// GStreamer plays the playlist: `playbin3`, whose HLS demuxer is `hlsdemux2` (GStreamer
    /// 1.22's, fMP4 and LL-HLS aware), decodes it until its sinks have taken 60 pictures and 60
    /// audio frames (playbin ends when every sink has).
    static func gstreamerPlays(_ url: String) throws -> (status: Int32, stderr: String) {
        let run = try Subprocess.run("timeout", ["40", "gst-launch-1.0", "-q", "playbin3", "uri=\(url)",
                                                 "video-sink=fakesink num-buffers=60", "audio-sink=fakesink num-buffers=60"])
        return (run.status, run.stderr)
    }

    /// What headless Chromium reported of playing a stream (Scripts/chromium-hls.py).
    struct Playback: Decodable {
        /// Discontinuities the player saw in the playlist, and played across.
        struct Discontinuities: Decodable {
            var seen: Int
            var played: Int
        }

        var decodedFrames: Int
        var audioDecoded: Bool
        var discontinuities: Discontinuities
        var playedSeconds: Double
        var stalls: Int
        var stalledAt: [Double]
        var underflows: Int
        var error: String?
    }

    static func chromiumPlays(_ url: String, _ arguments: [String] = ["--native"]) throws -> Playback {
        let run = try Subprocess.run("timeout", ["90", "/usr/bin/python3", TestFixtures.packageRoot.appendingPathComponent("Scripts/chromium-hls.py").path,
                                                 url, "--seconds", "10"] + arguments)
        try #require(run.status == 0, "\(run.stderr)")
        return try JSONDecoder().decode(Playback.self, from: Data(run.stdout))
    }

    /// The checks of both tests: the server's rules, then FFmpeg, GStreamer and Chromium playing
    /// the stream at `url` (with audio decoded when `audio`).
    static func checkPeers(_ url: String, audio: Bool) throws {
        try checkServer(url)
        let ffmpeg = try ffmpegDecodes(url)
        #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty, "\(ffmpeg.stderr)")
        let gstreamer = try gstreamerPlays(url)
        #expect(gstreamer.status == 0, "\(gstreamer.stderr)")
        let playback = try chromiumPlays(url)
        #expect(playback.error == nil && playback.stalls == 0 && playback.decodedFrames >= 240, "\(playback)")
        #expect(playback.audioDecoded == audio, "\(playback)")
    }

    @Test func aRelayedCameraWithAACPlaysInFFmpegGStreamerAndChromium() throws {
        let camera = try GStreamerRTSPServer(["--audio", "aac"])
        defer { camera.kill() }
        let (relay, url) = try Self.start(["relay", camera.url])
        defer { relay.kill() }
        try Self.checkPeers(url, audio: true)
        #expect(relay.stop() == 0, "\(relay.stderr)")
    }

    @Test func aServedLoopPlaysInFFmpegGStreamerAndChromium() throws {
        let (serve, url) = try Self.start(["serve", TestFixtures.url("cars_320x240_30f.y4m").path, "--loop"])
        defer { serve.kill() }
        try Self.checkPeers(url, audio: false)
        #expect(serve.stop() == 0, "\(serve.stderr)")
    }
}
