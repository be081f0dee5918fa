/**
 * ID3 tags of mp3 (and ADTS aac) files: dropped where they would land mid-stream when
 * segments are joined.
 */

/** Drop an ID3v2 tag (and its footer) at the start of `audio`. */
export function stripId3v2(audio: Uint8Array): Uint8Array {
  let out = audio;
  // Several tags may follow one another; strip them all.
  while (out.byteLength >= 10 && out[0] === 0x49 && out[1] === 0x44 && out[2] === 0x33) {
    const flags = out[5] ?? 0;
    const size = (((out[6] ?? 0) & 0x7f) << 21) | (((out[7] ?? 0) & 0x7f) << 14) | (((out[8] ?? 0) & 0x7f) << 7) | ((out[9] ?? 0) & 0x7f);
    const total = 10 + size + (flags & 0x10 ? 10 : 0);
    out = out.subarray(Math.min(total, out.byteLength));
  }
  return out;
}

/** Drop a 128-byte ID3v1 tag (`TAG...`) at the end of `audio`. */
export function stripId3v1(audio: Uint8Array): Uint8Array {
  const at = audio.byteLength - 128;
  if (at >= 0 && audio[at] === 0x54 && audio[at + 1] === 0x41 && audio[at + 2] === 0x47) return audio.subarray(0, at);
  return audio;
}
