/** Seeded randomness shared by the emulator's generated media, the benchmarks and the tests. */

/**
 * mulberry32: a small seeded PRNG. The same seed gives the same sequence.
 *
 * @param seed Any number; only its low 32 bits are used.
 * @returns A function returning the next value in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
