import H264

/// One access unit waiting for the decoding queue.
struct Job: Sendable {
    /// The access unit's bytes, unless it is a `view`.
    let data: [UInt8]
    /// The access unit as pieces of received packets, copied once into libavcodec's input.
    var view: AccessUnitView? = nil
    let lengthSize: Int
    /// The format the access unit is decoded with, when its caller gave one.
    let format: StreamFormat?
    /// The codec the access unit's type says (H.264 for an `AccessUnit`, H.265 for an
    /// `HEVCAccessUnit`); nil for bytes whose codec is the session's.
    let codec: VideoCodec?
    let carriesParameterSets: Bool
    let isKeyframe: Bool
    let presentationTimeStamp: Duration?
    let duration: Duration
}

/// An access unit and the decoder it goes to.
package struct QueuedJob: Sendable {
    let job: Job
    let decoder: DecoderBox
}

/// The libavcodec decoder and what the queue remembers between access units.
///
/// `@unchecked Sendable`: its mutable state is used only on the session's serial decoding queue
/// (every method is called from a job on that queue).
final class DecoderBox: @unchecked Sendable {
    private var decoder: LibAVCodecDecoder?
    /// The format whose parameter sets libavcodec last received out of band.
    private var sentFormat: StreamFormat?
    private var mark = FormatChangeMark()
    private var damaged = false

    init(decoder: LibAVCodecDecoder) { self.decoder = decoder }

    func decode(_ job: Job, initialFormat: StreamFormat?, deliver: (DecodedFrame) -> Void) throws(MediaError) {
        guard let decoder else { return }
        var prefix: [[UInt8]] = []
        if let format = job.format ?? initialFormat, format != sentFormat {
            if sentFormat != nil { mark.set(presentationTimeStamp: job.presentationTimeStamp.map(Self.microseconds)) }
            sentFormat = format
            if !job.carriesParameterSets {
                prefix = format.parameterSets
            }
        }
        var body = job.data
        if job.lengthSize != 4 {
            body = try AnnexB.fromAVCC(job.data, lengthSize: job.lengthSize, startCodes: .fourByte)
        }
        let prefixBytes = prefix.reduce(0) { $0 + 4 + $1.count }
        let result = try decoder.send(size: prefixBytes + (job.view?.encodedByteCount ?? body.count), presentationTimeStamp: job.presentationTimeStamp.map(Self.microseconds),
                                      duration: Self.microseconds(job.duration), isKeyframe: job.isKeyframe) { (buffer) throws(MediaError) in
            var position = 0
            for nal in prefix {
                buffer.storeBytes(of: UInt32(1).bigEndian, toByteOffset: position, as: UInt32.self)
                buffer.baseAddress!.advanced(by: position + 4).copyMemory(from: nal, byteCount: nal.count)
                position += 4 + nal.count
            }
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[position...])
            if let view = job.view {
                view.copyBytes(into: rest, format: .annexB)
                return
            }
            body.withUnsafeBytes { rest.copyMemory(from: $0) }
            if job.lengthSize == 4 { try AnnexB.convertAVCCInPlace(rest) }
        }
        if case .damaged = result { damaged = true }
        try decoder.receiveFrames(mark: &mark, deliver)
    }

    func drain(deliver: (DecodedFrame) -> Void) throws(MediaError) {
        try decoder?.drain(mark: &mark, deliver)
    }

    /// True once after an access unit libavcodec rejected.
    func takeDamaged() -> Bool {
        defer { damaged = false }
        return damaged
    }

    func close() { decoder = nil }

    static func microseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? Int64.min + 1 : Int64.max }
        return product + attoseconds / 1_000_000_000_000
    }
}
