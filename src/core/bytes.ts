/** Byte arrays: the one concatenation helper of rxvoice (audio segments, encoder output, bodies). */

/**
 * The chunks joined into one new `Uint8Array` of their total length (a copy, even of one
 * chunk: the result never aliases a chunk that its owner may reuse).
 *
 * For example `[1, 2]` and `[3]` give `[1, 2, 3]`.
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const chunk of chunks) total += chunk.byteLength;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
