public enum H264EncoderModule {}
