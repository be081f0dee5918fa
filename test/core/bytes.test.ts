import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes } from '../../src/core/bytes.js';
import { LocaleTagSchema } from '../../src/core/primitives.js';

describe('concatBytes', () => {
  it('joins any chunks in order into a copy of their total length', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 8 }), (chunks) => {
        const joined = concatBytes(chunks);
        expect([...joined]).toEqual(chunks.flatMap((c) => [...c]));
        if (chunks.length === 1) expect(joined).not.toBe(chunks[0]);
      }),
    );
  });
});

describe('locale tags', () => {
  it('lower-case language of 2 or 3 letters, a region of 2 to 4 letters or digits', () => {
    for (const tag of ['en-us', 'pt-br', 'yue-hk', 'es-419', 'zh-hant']) expect(LocaleTagSchema.safeParse(tag).success, tag).toBe(true);
    for (const tag of ['en', 'EN-US', 'en_us', 'e-us', 'engl-us', 'en-u', 'en-abcde', 'en-us-x']) expect(LocaleTagSchema.safeParse(tag).success, tag).toBe(false);
  });
});
