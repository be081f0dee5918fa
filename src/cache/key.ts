/**
 * The cache key of a sentence: a SHA-256 (WebCrypto, so it runs in every runtime) of the
 * exact spoken text with every setting that changes the audio. `idle_timeout` and the
 * client options (timeouts, reconnect, ...) change when audio comes, never what it is, so
 * they are left out, as are settings given as `null` (the service's default, as when left out). The text is taken with its outer whitespace trimmed (it is not
 * spoken); everything inside it counts, case and punctuation included.
 */

/** Version of the key layout: bumped when what a key covers changes (old entries then miss). */
const KEY_VERSION = 1;

/** What changes the audio of one piece of text: the live session's configuration or a /tts-stream request's. */
export interface AudioSettings {
  /** `'live'` or `'tts-stream'`: the two paths synthesize with different defaults, so they never share entries. */
  path: 'live' | 'tts-stream';
  [setting: string]: unknown;
}

/** JSON with object keys sorted, so equal settings give equal text whatever the order given. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null) // null asks for the service's default, as leaving it out does
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The text and settings as the one string that is hashed (exported for tests). */
export function keyMaterial(text: string, settings: AudioSettings): string {
  return canonical({ v: KEY_VERSION, text: text.trim(), settings });
}

/** The cache key (64 hex digits) of `text` spoken with `settings`. */
export async function cacheKey(text: string, settings: AudioSettings): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(keyMaterial(text, settings)));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
