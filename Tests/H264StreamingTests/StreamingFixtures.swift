import H264
import H264Streaming
import H264TestSupport

/// A real stream for the streaming tests: the access units of the conformance stream
/// `MIDR_MW_D.264` (176x144, an IDR every few pictures) as live frames.
enum StreamingFixtures {
    /// The stream's access units, in decode order, with its format.
    static let stream: (format: FormatDescription, frames: [LiveFrame]) = {
        var receiver = AccessUnitReceiver()
        // The fixture is part of the checkout: a missing one is a broken checkout.
        receiver.append(try! TestFixtures.data("conformance/MIDR_MW_D.264"))
        var units: [AccessUnit] = []
        while let event = receiver.next() { if case .accessUnit(let unit) = event { units.append(unit) } }
        for case .accessUnit(let unit) in receiver.finish() { units.append(unit) }
        let format = units.compactMap(\.formatDescription).first!
        return (format, units.map { LiveFrame(avcc: $0.data, formatDescription: $0.formatDescription ?? format, isKeyframe: $0.isIDR) })
    }()

    /// The stream's format (its SPS and PPS).
    static var format: FormatDescription { stream.format }
}
