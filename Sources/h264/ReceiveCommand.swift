import ArgumentParser
import Foundation
import H264
import Synchronization

/// Set by SIGINT/SIGTERM while `h264 receive` runs.
private let receiveStopRequested = Atomic<Bool>(false)

/// `h264 receive STREAM.sdp -o OUT.h264`: receives plain RTP (RFC 6184) described by an SDP file
/// and writes the access units as an Annex-B byte stream.
struct ReceiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive H.264 over plain RTP (described by an SDP file) and write Annex-B.",
        discussion: """
        Listens on the SDP's UDP port (IPv4, unicast), puts packets back in order, drops access units hit by \
        loss (reported on standard error) and writes every access unit from the first IDR on, with SPS and PPS \
        (from the stream or the SDP's sprop-parameter-sets) before each IDR. Stops after --frames access units, \
        after --idle-timeout seconds without a packet, or on SIGINT/SIGTERM (exit status 0). \
        Example: h264 serve in.y4m --port 0 --rtp udp://127.0.0.1:5004 --sdp s.sdp, then h264 receive s.sdp -o out.h264.
        """)

    @Argument(help: "The SDP file describing the stream (as written by h264 serve --sdp or ffmpeg -sdp_file).")
    var sdp: String
    @Option(name: .shortAndLong, help: "The Annex-B output file ('-' for standard output).")
    var output: String
    @Option(help: "Stop after writing this many access units.")
    var frames: Int?
    @Option(help: "Stop when no packet has arrived for this many seconds.")
    var idleTimeout: Double = 10
    @Option(help: "How many later packets may wait for a missing one before it counts as lost.")
    var reorderWindow: Int = 16
    @Flag(help: "No log lines for losses and damaged packets, and no summary.")
    var quiet = false

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be at least 1") }
        guard idleTimeout > 0 else { throw ValidationError("--idle-timeout must be positive") }
        guard (0...1024).contains(reorderWindow) else { throw ValidationError("--reorder-window must be 0…1024") }
    }

    func run() throws {
        try runReportingErrors(command: "receive") { try receive() }
    }

    private func log(_ line: String) {
        if !quiet { FileHandle.standardError.write(Data("h264 receive: \(line)\n".utf8)) }
    }

    private func receive() throws {
        let text = String(decoding: try CLIIO.read(sdp), as: UTF8.self)
        let description = try SessionDescription(parsing: text)
        guard description.packetizationMode != 2 else {
            throw H264Error(.unsupported, field: "packetization-mode", "packetization-mode 2 (interleaved) is not supported")
        }
        let format = try? description.formatDescription()
        var parameterSets = ParameterSetCache()
        if let format { parameterSets = try ParameterSetCache(configurationRecord: format.configurationRecord) }
        var depacketizer = RTPDepacketizer(configuration: .init(reorderWindow: reorderWindow, payloadType: description.payloadType),
                                           parameterSets: parameterSets)

        let socketDescriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw CLIError("cannot open a UDP socket (errno \(errno))") }
        defer { close(socketDescriptor) }
        var bufferSize: Int32 = 4 << 20
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(description.port).bigEndian)
        address.sin_addr.s_addr = INADDR_ANY
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw CLIError("cannot listen on UDP port \(description.port) (errno \(errno))") }

        let out: FileHandle
        if output == "-" {
            out = FileHandle.standardOutput
        } else {
            guard FileManager.default.createFile(atPath: output, contents: nil), let handle = FileHandle(forWritingAtPath: output) else {
                throw CLIError("cannot write \(output)")
            }
            out = handle
        }
        defer { if output != "-" { try? out.close() } }

        receiveStopRequested.store(false, ordering: .relaxed)
        signal(SIGINT) { _ in receiveStopRequested.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in receiveStopRequested.store(true, ordering: .relaxed) }
        log("listening on udp port \(description.port)")

        var written = 0, skipped = 0, started = false, done = false
        func handleEvents() throws {
            while let event = depacketizer.next() {
                switch event {
                case .accessUnit(let received):
                    guard !done else { continue }
                    let unit = received.accessUnit
                    if !started {
                        guard unit.isIDR else { skipped += 1; continue }
                        started = true
                    }
                    let record = unit.formatDescription?.configurationRecord ?? format?.configurationRecord
                    out.write(Data(try AnnexB.fromAVCC(unit.data, lengthSize: 4, parameterSets: record)))
                    written += 1
                    if let frames, written >= frames { done = true }
                case .loss(let loss):
                    log("lost \(loss.packetCount) packet(s) from sequence number \(loss.firstSequenceNumber)")
                case .keyframeRequest:
                    break   // Plain RTP has no back channel here (no RTCP).
                case .diagnostic(let error):
                    log(String(describing: error))
                }
            }
        }

        var buffer = [UInt8](repeating: 0, count: 65_536)
        var lastPacket = ContinuousClock.now
        while !done && !receiveStopRequested.load(ordering: .relaxed) {
            var descriptor = pollfd(fd: socketDescriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 200) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }
                lastPacket = .now
                buffer.withUnsafeBytes { depacketizer.append(packet: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                try handleEvents()
            } else if ContinuousClock.now - lastPacket > .seconds(idleTimeout) {
                log("no packet for \(idleTimeout) s")
                break
            }
        }
        if !done {
            depacketizer.finish()
            try handleEvents()
        }
        log("wrote \(written) access units (\(skipped) before the first IDR skipped); \(depacketizer.packetCount) packets, "
            + "\(depacketizer.lostPacketCount) lost, \(depacketizer.droppedAccessUnitCount) access units dropped")
    }
}
