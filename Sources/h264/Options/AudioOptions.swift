import ArgumentParser

/// `--no-audio` and `--silent-audio`: what `receive`, `relay` and `serve` do with the source's
/// sound track (carried by default).
struct AudioOptions: ParsableArguments {
    @Flag(help: "Leave the source's audio out (by default AAC, G.711 and Opus are carried; RTMP outputs get G.711 and Opus converted to AAC-LC).")
    var noAudio = false
    @Flag(help: "With --rtmp: publish a silent AAC-LC track instead of the source's audio, for services that require one (YouTube: \"AAC-LC (audio required)\") from a camera without a microphone.")
    var silentAudio = false

    func validate() throws {
        if noAudio && silentAudio { throw ValidationError("give --no-audio or --silent-audio, not both") }
    }

    /// What an RTMP output does with the audio.
    var rtmpMode: RTMPAudioMode { noAudio ? .none : silentAudio ? .silent : .carry }
}
