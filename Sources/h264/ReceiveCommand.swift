import ArgumentParser
import Foundation
import H264
import H264Streaming

/// `h264 receive STREAM.sdp -o OUT.h264` or `h264 receive rtsp://HOST:PORT/PATH -o OUT.h264`:
/// receives H.264 over plain RTP (RFC 6184) described by an SDP file, or from an RTSP server
/// (RTP/AVP/TCP interleaved, or RTP/AVP over UDP), and writes the access units as an Annex-B byte stream.
/// With `--listen rtsp://HOST:PORT/PATH` it is the RTSP server a publisher pushes to instead
/// (RFC 2326 record mode; `RTSPRecordServer`).
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive H.264 over RTSP (rtsp:// URL) or plain RTP (SDP file) and write Annex-B.",
        discussion: """
        With an SDP file: listens on the SDP's UDP port (IPv4, unicast). With an rtsp:// URL: sends OPTIONS, \
        DESCRIBE, SETUP (RTP/AVP/TCP, interleaved=0-1; or RTP/AVP over UDP with --transport udp) and PLAY, reads \
        the RTP packets (interleaved in the RTSP connection, or from the UDP port pair it opened) and sends TEARDOWN at the end (a status other than 200 is an error naming it). \
        With --listen and an rtsp:// URL (port 0: a free one; the URL is printed): the RTSP server one publisher \
        pushes to (RFC 2326 record mode, as ffmpeg -f rtsp speaks it: ANNOUNCE with the SDP, SETUP with \
        mode=record over TCP interleaved or UDP, RECORD); a second publisher gets 453; waiting for a publisher has \
        no time limit (--idle-timeout counts from its RECORD); the recording ends at the publisher's TEARDOWN or \
        when it disconnects. In every mode: \
        puts packets back in order, drops access units hit by loss (reported on standard error) and writes every \
        access unit from the first IDR on, with SPS and PPS (from the stream or the SDP's sprop-parameter-sets) \
        before each IDR. Stops after --frames access units, after --idle-timeout seconds without a packet, or on \
        SIGINT/SIGTERM (exit status 0). \
        Decoded output: with -o FILE.y4m (or --decode, e.g. -o - --decode | ffplay -) the access units are decoded \
        as they arrive (libavcodec, as h264 decode) and written as y4m, --frames counting decoded frames; \
        --decoded FILE.y4m writes that beside the Annex-B of -o. The y4m frame rate is the SPS's VUI timing, else \
        the spacing of the RTP timestamps, else 30; a size change is an error (y4m has one size); stopping flushes \
        the decoder. \
        Examples: h264 serve in.y4m --port 0 --rtsp 127.0.0.1:8554, then h264 receive rtsp://127.0.0.1:8554/live \
        -o out.h264; h264 serve in.y4m --port 0 --rtp udp://127.0.0.1:5004 --sdp s.sdp, then h264 receive s.sdp -o out.h264; \
        h264 receive --listen rtsp://127.0.0.1:8554/live -o out.h264, then ffmpeg -re -i in.264 -c copy -f rtsp \
        rtsp://127.0.0.1:8554/live.
        """)

    @Argument(help: "An rtsp:// URL, or the SDP file describing a plain RTP stream (as written by h264 serve --sdp or ffmpeg -sdp_file).")
    var sdp: String
    @Option(name: .shortAndLong, help: "The Annex-B output file ('-' for standard output); decoded y4m when it ends in .y4m or with --decode.")
    var output: String
    @Option(help: "Stop after writing this many access units (decoded frames when decoding).")
    var frames: Int?
    @Option(help: "Stop when no packet has arrived for this many seconds.")
    var idleTimeout: Double = 10
    @Option(help: "How many later packets may wait for a missing one before it counts as lost.")
    var reorderWindow: Int = 16
    @Option(help: "With an rtsp:// URL: the RTP transport to ask for, tcp (interleaved in the RTSP connection) or udp.")
    var transport: Transport = .tcp

    /// The lower transport `--transport` asks an RTSP server for.
    enum Transport: String, ExpressibleByArgument, CaseIterable { case tcp, udp }
    @Flag(help: "Listen on the rtsp:// URL (port 0: a free one) for one publisher that sends RTSP ANNOUNCE and RECORD (ffmpeg -f rtsp, GStreamer rtspclientsink), instead of connecting to a server.")
    var listen = false
    @Flag(help: "No log lines for losses and damaged packets, and no summary.")
    var quiet = false
    @Flag(help: "Decode and write y4m to -o (implied when -o ends in .y4m).")
    var decode = false
    @Option(help: "Also decode into this y4m file ('-' for standard output); -o stays Annex-B.")
    var decoded: String?

    /// True when -o gets the decoded y4m instead of Annex-B.
    private var decodesOutput: Bool { decode || output.lowercased().hasSuffix(".y4m") }

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        guard (0...1024).contains(reorderWindow) else { throw ValidationError("--reorder-window must be 0…1024") }
        if decoded != nil && decodesOutput {
            throw ValidationError("--decoded writes y4m beside the Annex-B of -o; -o \(output)\(decode ? " --decode" : "") is y4m already")
        }
        if let decoded, decoded == output { throw ValidationError("--decoded and -o name the same file") }
    }

    /// The output: Annex-B to -o, decoded y4m to -o (`decodesOutput`) or --decoded, or both.
    func receivedOutput(format: FormatDescription?) throws -> ReceivedAnnexBOutput {
        let y4m = decodesOutput ? output : decoded
        return try ReceivedAnnexBOutput(path: decodesOutput ? nil : output, format: format, frames: frames,
                                        decoded: try y4m.map { try ReceivedY4MOutput(path: $0, frames: frames) }, log: log)
    }

    func run() async throws {
        do {
            if listen { return try await receiveListening() }
            if sdp.lowercased().hasPrefix("rtsp://") { return try await receiveRTSP() }
            try await receiveRTP()
        } catch let error as ExitCode {
            throw error
        } catch {
            CLIIO.printError(command: "receive", String(describing: error))
            throw ExitCode.failure
        }
    }

    func log(_ line: String) {
        if !quiet { FileHandle.standardError.write(Data("h264 receive: \(line)\n".utf8)) }
    }

    /// The depacketizer for the stream `description` describes, and the format of its
    /// sprop-parameter-sets (nil without them).
    func depacketizer(for description: SessionDescription) throws -> (RTPDepacketizer, FormatDescription?) {
        (try description.depacketizer(reorderWindow: reorderWindow), try? description.formatDescription())
    }
}
