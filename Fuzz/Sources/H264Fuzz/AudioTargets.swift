import AudioCodecs
import MediaCore
import RTP

extension FuzzTarget {
    /// The payload formats `audio-rtp` picks from its first byte.
    static let audioMedia: [AudioMediaDescription] = {
        let aac = AudioSpecificConfig(samplingFrequency: 48_000, channelConfiguration: 2).formatDescription
        var lbr = AudioMediaDescription(format: aac, payloadType: 97)
        lbr.payloadFormat = .mpeg4Generic(sizeLength: 6, indexLength: 2, indexDeltaLength: 2)
        var inBand = AudioMediaDescription(format: aac, payloadType: 97, latm: true)
        inBand.payloadFormat = .latm(muxConfigPresent: true, streamMuxConfig: nil)
        var noIndex = AudioMediaDescription(format: aac, payloadType: 97)
        noIndex.payloadFormat = .mpeg4Generic(sizeLength: 13, indexLength: 0, indexDeltaLength: 0)
        return [
            AudioMediaDescription(format: aac, payloadType: 97), lbr, noIndex,
            AudioMediaDescription(format: aac, payloadType: 97, latm: true), inBand,
            AudioMediaDescription(format: .g711(.pcmu), payloadType: 97),
            AudioMediaDescription(format: .opus(), payloadType: 97),
        ]
    }()

    /// `AudioRTPDepacketizer` on packets cut from the input (2-byte length prefixes), its first
    /// byte picking the payload format: never traps, frames are never empty nor above the bound;
    /// the frames packetized again (at an MTU from the second byte) and depacketized come back
    /// the same.
    static func audioRTP(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let media = audioMedia[Int(bytes[0]) % audioMedia.count]
        var depacketizer = AudioRTPDepacketizer(media: media)
        var frames: [[UInt8]] = []
        var offset = 2
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let end = min(bytes.count, offset + 2 + length)
            depacketizer.append(packet: Array(bytes[(offset + 2)..<end]))
            offset = end
            while let event = depacketizer.next() {
                if case .accessUnit(let unit) = event {
                    let data = unit.accessUnit.data
                    check(!data.isEmpty && data.count <= AudioRTPDepacketizer.maximumFrameSize, "frame of \(data.count) bytes")
                    frames.append(data)
                }
            }
        }
        var packetizer = AudioRTPPacketizer(media: media, ssrc: 1, maximumTransmissionUnit: 32 + Int(bytes[1]) * 8)
        var packets: [[UInt8]] = []
        var sent: [[UInt8]] = []
        for (index, frame) in frames.enumerated() {
            if (try? packetizer.packetize(frame, rtpTimestamp: UInt32(index) * 1024, { packets.append($0) })) != nil { sent.append(frame) }
        }
        var again = AudioRTPDepacketizer(media: media)
        var back: [[UInt8]] = []
        for packet in packets {
            again.append(packet: packet)
            while let event = again.next() {
                if case .accessUnit(let unit) = event { back.append(unit.accessUnit.data) }
            }
        }
        if case .latm(true, _) = media.payloadFormat { return }  // in band: our packets carry no config
        if media.payloadFormat == .g711 {
            check(back.flatMap { $0 } == sent.flatMap { $0 }, "G.711 samples do not survive packetizing")
        } else {
            check(back == sent, "\(sent.count) frames packetized, \(back.count) back (or not the same)")
        }
    }

    /// `AudioSpecificConfig`, `StreamMuxConfig` and `AudioMuxElement` on the input: never trap;
    /// a single-stream StreamMuxConfig written again reads back the same configuration.
    static func audioConfig(_ bytes: [UInt8]) {
        if let config = try? AudioSpecificConfig(bytes) { _ = config.formatDescription }
        if let mux = try? StreamMuxConfig(bytes) {
            // The writer keeps the AudioSpecificConfig up to the end of its GASpecificConfig
            // (what follows, an SBR sync extension or ascLen fill bits, is dropped, as FFmpeg
            // drops it): its bytes read back to the same bytes and the same core configuration.
            let written = StreamMuxConfig(audioSpecificConfig: mux.audioSpecificConfig)
            let reread: StreamMuxConfig?
            do throws(MediaError) {
                reread = try StreamMuxConfig(written.bytes)
            } catch {
                // An AudioSpecificConfig read whole by ascLen (audioMuxVersion 1) whose
                // GASpecificConfig version 0 cannot delimit (a program_config_element).
                check(error.code == .unsupported, "a written StreamMuxConfig does not read back: \(error)")
                return
            }
            check(reread?.bytes == written.bytes, "StreamMuxConfig does not survive its bytes")
            let (a, b) = (reread?.audioSpecificConfig, mux.audioSpecificConfig)
            check(a?.audioObjectType == b.audioObjectType && a?.samplingFrequency == b.samplingFrequency
                  && a?.channelConfiguration == b.channelConfiguration && a?.frameLengthFlag == b.frameLengthFlag,
                  "the written AudioSpecificConfig reads back another configuration")
        }
        let fixed = StreamMuxConfig(audioSpecificConfig: AudioSpecificConfig(samplingFrequency: 44_100, channelConfiguration: 1))
        for present in [false, true] {
            if let element = try? AudioMuxElement(bytes, muxConfigPresent: present, streamMuxConfig: fixed) {
                check(element.payloads.reduce(0) { $0 + $1.count } <= bytes.count, "payloads larger than the element")
            }
        }
    }

    /// `SessionDescription.audioMedia(parsing:)` on the input as text: never traps; a section
    /// read, written with `sdpLines` and read again, is the same (warnings aside).
    static func sdpAudio(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard var audio = SessionDescription.audioMedia(parsing: text) else { return }
        var again = SessionDescription.audioMedia(parsing: audio.sdpLines.map { $0 + "\r\n" }.joined())
        audio.warnings = []
        again?.warnings = []
        check(again == audio, "the audio section does not survive its own lines: \(audio)")
    }
}
