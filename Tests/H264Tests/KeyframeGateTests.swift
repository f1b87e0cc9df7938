import MediaCore
import Testing

/// The one "wait for a keyframe" rule: closed at the start, opened by a keyframe, closed again
/// by a drop, every refused frame counted.
@Suite struct KeyframeGateTests {
    /// Frames before the first keyframe are refused and counted; from it on, every frame passes.
    @Test func theFirstKeyframeOpensTheGate() {
        var gate = KeyframeGate()
        let passed = [false, false, true, false, true, false].map { gate.admit(isKeyframe: $0) }
        #expect(passed == [false, false, true, true, true, true])
        #expect(gate.skippedFrames == 2 && gate.closings == 0 && gate.isOpen)
    }

    /// A drop closes the gate until the next keyframe, once per drop while open.
    @Test func aDropSkipsToTheNextKeyframe() {
        var gate = KeyframeGate(open: true)
        let before = gate.admit(isKeyframe: false)
        gate.close()
        gate.close()
        let closed = [gate.admit(isKeyframe: false), gate.admit(isKeyframe: false)]
        gate.countSkipped(3)
        let reopened = [gate.admit(isKeyframe: true), gate.admit(isKeyframe: false)]
        #expect(before && closed == [false, false] && reopened == [true, true])
        #expect(gate.skippedFrames == 5 && gate.closings == 1)
    }
}
