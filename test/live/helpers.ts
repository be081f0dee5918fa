/** Shared helpers of the live session suites (test/live/*.test.ts): emulators and scripted servers closed after each test, text fixtures, error matchers. */
import { afterEach, expect } from 'vitest';
import { WebSocket as NodeWebSocket, WebSocketServer, type RawData } from 'ws';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { EmulatorOptions } from '../../src/emulator/options.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import type { WebSocketConstructorLike } from '../../src/live/session.js';
import { LiveSessionError, ValidationError, type LiveSessionErrorCode } from '../../src/core/errors.js';

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

export const emulators: Emulator[] = [];
export const servers: WebSocketServer[] = [];

/** A `ws` WebSocket class for `speak` that records every socket it makes, in order. */
export function recordingWebSocket(): { sockets: NodeWebSocket[]; WebSocket: WebSocketConstructorLike } {
  const sockets: NodeWebSocket[] = [];
  class Recording extends NodeWebSocket {
    constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(url, protocols, options);
      sockets.push(this);
    }
  }
  return { sockets, WebSocket: Recording as unknown as WebSocketConstructorLike };
}

export async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, ...options });
  emulators.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          for (const client of s.clients) client.terminate();
          s.close(() => resolve());
        }),
    ),
  );
});

/** A scripted WebSocket server on port 0 (a hostile or minimal peer). */
export async function scriptedServer(
  onConnection: (socket: NodeWebSocket, request: IncomingMessage, received: string[]) => void,
): Promise<{ wsUrl: string; connections: IncomingMessage[]; received: string[][]; closes: number[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(wss);
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const state = { connections: [] as IncomingMessage[], received: [] as string[][], closes: [] as number[] };
  wss.on('connection', (socket, request) => {
    const received: string[] = [];
    state.connections.push(request);
    state.received.push(received);
    socket.on('message', (data: RawData) => received.push(data.toString()));
    socket.on('close', (code) => state.closes.push(code));
    onConnection(socket, request, received);
  });
  const { port } = wss.address() as AddressInfo;
  return { wsUrl: `ws://127.0.0.1:${port}`, ...state };
}

export const upgrades = (emu: Emulator) => emu.requests.filter((r) => r.method === 'UPGRADE').length;
export const squash = (text: string) => text.replace(/\s+/g, '');
export const segmentsOf = (events: LiveSpeechEvent[]) =>
  events.filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart');

export async function failure(promise: Promise<unknown>): Promise<LiveSessionError> {
  try {
    await promise;
  } catch (error) {
    return error as LiveSessionError;
  }
  throw new Error('expected an error');
}

/** The ValidationError that `make` throws. */
export function thrown(make: () => unknown): ValidationError {
  try {
    make();
  } catch (error) {
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError to be thrown');
}

/** The error of a live session, with this code. */
export function expectLiveError(error: unknown, code: LiveSessionErrorCode): void {
  expect(error).toBeInstanceOf(LiveSessionError);
  expect((error as LiveSessionError).code).toBe(code);
}

/** Matches a live session's error of this code (inside marble expectations). */
export const liveError = (code: LiveSessionErrorCode): unknown => expect.objectContaining({ name: 'LiveSessionError', code });

export const TEXT =
  'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! ' +
  'How vexingly quick daft zebras jump? Sphinx of black quartz, judge my vow. ' +
  'Bright vixens jump and dozy fowl quack. Waltz, bad nymph, for quick jigs vex.';
export const SENTENCES = TEXT.match(/[^.!?]+[.!?]/g)!.map((s) => s.trim());

/** Split text into small tokens like an LLM stream (2-5 characters). */
export function tokens(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  let n = 0;
  while (i < text.length) {
    const len = 2 + (n++ % 4);
    out.push(text.slice(i, i + len));
    i += len;
  }
  return out;
}

// ---------------------------------------------------------------------------
// The ledger (pure)
// ---------------------------------------------------------------------------
