import H264
@testable import H264Streaming
import MediaCore
import NIOCore
import NIOEmbedded
import Testing

/// The broadcaster's held audio: an audio frame goes to a viewer of both tracks with the next
/// picture (one write, one flush), to a viewer of the audio track alone at once; more than
/// ``Broadcaster/heldAudioLimit`` held frames go without waiting; a flushing close writes what
/// is held, once. Each viewer records the batches the broadcaster hands it, as frame tags.
@Suite(.timeLimit(.minutes(1))) struct BroadcasterHeldAudioTests {
    /// A viewer that records each batch it is handed: `V` and the tag of a picture, `A` and the
    /// tag of an audio frame.
    final class RecordingViewer: FanOutViewer {
        var batches: [[String]] = []

        func writeFrames(_ frames: [FanOutFrame]) -> EventLoopFuture<Void>? {
            batches.append(frames.map { frame in
                frame.frame.format == nil ? "A\(frame.frame.avcc[0])" : "V\(frame.frame.avcc[4])"
            })
            return nil
        }
    }

    static let aac = AudioFormatDescription(codec: .aac, sampleRate: 48_000, channelCount: 2, magicCookie: [0x11, 0x90],
                                            samplesPerFrame: 1024)

    static func picture(_ tag: UInt8, keyframe: Bool = false) -> LiveFrame {
        LiveFrame(avcc: [0, 0, 0, 1, tag], formatDescription: StreamingFixtures.format, isKeyframe: keyframe,
                  presentationTime: .milliseconds(Int64(tag) * 33))
    }

    static func audio(_ tag: UInt8) -> LiveFrame {
        LiveFrame(audio: [tag, 0x21, 0x10], format: aac, presentationTime: .milliseconds(Int64(tag) * 21))
    }

    /// A broadcaster with one viewer of both tracks and one of the audio track alone.
    static func viewers() throws -> (Broadcaster, both: RecordingViewer, audioOnly: RecordingViewer, channels: [EmbeddedChannel]) {
        let broadcaster = Broadcaster(queueLimit: 100)
        let both = RecordingViewer(), audioOnly = RecordingViewer()
        var channels: [EmbeddedChannel] = []
        for (viewer, tracks) in [(both, (video: true, audio: true)), (audioOnly, (video: false, audio: true))] {
            let channel = EmbeddedChannel()
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 5000)).wait()
            _ = broadcaster.add(channel, kind: .other, viewer: viewer, tracks: tracks)
            channels.append(channel)
        }
        return (broadcaster, both, audioOnly, channels)
    }

    @Test func audioGoesWithTheNextPictureToAViewerOfBothTracksAndAtOnceToAnAudioViewer() throws {
        let (broadcaster, both, audioOnly, _) = try Self.viewers()
        broadcaster.broadcast(Self.picture(1, keyframe: true))
        broadcaster.broadcast(Self.audio(2))
        #expect(both.batches == [["V1"]])
        #expect(audioOnly.batches == [["A2"]])
        broadcaster.broadcast(Self.audio(3))
        broadcaster.broadcast(Self.picture(4))
        #expect(both.batches == [["V1"], ["A2", "A3", "V4"]])
        #expect(audioOnly.batches == [["A2"], ["A3"]])
    }

    @Test func moreThanTheLimitHeldGoWithoutAPicture() throws {
        let (broadcaster, both, _, _) = try Self.viewers()
        broadcaster.broadcast(Self.picture(1, keyframe: true))
        for tag in UInt8(2)...UInt8(2 + Broadcaster.heldAudioLimit) { broadcaster.broadcast(Self.audio(tag)) }
        let held = (2...(2 + Broadcaster.heldAudioLimit)).map { "A\($0)" }
        #expect(both.batches == [["V1"], held])
    }

    /// What a flushing ``Broadcaster/closeAll(flushing:flushTimeout:)`` does first (its wait for
    /// the channels to close needs a real event loop).
    @Test func writingTheHeldAudioWritesItOnce() throws {
        let (broadcaster, both, _, _) = try Self.viewers()
        broadcaster.broadcast(Self.picture(1, keyframe: true))
        broadcaster.broadcast(Self.audio(2))
        #expect(both.batches == [["V1"]])
        broadcaster.writeHeldAudio()
        #expect(both.batches == [["V1"], ["A2"]])
        broadcaster.broadcast(Self.picture(3))
        #expect(both.batches == [["V1"], ["A2"], ["V3"]])
    }

    @Test func audioBeforeTheFirstKeyframeIsNotHeldForAViewerWaitingForIt() throws {
        let (broadcaster, both, audioOnly, _) = try Self.viewers()
        broadcaster.broadcast(Self.audio(1))
        broadcaster.broadcast(Self.picture(2, keyframe: true))
        #expect(both.batches == [["V2"]])
        #expect(audioOnly.batches == [["A1"]])
    }
}
