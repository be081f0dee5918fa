import { describe, expect, it } from 'vitest';
import { alaw, mulaw } from 'alawmulaw';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../src/telephony/index.js';

/** Every 16-bit sample, -32768 to 32767. */
const EVERY_SAMPLE = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
/** Every byte. */
const EVERY_CODE = Uint8Array.from({ length: 256 }, (_, i) => i);

describe('G.711 against the alawmulaw package', () => {
  it('mu-law: encodes all 65,536 samples and decodes all 256 codes byte for byte', () => {
    expect(encodeMulaw(EVERY_SAMPLE)).toEqual(mulaw.encode(EVERY_SAMPLE));
    expect(decodeMulaw(EVERY_CODE)).toEqual(mulaw.decode(EVERY_CODE));
  });

  it('A-law: encodes all 65,536 samples and decodes all 256 codes byte for byte', () => {
    expect(encodeAlaw(EVERY_SAMPLE)).toEqual(alaw.encode(EVERY_SAMPLE));
    expect(decodeAlaw(EVERY_CODE)).toEqual(alaw.decode(EVERY_CODE));
  });

  it('the comparison can fail: a codec one step off is caught', () => {
    const off = encodeMulaw(EVERY_SAMPLE).map((b, i) => (i === 40000 ? b ^ 1 : b));
    expect(off).not.toEqual(mulaw.encode(EVERY_SAMPLE));
    expect(encodeAlaw(EVERY_SAMPLE)).not.toEqual(mulaw.encode(EVERY_SAMPLE));
  });

  it('known points: silence and full scale; decoding then encoding gives the code back', () => {
    expect(encodeMulaw(Int16Array.of(0))[0]).toBe(0xff);
    expect(encodeAlaw(Int16Array.of(0))[0]).toBe(0xd5);
    expect(decodeMulaw(Uint8Array.of(0x00))[0]).toBe(-32124);
    // 0x7F and 0xFF are both mu-law zero; every other code survives a round trip
    const mu = encodeMulaw(decodeMulaw(EVERY_CODE));
    EVERY_CODE.forEach((code) => expect(mu[code] === code || (code === 0x7f && mu[code] === 0xff)).toBe(true));
    expect(encodeAlaw(decodeAlaw(EVERY_CODE))).toEqual(EVERY_CODE);
  });
});
