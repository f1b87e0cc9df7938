/// `PicOrderCntMsb` from the picture's `lsb` and the previous reference picture's LSB and MSB
/// (H.264 equation 8-3, H.265 equation 8-1: the same rule): the MSB steps by `maxLsb` when the
/// LSB wrapped around by half the range or more.
package func picOrderCntMsb(lsb: Int, maxLsb: Int, prevLsb: Int, prevMsb: Int) -> Int {
    if lsb < prevLsb && prevLsb - lsb >= maxLsb / 2 { return prevMsb &+ maxLsb }
    if lsb > prevLsb && lsb - prevLsb > maxLsb / 2 { return prevMsb &- maxLsb }
    return prevMsb
}
