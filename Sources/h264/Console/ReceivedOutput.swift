import Foundation
import H264
import H264Decoder
import MediaContainers
import H264Streaming
import HEVC
import RTP

/// The output of `h264 receive`: the frames of either codec as Annex-B (MediaContainers'
/// `ReceivedAnnexBWriter`: from the first keyframe on, the format's parameter sets before each
/// keyframe that lacks them) up to `frames`, and with `decodedPath` decoded as y4m
/// (H264Decoder's `RTPY4MWriter`; `frames` then counts its frames); without a path, only
/// decoded. With `--hls`, every frame, video and audio, is appended to the served stream too.
final class ReceivedOutput {
    private let out: FileHandle?
    private var annexB: ReceivedAnnexBWriter
    /// The codec of the frames written (the summary names its keyframes).
    private var codec: VideoCodec?
    private let frames: Int?
    private let log: (String) -> Void
    private let decoded: (writer: RTPY4MWriter, path: String, file: FileHandle)?
    /// With `-o FILE.flv`: both tracks as FLV (else the output is the Annex-B video).
    private var flv: ReceivedFLVOutput?
    /// With `-o FILE.mp4`: both tracks recorded as MP4 (the recorder opens the file itself).
    private var mp4: MP4Recorder?
    /// With `--hls`: the stream every frame goes to (nil once the packager refused one).
    private var hls: HLSLiveStream?
    /// True once an audio frame was left out of an elementary video output (said once).
    private var saidAudioLeftOut = false
    private var wroteAll = false
    /// True once `frames` access units are written (or, when decoding, decoded frames).
    var done: Bool { decoded?.writer.done ?? wroteAll }

    init(path: String?, format: VideoFormatDescription?, frames: Int?, decodedPath: String?, segmentDuration: Duration? = nil,
         vodPlaylist: String? = nil, hls: HLSLiveStream? = nil, log: @escaping (String) -> Void) throws {
        self.hls = hls
        mp4 = path.flatMap { path in
            guard ConvertCommand.isMP4Name(path) else { return nil }
            var configuration = MP4Recorder.Configuration(path: path, segmentDuration: segmentDuration)
            configuration.vodPlaylist = vodPlaylist
            return MP4Recorder(configuration, audioConverter: MP4Recording.audioConverter) { event in
                if let line = MP4Recording.describe(event) { log(line) }
            }
        }
        out = mp4 == nil ? try path.map(CLIIO.openOutput) : nil
        flv = path?.lowercased().hasSuffix(".flv") == true ? ReceivedFLVOutput() : nil
        annexB = ReceivedAnnexBWriter(format: format)
        codec = format?.codec
        self.frames = decodedPath == nil ? frames : nil
        self.log = log
        decoded = try decodedPath.map { path in
            let file = try CLIIO.openOutput(path)
            let descriptor = file.fileDescriptor
            return (try RTPY4MWriter(frames: frames) { try writeAll(descriptor, $0, name: path) }, path, file)
        }
    }

    deinit {
        if let out, out !== FileHandle.standardOutput { try? out.close() }
        if let file = decoded?.file, file !== FileHandle.standardOutput { try? file.close() }
    }

    /// Writes or logs one event of a depacketizer of either codec.
    func write(_ event: VideoRTPDepacketizer.Event) throws {
        switch event {
        case .frame(let received):
            try write(received.frame, timestamp: received.timestamp)
        case .formatChanged:
            break   // Each frame carries its format.
        case .loss(let loss):
            log("lost \(loss.packetCount) packet(s) from sequence number \(loss.firstSequenceNumber)")
        case .keyframeRequest:
            break   // No RTCP feedback is sent.
        case .diagnostic(let error):
            log(String(describing: error))
        }
    }

    /// Writes one frame of either codec as Annex-B, from the first keyframe on, and decodes it
    /// (stamped with its 90 kHz `timestamp`) when asked to.
    func write(_ frame: CompressedFrame, timestamp: UInt32) throws {
        if let hls, !done { serve(frame, hls) }
        if mp4 != nil {
            guard !done else { return }
            do { try mp4?.write(frame) } catch { throw CLIError(file: mp4?.path ?? "", error) }
            if let frames, let mp4, mp4.videoFrames >= frames { wroteAll = true }
            guard frame.videoFormat != nil else { return }
        } else if flv != nil {
            guard !done else { return }
            let bytes = try flv?.bytes(of: frame) ?? []
            if !bytes.isEmpty { out?.write(Data(bytes)) }
            if let frames, let flv, flv.videoFrames >= frames { wroteAll = true }
            guard frame.videoFormat != nil else { return }
        } else if let audio = frame.audioFormat {
            // Annex-B and y4m are elementary video: the audio track is left out (said once).
            if !saidAudioLeftOut && out != nil {
                saidAudioLeftOut = true
                log("the \(audio.codec.rawValue) audio track is left out of the elementary video output (-o FILE.flv keeps it)")
            }
            return
        }
        codec = frame.videoFormat?.codec ?? codec
        guard !done, annexB.take(frame) else { return }
        if flv == nil && mp4 == nil { out?.write(Data(try annexB.annexB(frame))) }
        try CLIError.y4m(hint: "write Annex-B (-o FILE.h264) to keep such a stream") {
            try decoded?.writer.decode(RTPReceivedFrame(accessUnit: frame, timestamp: timestamp, endedByMarker: true))
        }
        if let frames, annexB.written >= frames { wroteAll = true }
    }

    /// Appends `frame` to the `--hls` stream, stamped with the time now; a frame the packager
    /// refuses ends the HLS stream (said), not the output.
    private func serve(_ frame: CompressedFrame, _ stream: HLSLiveStream) {
        let now = Date().timeIntervalSince1970
        do { try stream.append(frame, wallClock: .nanoseconds(Int64((now * 1e9).rounded()))) } catch {
            log("HLS: \(error); the HLS stream ends")
            try? stream.finish()
            hls = nil
        }
    }

    /// Writes or logs one event of an RTMP stream: video frames of either codec, stamped on a
    /// 90 kHz clock (audio frames are not written: the output is Annex-B video).
    func write(flv event: FLVReader.Event) throws {
        switch event {
        case .frame(let frame):
            try write(frame.frame, timestamp: UInt32(truncatingIfNeeded: frame.presentationTime * 90))
        case .skippedTag(let error), .warning(let error): log(String(describing: error))
        case .formatChanged, .endOfSequence: break
        }
    }

    /// Logs the summary with the receiver's RTP counts (its last events already written; none
    /// for RTMP); when decoding, flushes the decoder so the last frames are written.
    func finish(_ s: RTPReceptionStatistics?) throws {
        let key = codec == .hevc ? "IRAP picture" : "IDR"
        if let flv { log("wrote \(flv.videoFrames) video and \(flv.audioFrames) audio frames as FLV") }
        if var recording = mp4 {
            do { try recording.finish() } catch { throw CLIError(file: recording.path, error) }
            mp4 = recording
            if recording.files.isEmpty { log("no MP4 written: no keyframe came") } else {
                log(MP4Recording.summary(files: recording.files, videoFrames: recording.videoFrames, audioFrames: recording.audioFrames))
            }
        }
        log("\(out == nil && mp4 == nil ? "received" : "wrote") \(annexB.written) access units (\(annexB.skipped) before the first \(key) skipped)"
            + (s.map { "; \($0.packets) packets, \($0.lostPackets) lost, \($0.droppedAccessUnits) access units dropped" } ?? ""))
        guard let decoded else { return }
        let summary = try CLIError.y4m(hint: "write Annex-B (-o FILE.h264) to keep such a stream") {
            try decoded.writer.finish()
        }
        var line = "decoded \(summary.frames) frames → \(decoded.path)"
        if summary.damaged > 0 { line += ", \(summary.damaged) damaged" }
        if summary.skippedAccessUnits > 0 { line += ", \(summary.skippedAccessUnits) access units before the first IDR skipped" }
        log(line)
    }
}

extension ReceiveOptions {
    /// Writes `events` (and appends their frames to `hls`) until the output is done (then `whenDone`), the events end, or a stop
    /// signal (which runs `stop`; nil: the caller catches the signals itself, over more than
    /// this call);
    /// logs `opening` first and the `ending` and summary after.
    func receive<Events: AsyncSequence>(_ events: Events, format: VideoFormatDescription?, hls: HLSLiveStream?, opening: String? = nil,
                                 stop: (@Sendable () async -> Void)?, whenDone: () -> Void = {},
                                 ending: () -> String?, statistics: (() -> RTPReceptionStatistics)? = nil) async throws
        where Events.Element: ReceivedItem {
        let sink = try receivedOutput(format: format, hls: hls)
        if let opening { log(opening) }
        func write() async throws {
            for try await event in events {
                try event.write(to: sink)
                if sink.done {
                    whenDone()
                    break
                }
            }
        }
        if let stop { try await StopSignal.catching(onStop: stop, write) } else { try await write() }
        if let line = ending() { log(line) }
        try sink.finish(statistics?())
    }
}

/// What `h264 receive` writes: the events of a depacketizer (RTP), a camera, a publisher or an
/// RTMP stream.
protocol ReceivedItem { func write(to output: ReceivedOutput) throws }
extension VideoRTPDepacketizer.Event: ReceivedItem { func write(to output: ReceivedOutput) throws { try output.write(self) } }
extension FLVReader.Event: ReceivedItem { func write(to output: ReceivedOutput) throws { try output.write(flv: self) } }
extension RTSPClient.Event: ReceivedItem {
    func write(to output: ReceivedOutput) throws {
        switch self {
        case .frame(let received): try output.write(.frame(received))
        case .loss(let loss): try output.write(.loss(loss))
        case .diagnostic(let error): try output.write(.diagnostic(error))
        default: break  // Each frame carries its format; reconnections are logged by `RTSPClientOptions.events`.
        }
    }
}
