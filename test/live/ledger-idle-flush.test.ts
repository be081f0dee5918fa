/**
 * The reconnect ledger trusts no clock (issue 28, soak seed 587146974). Under CPU load the
 * service's idle timer can fire between two text chunks the client sent 1 ms apart (the
 * second one still in a socket buffer or an unscheduled process): the service flushes the
 * first chunk as a segment of its own. The ledger used to rule such a flush out from the
 * client's send times, gave that segment the whole sentence, and a later 4402 reported
 * nothing unspoken while a sentence was never spoken.
 *
 * Here a proxy makes that arrival order certain, without any timing: it holds every text
 * frame after the first until the service has started a segment from the first alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket, WebSocketServer, type RawData } from 'ws';
import type { AddressInfo } from 'node:net';
import { from, lastValueFrom, tap, toArray } from 'rxjs';
import { speak, type LiveSpeechEvent } from '../../src/live/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { CreditsExhaustedError } from '../../src/core/errors.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A proxy to the emulator that delivers the client's first `text.chunk` alone, and the rest once a segment started. */
async function firstChunkAloneProxy(emu: Emulator): Promise<{ wsUrl: string; segmentTexts: string[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const segmentTexts: string[] = [];
  wss.on('connection', (client) => {
    const upstream = new NodeWebSocket(emu.wsUrl, { headers: { 'x-api-key': emu.apiKey } });
    const early: string[] = [];
    const held: string[] = [];
    let chunks = 0;
    let released = false;
    const forward = (text: string): void => {
      if (upstream.readyState === NodeWebSocket.OPEN) upstream.send(text);
      else early.push(text);
    };
    upstream.on('open', () => early.splice(0).forEach((text) => upstream.send(text)));
    client.on('message', (data: RawData) => {
      const text = data.toString();
      const frame = JSON.parse(text) as { type: string };
      const isText = frame.type === 'text.chunk' || frame.type === 'text.done';
      if (isText && !released && (frame.type === 'text.done' || chunks++ > 0)) held.push(text);
      else forward(text);
    });
    upstream.on('message', (data: RawData, isBinary: boolean) => {
      if (!isBinary) {
        const frame = JSON.parse(data.toString()) as { type: string; text?: string };
        if (frame.type === 'segment.start') {
          segmentTexts.push(frame.text ?? '');
          if (!released) {
            released = true;
            held.splice(0).forEach(forward);
          }
        }
      }
      if (client.readyState === NodeWebSocket.OPEN) client.send(data, { binary: isBinary });
    });
    client.on('close', () => upstream.terminate());
    upstream.on('close', (code, reason) => client.readyState === NodeWebSocket.OPEN && client.close(code, reason));
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of wss.clients) socket.terminate();
        wss.close(() => resolve());
      }),
  );
  return { wsUrl: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, segmentTexts };
}

describe('a flush between two chunks sent together (the service received them apart)', () => {
  it('credits run out after it: the sentence never spoken is in unspoken, and nothing is reported twice', async () => {
    const emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01, faults: { creditsAfterSegments: 3 } });
    cleanups.push(() => emu.close());
    const proxy = await firstChunkAloneProxy(emu);
    const events: LiveSpeechEvent[] = [];
    // both chunks pushed in the same millisecond
    const chunks = ['Item q0 am', 'ber quiet? Item q1 copper willow lantern! Item q2 violet?'];
    const error = await lastValueFrom(
      from(chunks).pipe(speak({ wsUrl: proxy.wsUrl }, { voice_id: 1, idle_timeout: 0.05 }), tap((e) => events.push(e)), toArray()),
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    // the service really flushed the first chunk alone: four segments, three paid
    expect(proxy.segmentTexts.map((t) => t.trim())).toEqual(['Item q0 am', 'ber quiet?', 'Item q1 copper willow lantern!']);
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(3);
    expect(error).toBeInstanceOf(CreditsExhaustedError);
    expect((error as CreditsExhaustedError).unspoken).toBe('Item q2 violet?');
    // the service echoed each segment word for word: no doubt, no mismatch
    expect(events.some((e) => e.type === 'segmentMismatch')).toBe(false);
  });

  it('control: without the held chunk the same text is three sentences, all spoken', async () => {
    const emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01, faults: { creditsAfterSegments: 3 } });
    cleanups.push(() => emu.close());
    const chunks = ['Item q0 am', 'ber quiet? Item q1 copper willow lantern! Item q2 violet?'];
    const events = await lastValueFrom(from(chunks).pipe(speak({ wsUrl: emu.wsUrl, apiKey: emu.apiKey }, { voice_id: 1, idle_timeout: 0.05 }), toArray()));
    const texts = events.flatMap((e) => (e.type === 'segmentStart' ? [e.text.trim()] : []));
    expect(texts).toEqual(['Item q0 amber quiet?', 'Item q1 copper willow lantern!', 'Item q2 violet?']);
    expect(events.at(-1)?.type).toBe('done');
  });
});
