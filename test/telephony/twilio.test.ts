import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstValueFrom, from, lastValueFrom, NEVER, of, tap, toArray } from 'rxjs';
import { WebSocketServer } from 'ws';
import { FakeTwilio } from './fake-twilio.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { speak, type HeardReport, type LiveSpeechEvent } from '../../src/live/index.js';
import { decodeMulaw, encodeMulaw, TelephonyError, twilioMediaStream, type CallPlaybackEvent, type TwilioCall } from '../../src/telephony/index.js';

const GREETING = 'Hello! Thanks for calling. How can I help you today?';
interface ServerCall {
  call: TwilioCall;
  events: LiveSpeechEvent[];
  playback: Promise<CallPlaybackEvent[]>;
  report: Promise<HeardReport>;
}

let emulator: Emulator;
let http: Server;
let server: WebSocketServer;
let url: string;
const calls: ServerCall[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  http = createServer();
  server = new WebSocketServer({ server: http, path: '/media' });
  server.on('connection', (socket) => {
    let resolveReport!: (report: HeardReport) => void;
    const report = new Promise<HeardReport>((resolve) => (resolveReport = resolve));
    const call = twilioMediaStream(socket, { onHeard: resolveReport });
    call.dtmf$.subscribe(() => call.interrupt());
    const events: LiveSpeechEvent[] = [];
    const playback = call.started.then(() =>
      lastValueFrom(
        call
          .say(
            of(GREETING).pipe(
              speak({ wsUrl: emulator.wsUrl, apiKey: emulator.apiKey }, { voice_id: 1, output_format: 'wav', sample_rate: 8000, word_timestamps: true }),
              tap((event) => events.push(event)),
            ),
          )
          .pipe(toArray()),
      ),
    );
    playback.catch(() => undefined);
    calls.push({ call, events, playback, report });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/media`;
});

afterAll(async () => {
  for (const client of server.clients) client.terminate();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => http.close(resolve));
  await emulator.close();
});

/** The words (in order) whose audio ended within the first `bytes` bytes the call received. */
function wordsSent(events: LiveSpeechEvent[], marks: Array<{ at: number }>, bytes: number): string[] {
  const words: string[] = [];
  let segment = 0;
  for (const event of events) {
    if (event.type !== 'segmentStart') continue;
    if (segment > 0 && marks[segment - 1] === undefined) break; // the previous segment never ended: nothing of this one was sent
    const startsAt = segment === 0 ? 0 : marks[segment - 1]!.at; // a segment's frames start where the previous mark came
    segment++;
    for (const w of event.word_timestamps ?? []) if (startsAt / 8000 + w.end <= bytes / 8000 + 1e-9) words.push(w.word);
  }
  return words;
}

const wordsOf = (text: string): string[] => text.match(/\S+/g) ?? [];

describe('twilioMediaStream with a fake Media Streams peer', () => {
  it('plays the greeting at real time, a mark after each sentence, and reports it all heard', async () => {
    const before = calls.length;
    const peer = new FakeTwilio(url);
    await peer.open();
    const served = await waitForCall(before);
    const playback = await served.playback;
    const report = await served.report;
    expect(report).toMatchObject({ heard: GREETING, unheard: '', complete: true, method: 'timestamps' });
    expect(playback.at(-1)).toEqual({ type: 'heard', report, reason: 'ended' });
    const segments = served.events.filter((e) => e.type === 'segmentStart').length;
    expect(peer.marks).toHaveLength(segments);
    expect(playback.filter((e) => e.type === 'segmentPlayed')).toHaveLength(segments);
    expect(peer.bytes % 160).toBe(0);
    expect(report.playedSeconds).toBeCloseTo(peer.bytes / 8000, 9);
    peer.socket.close();
    await peer.closed;
  });

  it('a key pressed mid-sentence: clear, no media after it, and heard is exactly the words sent before the clear', async () => {
    const before = calls.length;
    const peer = new FakeTwilio(url);
    await peer.open();
    const served = await waitForCall(before);
    // half a second into the second sentence
    const pressed = new Promise<void>((resolve) =>
      peer.whenBytes(1, () => {
        const waitMark = setInterval(() => {
          if (peer.marks.length === 0) return;
          clearInterval(waitMark);
          peer.whenBytes(peer.marks[0]!.at + 4000, () => {
            peer.send({ event: 'dtmf', streamSid: 'MZ0001', sequenceNumber: '9', dtmf: { track: 'inbound_track', digit: '5' } });
            resolve();
          });
        }, 5);
      }),
    );
    await pressed;
    const report = await served.report;
    const playback = await served.playback;
    served.call.close();
    await peer.closed;

    expect(peer.clearAt).toBeDefined();
    expect(peer.mediaAfterClear).toBe(0);
    expect(playback.at(-1)).toMatchObject({ type: 'heard', reason: 'interrupted' });
    expect(report.complete).toBe(false);
    // the text of the segments the session had started when the key was pressed
    expect(GREETING.startsWith(report.heard + report.unheard)).toBe(true);
    expect(report.unheard).not.toBe('');
    expect(report.playedSeconds).toBeCloseTo(peer.clearAt! / 8000, 9);
    const expected = wordsSent(served.events, peer.marks, peer.clearAt!);
    expect(wordsOf(report.heard)).toEqual(expected);
    // control: the check tells cuts apart: a second more would have been more words
    expect(wordsSent(served.events, peer.marks, peer.clearAt! + 8000)).not.toEqual(expected);
    expect(expected.length).toBeGreaterThan(1);
    expect(expected.length).toBeLessThan(wordsOf(GREETING).length);
  });

  it('stop ends the speech with its report; the caller audio and keys come out decoded (a payload that is no base64 is ignored)', async () => {
    const before = calls.length;
    const peer = new FakeTwilio(url);
    await peer.open();
    const served = await waitForCall(before);
    const audio = lastValueFrom(served.call.audio$.pipe(toArray()));
    const keys = lastValueFrom(served.call.dtmf$.pipe(toArray()));
    const spoken = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    peer.send({ event: 'media', streamSid: 'MZ0001', media: { track: 'inbound', chunk: '1', timestamp: '0', payload: '!!' } });
    peer.send({ event: 'media', streamSid: 'MZ0001', media: { track: 'inbound', chunk: '2', timestamp: '20', payload: Buffer.from(encodeMulaw(spoken)).toString('base64') } });
    await new Promise<void>((resolve) => peer.whenBytes(800, resolve));
    peer.send({ event: 'stop', streamSid: 'MZ0001', stop: { accountSid: 'AC0001', callSid: 'CA0001' } });
    const playback = await served.playback;
    expect(playback.at(-1)).toMatchObject({ type: 'heard', reason: 'stopped', report: { complete: false } });
    expect(await audio).toEqual([decodeMulaw(encodeMulaw(spoken))]);
    expect(await keys).toEqual([]);
    expect(await served.call.ended).toEqual({ reason: 'stop' });
    expect(await served.call.started).toMatchObject({ streamSid: 'MZ0001', callSid: 'CA0001', customParameters: { who: 'test' } });
    peer.socket.close();
  });

  it('a socket closed mid-speech errors the speech after its report, and closes the live session', async () => {
    const before = calls.length;
    const peer = new FakeTwilio(url);
    await peer.open();
    const served = await waitForCall(before);
    await new Promise<void>((resolve) => peer.whenBytes(800, resolve));
    expect(emulator.liveConnections).toBeGreaterThan(0); // control: the session is open while speaking
    peer.socket.terminate();
    await expect(served.playback).rejects.toBeInstanceOf(TelephonyError);
    const report = await served.report;
    expect(report.complete).toBe(false);
    await until(() => emulator.liveConnections === 0);
  });
});

describe('twilioMediaStream options and misuse', () => {
  const socket = { readyState: 1, send: () => undefined, close: () => undefined, addEventListener: () => undefined, removeEventListener: () => undefined };
  it('throws at once for bad options or something that is not a socket', () => {
    expect(() => twilioMediaStream(socket, { startTimeoutMs: -1 })).toThrow(/startTimeoutMs/);
    expect(() => twilioMediaStream({} as never)).toThrow(/socket/);
  });

  it('a second say() while one plays errors with busy; say() after the end errors with closed', async () => {
    const call = twilioMediaStream(socket, { startTimeoutMs: 50 });
    const first = call.say(NEVER).subscribe({ error: () => undefined });
    await expect(firstValueFrom(call.say(from([])))).rejects.toMatchObject({ reason: 'busy' });
    expect(await call.ended).toEqual({ reason: 'no_start' });
    await expect(call.started).rejects.toMatchObject({ reason: 'no_start' });
    await expect(firstValueFrom(call.say(from([])))).rejects.toMatchObject({ reason: 'closed' });
    first.unsubscribe();
  });
});

async function waitForCall(index: number): Promise<ServerCall> {
  await until(() => calls.length > index);
  return calls[index]!;
}

async function until(test: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
