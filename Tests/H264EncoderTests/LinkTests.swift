import Testing
import H264Encoder

@Test func encoderModuleLinks() {
    #expect(String(describing: H264EncoderModule.self) == "H264EncoderModule")
}
