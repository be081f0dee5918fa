/**
 * Frame helpers of the relay: `truncateUtf8` (close reasons are at most 123 bytes) keeps the
 * longest start of the text that fits and never cuts a code point (a property over random
 * text, astral characters included, with a control: trimming one UTF-16 unit at a time, the
 * old way, leaves half a surrogate pair); `browserCloseCode` maps codes a browser may not be
 * sent to 1011.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { browserCloseCode, truncateUtf8 } from '../../src/relay/frames.js';

/** The old trim: one UTF-16 unit at a time (it can leave a lone high surrogate). */
function trimUnits(text: string, maxBytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > maxBytes) out = out.slice(0, -1);
  return out;
}
/** Whether `text` holds a lone surrogate (half of a pair). */
const broken = (text: string): boolean => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

const text = fc.string({ unit: fc.oneof(fc.constantFrom('a', 'é', '€', '😀', '𝄞', '\u{10FFFF}'), fc.string({ unit: 'grapheme', maxLength: 3 })), maxLength: 80 });

describe('truncateUtf8', () => {
  it('keeps the longest start of whole code points that fits in the bytes given (random text and limits)', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 200 }), (input, max) => {
        const out = truncateUtf8(input, max);
        expect(input.startsWith(out)).toBe(true);
        expect(Buffer.byteLength(out)).toBeLessThanOrEqual(max);
        expect(broken(out)).toBe(false);
        if (out.length < input.length) {
          // the next code point would not have fitted
          const next = String.fromCodePoint(input.codePointAt(out.length)!);
          expect(Buffer.byteLength(out + next)).toBeGreaterThan(max);
        } else expect(out).toBe(input);
      }),
    );
  });

  it('cuts before an emoji that does not fit whole; control: trimming UTF-16 units leaves half of it', () => {
    const reason = 'x'.repeat(120) + '😀'; // 120 + 4 bytes: the emoji cannot fit in 123
    expect(truncateUtf8(reason, 123)).toBe('x'.repeat(120));
    const old = trimUnits(reason, 123);
    expect(Buffer.byteLength(old)).toBeLessThanOrEqual(123);
    expect(broken(old)).toBe(true); // the high surrogate alone (3 bytes as U+FFFD: it fits)
    expect(truncateUtf8('short', 123)).toBe('short');
  });
});

describe('browserCloseCode', () => {
  it('passes codes a browser may be sent, maps the others (lost connection) to 1011', () => {
    for (const code of [1000, 1001, 1003, 1008, 1011, 1013, 3000, 4400, 4999]) expect(browserCloseCode(code)).toBe(code);
    for (const code of [1004, 1005, 1006, 1015, 2000, 5000]) expect(browserCloseCode(code)).toBe(1011);
  });
});
