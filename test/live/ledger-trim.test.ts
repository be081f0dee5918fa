/** The ledger's wording check without trimmed copies: equal exactly when the trimmed strings are. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { equalTrimmed } from '../../src/live/ledger.js';

const SPACES = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\ufeff', '\u0085'];
const piece = fc.oneof(fc.constantFrom(...SPACES), fc.constantFrom('a', 'B', 'é', '.', '語'), fc.string({ maxLength: 3 }));
const text = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''));

describe('equalTrimmed', () => {
  it('agrees with comparing trim() of both, on random texts with every kind of space at the ends', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(equalTrimmed(a, b)).toBe(a.trim() === b.trim());
        expect(equalTrimmed(a, ` \n${a}\u3000`)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('examples, with the controls that differ', () => {
    expect(equalTrimmed(' Hello there. ', 'Hello there.')).toBe(true);
    expect(equalTrimmed('Hello there.', 'Hello there!')).toBe(false);
    expect(equalTrimmed(' a b', 'a  b')).toBe(false); // inner whitespace is not folded here
    expect(equalTrimmed('\u0085a', 'a')).toBe(false); // NEL is not JavaScript whitespace
  });
});
