/**
 * An emulated network in front of the emulator: a TCP relay on the public port that
 * holds every byte for a one-way latency (and, optionally, a bandwidth cap) in both
 * directions before passing it to the real server on a loopback port.
 *
 * Because it works on the byte stream, it delays everything alike: HTTP requests and
 * answers, the WebSocket upgrade, and every live frame either way. Order is kept: a
 * chunk is never delivered before the one sent ahead of it, even when latency is a
 * `[min, max]` range (jitter then delays later chunks, as a real in-order TCP stream
 * would). A new connection first pays one extra round trip, for the TCP handshake
 * (TLS is not modelled). With `bandwidthBytesPerSecond`, each direction of each
 * connection is a link of that capacity: a chunk occupies the link for
 * `bytes / bandwidth` seconds, then travels for the latency.
 *
 * All timing uses real timers (sockets cannot run in virtual time); tests assert lower
 * bounds only.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { drawLatencyMs, type Latency } from './options.js';

/** Bytes held in one direction before the sending socket is paused (backpressure). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** The network between client and emulator. */
export interface NetworkConditions {
  /** One-way latency per chunk, ms: a number, or `[min, max]` drawn uniformly per chunk. */
  latencyMs: Latency;
  /** Capacity of each direction of each connection, bytes per second; undefined: unlimited. */
  bandwidthBytesPerSecond?: number | undefined;
}

/** A running relay. */
export interface NetworkRelay {
  /** The public port clients connect to. */
  readonly port: number;
  /** Destroy every relayed connection, clear every timer, stop listening. */
  close(): Promise<void>;
}

/**
 * One direction of one connection: chunks leave `from`, wait their turn on the link
 * and their latency, and are written to `to` in the order they came.
 */
class Link {
  private readonly queue: { at: number; chunk: Buffer | 'end' | 'reset' }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private linkFreeAt: number;
  private lastDeliveryAt = 0;
  private heldBytes = 0;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly conditions: NetworkConditions,
    /** The link carries nothing before this time (the handshake's round trip). */
    openAt: number,
  ) {
    this.linkFreeAt = openAt;
    let ended = false;
    from.on('data', (chunk: Buffer) => this.enqueue(chunk));
    from.on('end', () => {
      ended = true;
      this.enqueue('end');
    });
    // Closed without an orderly end (reset, destroyed): the other side learns it late too.
    from.on('close', () => {
      if (!ended) this.enqueue('reset');
    });
  }

  private enqueue(chunk: Buffer | 'end' | 'reset'): void {
    const now = performance.now();
    const bytes = typeof chunk === 'string' ? 0 : chunk.byteLength;
    const bandwidth = this.conditions.bandwidthBytesPerSecond;
    const start = Math.max(now, this.linkFreeAt);
    this.linkFreeAt = start + (bandwidth ? (bytes * 1000) / bandwidth : 0);
    const at = Math.max(this.linkFreeAt + drawLatencyMs(this.conditions.latencyMs), this.lastDeliveryAt);
    this.lastDeliveryAt = at;
    this.queue.push({ at, chunk });
    this.heldBytes += bytes;
    if (this.heldBytes > HIGH_WATER_BYTES) this.from.pause();
    if (this.queue.length === 1) this.arm();
  }

  /** One timer per link, for the head of the queue: delivery order is queue order. */
  private arm(): void {
    const head = this.queue[0];
    if (!head) return;
    this.timer = setTimeout(() => this.deliver(), Math.max(0, head.at - performance.now()));
  }

  private deliver(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && (this.queue[0] as { at: number }).at <= now + 0.5) {
      const { chunk } = this.queue.shift() as { chunk: Buffer | 'end' | 'reset' };
      if (this.to.destroyed) continue;
      if (chunk === 'end') this.to.end();
      else if (chunk === 'reset') this.to.destroy();
      else {
        this.heldBytes -= chunk.byteLength;
        this.to.write(chunk);
      }
    }
    if (this.heldBytes <= HIGH_WATER_BYTES / 2 && this.from.isPaused()) this.from.resume();
    this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
  }
}

/**
 * Listen on `port` (0: a free one) at `host` and relay every connection to
 * `targetPort` on `targetHost` through emulated {@link NetworkConditions}.
 *
 * @param conditions Latency and bandwidth of the emulated network.
 * @param listen Where clients connect (`host`, `port`).
 * @param target Where the real server listens.
 * @returns The relay, once it listens.
 */
export async function startNetworkRelay(
  conditions: NetworkConditions,
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<NetworkRelay> {
  const connections = new Set<{ client: Socket; server: Socket; links: Link[] }>();
  const relay: Server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    // The client's first bytes cannot leave before the handshake's round trip.
    const handshakeDone = performance.now() + 2 * drawLatencyMs(conditions.latencyMs);
    const server = connect({ host: target.host, port: target.port, allowHalfOpen: true, noDelay: true });
    const links = [new Link(client, server, conditions, handshakeDone), new Link(server, client, conditions, 0)];
    const entry = { client, server, links };
    connections.add(entry);
    let ended = false;
    const teardown = (): void => {
      if (ended) return;
      ended = true;
      connections.delete(entry);
      for (const link of links) link.stop();
      client.destroy();
      server.destroy();
    };
    // Once both sockets are closed (each side's end or reset was delivered), forget them.
    let closedSides = 0;
    const onClose = (): void => {
      closedSides++;
      if (closedSides === 2) teardown();
    };
    client.on('close', onClose);
    server.on('close', onClose);
    // Errors end in 'close', which the links pass on as a late reset.
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    relay.once('error', reject);
    relay.listen(listen.port, listen.host, () => {
      relay.off('error', reject);
      resolve();
    });
  });
  let closed: Promise<void> | undefined;
  return {
    port: (relay.address() as AddressInfo).port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const { client, server, links } of connections) {
          for (const link of links) link.stop();
          client.destroy();
          server.destroy();
        }
        connections.clear();
        relay.close(() => resolve());
      });
      return closed;
    },
  };
}
