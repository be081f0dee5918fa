/**
 * Who is asking, for the relay: whether a browser page's `Origin` may use it, and which
 * client (for limits and budgets) an address belongs to.
 *
 * @internal
 */
import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** An origin as compared: scheme, host name and port (the default port of the scheme filled in). */
function originKey(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return `${url.protocol}//${url.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/**
 * The relay's own origin as its browsers see it: `publicOrigin` when given, else the
 * request's scheme (https when the socket is TLS) with its `Host` header. Undefined when
 * the request carries no usable `Host`.
 */
function ownOrigin(request: IncomingMessage, publicOrigin: string | undefined): string | undefined {
  if (publicOrigin !== undefined) return originKey(publicOrigin);
  const host = request.headers.host;
  if (host === undefined || host === '') return undefined;
  const scheme = (request.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http';
  return originKey(`${scheme}://${host}`);
}

/** Which origins a relay serves beyond its own: a list, or a test of the `Origin` header. */
export type AllowedOrigins = ReadonlyArray<string> | ((origin: string) => boolean);

/**
 * Whether a `Host` header names this machine by a loopback name: `localhost`, an IPv4
 * address in 127.0.0.0/8 (in any form the URL parser reads, e.g. `127.1`), or `[::1]`, with
 * any port. What a relay with neither `publicOrigin` nor `origins` serves: a name an
 * attacker controls (DNS rebinding) is never one of them.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  let hostname: string;
  try {
    const url = new URL(`http://${host}/`);
    // a Host header is a name and a port, nothing else
    if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return false;
    hostname = url.hostname;
  } catch {
    return false;
  }
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The origin check of an upgrade request, as a function: `'none'` (no `Origin` header: not
 * a browser page; `authorize` decides), `'allowed'`, `'refused'` (another origin), or
 * `'host'`: with neither `publicOrigin` nor `origins`, the relay cannot tell its own name
 * from a name an attacker points at it (DNS rebinding: the page's `Origin` and the `Host`
 * both the attacker's), so it serves only loopback `Host` names ({@link isLoopbackHost}) and
 * refuses every other request, with an `Origin` or without. With `origins` and no
 * `publicOrigin` the same holds for the own origin: the request's (from `Host`) counts only
 * on a loopback name; a page of any other name must be listed.
 */
export function originPolicy(
  publicOrigin: string | undefined,
  origins: AllowedOrigins | undefined,
): (request: IncomingMessage) => 'none' | 'allowed' | 'refused' | 'host' {
  const listed = Array.isArray(origins) ? new Set(origins.map((origin) => originKey(origin) ?? origin)) : undefined;
  const test = typeof origins === 'function' ? origins : undefined;
  const loopbackOnly = publicOrigin === undefined && origins === undefined;
  return (request) => {
    if (loopbackOnly && !isLoopbackHost(request.headers.host)) return 'host';
    const header = request.headers.origin;
    if (header === undefined) return 'none';
    const key = originKey(header);
    // the own origin from `Host` only where a name cannot be rebound (publicOrigin does not read `Host`)
    const ownTrusted = publicOrigin !== undefined || isLoopbackHost(request.headers.host);
    if (key !== undefined && ownTrusted && key === ownOrigin(request, publicOrigin)) return 'allowed';
    // 'null' (sandboxed frames, file: pages) is allowed only when listed as such
    if (listed?.has(key ?? header) === true) return 'allowed';
    if (test !== undefined) {
      try {
        return test(header) === true ? 'allowed' : 'refused';
      } catch {
        return 'refused';
      }
    }
    return 'refused';
  };
}

/** Whether `origin` is an origin (`scheme://host[:port]`, http or https) or `'null'`. */
export function isOriginText(origin: string): boolean {
  if (origin === 'null') return true;
  const key = originKey(origin);
  if (key === undefined) return false;
  const url = new URL(origin);
  return url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && !origin.endsWith('/');
}

/**
 * The client an address stands for: an IPv4 address as is (also when IPv4-mapped), an
 * IPv6 address by its /64 network (one machine commonly holds a whole /64).
 */
export function addressClient(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address.split('%')[0]!)) return address;
  return `${ipv6Hextets(address.split('%')[0]!).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address, lower case, without leading zeros. */
function ipv6Hextets(address: string): string[] {
  let text = address.toLowerCase();
  // an embedded IPv4 tail is two hextets
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...zeros, ...right].map((part) => Number.parseInt(part, 16).toString(16));
}
