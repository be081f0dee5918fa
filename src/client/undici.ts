/**
 * undici, loaded by the client's first HTTP request rather than when the package is
 * imported: a process that only speaks over live sessions (WebSocket) never loads it.
 * undici's import is about 5 MB of heap and 70 ms on this machine (`docs/performance.md`,
 * "What importing costs"), a third of what importing `rxvoice` cost; Node's own `fetch`
 * defers its bundled undici the same way. One load a process, shared by every client.
 */
let loading: Promise<typeof import('undici')> | undefined;

/** The undici module (its first call starts the import; later calls share it). */
export function loadUndici(): Promise<typeof import('undici')> {
  return (loading ??= import('undici'));
}
