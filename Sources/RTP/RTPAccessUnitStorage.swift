public import H264
/// How ``RTPDepacketizer`` (one AVCC copy, `AccessUnitAssembler`) and
/// ``RTPZeroCopyDepacketizer`` (references to the packets, ``AccessUnitViewAssembler``) keep the
/// bytes of the access unit being received; everything else about receiving is the one
/// ``RTPDepacketizerCore``. A storage of another codec (the HEVC module's) brings its own
/// payload format, parameter sets and access units.
package protocol RTPAccessUnitStorage: Sendable {
    /// What a complete access unit is handed out as.
    associatedtype Unit: Sendable
    /// The codec's parameter set cache.
    associatedtype ParameterSets: Sendable
    /// The codec's RTP payload format.
    associatedtype Format: RTPPayloadFormat

    /// Creates an empty storage knowing `parameterSets` already.
    init(parameterSets: ParameterSets)
    /// The parameter sets seen so far.
    var parameterSets: ParameterSets { get }
    /// The bytes given next come from `bytes`, held by `owner` (which the storage may keep
    /// instead of copying them); empty when nothing holds them beyond the call.
    mutating func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer)
    /// Adds a whole NAL unit; returns the access unit it completed, if it begins a new one.
    mutating func append(nalUnit: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Unit?
    /// Begins a NAL unit whose bytes arrive in pieces; see
    /// `AccessUnitAssembler.beginNALUnit(header:leading:streamOffset:)`. Called only for a
    /// one-byte NAL unit header; a storage may always return false (the core then gathers the
    /// NAL unit and appends it whole).
    mutating func beginNALUnit(header: UInt8, leading: UnsafeBufferPointer<UInt8>, streamOffset: Int) -> Bool
    /// Adds the next piece of the NAL unit begun.
    mutating func appendToNALUnit(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Ends the NAL unit begun.
    mutating func endNALUnit()
    /// Ends the access unit being received: returns it, if it holds any NAL unit.
    mutating func finishAccessUnit() -> Unit?
    /// Drops the access unit being received, with the NAL unit begun if one is open.
    mutating func dropAccessUnit()
}

extension AccessUnitAssembler: RTPAccessUnitStorage {
    package typealias Format = RFC6184PayloadFormat

    /// Copies every byte: nothing to keep.
    package func usePacket(_ owner: borrowing [UInt8], bytes: UnsafeRawBufferPointer) {}

    package mutating func finishAccessUnit() -> AccessUnit? { finish() }
}
