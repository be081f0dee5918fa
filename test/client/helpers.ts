/** Helpers of the client tests: an emulator, a client on it, a counting proxy, a virtual clock. */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { createClient, type ClientOptions, type RxVoiceClient } from '../../src/index.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';

export const FAST_POLLING = { initialDelayMs: 5, multiplier: 1.5, maxDelayMs: 20, jitter: 0, deadlineMs: 20_000 };
export const FAST_RETRY = { baseDelayMs: 2, maxDelayMs: 10 };

/** Poll `condition` every 10 ms, up to `withinMs`; resolves with its last value. */
export async function until(condition: () => boolean, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return condition();
}

export function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ synth: 'tone', taskDurationMs: 20, ...options });
}

export function clientFor(emu: { baseUrl: string; apiKey: string }, options: ClientOptions = {}): RxVoiceClient {
  return createClient({
    apiKey: emu.apiKey,
    baseUrl: emu.baseUrl,
    polling: FAST_POLLING,
    retry: FAST_RETRY,
    warn: () => undefined,
    ...options,
  });
}

export interface SeenRequest {
  method: string;
  path: string;
  body: string;
}

/** A tiny HTTP proxy in front of the emulator that records method, path and body of each request. */
export async function countingProxy(
  target: string,
): Promise<{ baseUrl: string; seen: SeenRequest[]; connections: { opened: number; open: number }; close(): Promise<void> }> {
  const to = new URL(target);
  const seen: SeenRequest[] = [];
  /** TCP connections the clients opened to the proxy (`open`: not closed yet). */
  const connections = { opened: 0, open: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? 'GET', path: req.url ?? '/', body: body.toString('utf8') });
      const upstream = httpRequest(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  server.on('connection', (socket) => {
    connections.opened += 1;
    connections.open += 1;
    socket.on('close', () => (connections.open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A virtual clock for the polling timers while requests stay real: each scheduled action
 * runs on the next turn of the event loop (no real wait), and `now()` jumps to its due
 * time. Records every delay asked for.
 */
export class VirtualClock implements SchedulerLike {
  clock = 0;
  readonly delays: number[] = [];
  now(): number {
    return this.clock;
  }
  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    const due = this.clock + delay;
    this.delays.push(delay);
    const subscription = new Subscription();
    const handle = setImmediate(() => {
      if (subscription.closed) return;
      this.clock = Math.max(this.clock, due);
      work.call(subscription as unknown as SchedulerAction<T>, state);
      subscription.unsubscribe();
    });
    subscription.add(() => clearImmediate(handle));
    return subscription;
  }
}
