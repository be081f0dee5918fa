/**
 * Reading standard input: all of it (for `translate -`), decoded as UTF-8.
 */

/** Read `stream` to its end as UTF-8 text (multi-byte characters split across chunks are kept whole). */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const decoder = new TextDecoder('utf-8');
  let text = '';
  for await (const chunk of stream as AsyncIterable<string | Uint8Array>) {
    text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}
