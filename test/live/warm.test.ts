/**
 * Warm live sessions (`client.warmSpeaker`): reuse, mismatch, idle close in virtual
 * time, barge-in, errors, and closing, against the emulator over real sockets. The
 * emulator's `liveConnections` shows what the server sees open.
 */
import { lastValueFrom, of, Subject, takeUntil, toArray, VirtualTimeScheduler } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { LiveSessionError, ValidationError, type LiveSpeechEvent, type SpeakOptions } from '../../src/live/index.js';

const POOR_KEY = 'rxv-warm-poor-key';
const OPTIONS: SpeakOptions = { voice_id: 1, output_format: 'wav' };

let emulator: Emulator;
let client: RxVoiceClient;

beforeAll(async () => {
  emulator = await startEmulator({
    synth: 'tone',
    toneWordSeconds: 0.02,
    apiKeys: ['rxv-warm-key-0000', POOR_KEY],
    credits: { 'rxv-warm-key-0000': 1_000_000, [POOR_KEY]: 0 },
  });
  client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});
afterEach(async () => {
  await waitFor(() => emulator.liveConnections === 0, 'every live connection closed after the test');
});

/** Resolves once `condition` holds (checked on each turn of the event loop), or fails after 5 s. */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The run ids the emulator created so far (a live session creates one at session.start). */
const lastRunId = (): number => Math.max(0, ...emulator.context.runs.keys());

const speakAll = (c: RxVoiceClient, options: SpeakOptions = OPTIONS, text = 'Hello there. How are you?') =>
  lastValueFrom(of(text).pipe(c.speak(options), toArray()));

describe('client.warmSpeaker', () => {
  it('reuse: speak takes the ready session (its run existed before), a replacement warms up; control: cold creates a run', async () => {
    const speaker = client.warmSpeaker(OPTIONS);
    await speaker.ready();
    expect(speaker.sessions).toEqual({ ready: 1, connecting: 0 });
    expect(emulator.liveConnections).toBe(1);
    const warmRun = lastRunId();

    const events = await speakAll(client);
    const ready = events.find((e) => e.type === 'ready');
    // session.start and session.ready happened before this speak: its run is the warm one.
    expect(ready).toMatchObject({ type: 'ready', run_id: warmRun });
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(2);
    expect(events.at(-1)?.type).toBe('done');

    // A replacement was opened when the session was taken.
    await speaker.ready();
    expect(speaker.sessions.ready).toBe(1);
    const replacementRun = lastRunId();
    expect(replacementRun).toBeGreaterThan(warmRun);

    // Control: with the pool closed, speak is cold and creates its run after subscribing.
    speaker.close();
    const cold = await speakAll(client);
    expect((cold[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).run_id).toBeGreaterThan(replacementRun);
  });

  it('mismatch: other options go cold and leave the warm session waiting', async () => {
    const speaker = client.warmSpeaker(OPTIONS);
    await speaker.ready();
    const warmRun = lastRunId();
    const events = await speakAll(client, { ...OPTIONS, voice_id: 2 });
    expect((events[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).run_id).toBeGreaterThan(warmRun);
    expect(speaker.sessions).toEqual({ ready: 1, connecting: 0 });
    // speaker.speak() uses its own options: warm.
    const warm = await lastValueFrom(of('Hi there.').pipe(speaker.speak(), toArray()));
    expect((warm[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).run_id).toBe(warmRun);
    speaker.close();
  });

  it('idle close (virtual time): a ready session unused for idleTimeoutMs is closed, and the server sees it', async () => {
    const scheduler = new VirtualTimeScheduler();
    const speaker = client.warmSpeaker(OPTIONS, { idleTimeoutMs: 30_000, scheduler });
    await speaker.ready();
    expect(emulator.liveConnections).toBe(1);
    // Control: before the idle time passes, nothing is closed.
    scheduler.maxFrames = 29_999;
    scheduler.flush();
    expect(speaker.sessions.ready).toBe(1);
    scheduler.maxFrames = Number.POSITIVE_INFINITY;
    scheduler.flush();
    expect(speaker.sessions).toEqual({ ready: 0, connecting: 0 });
    await waitFor(() => emulator.liveConnections === 0, 'the server to see the idle session close');
    // Not replaced until used again: the next speak is cold, then the pool refills.
    const before = lastRunId();
    const events = await speakAll(client);
    expect((events[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).run_id).toBeGreaterThan(before);
    speaker.close();
  });

  it('barge-in: unsubscribing a warm speak closes its socket at once, as a cold one', async () => {
    const speaker = client.warmSpeaker(OPTIONS);
    await speaker.ready();
    const warmRun = lastRunId();
    const bargeIn = new Subject<void>();
    const text = new Subject<string>();
    const events: LiveSpeechEvent[] = [];
    await new Promise<void>((resolve) => {
      text.pipe(client.speak(OPTIONS), takeUntil(bargeIn)).subscribe({
        next: (event) => {
          events.push(event);
          if (event.type === 'audio') bargeIn.next();
        },
        complete: resolve,
      });
      text.next('One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen. ');
    });
    expect(events[0]).toMatchObject({ type: 'ready', run_id: warmRun });
    expect(events.filter((e) => e.type === 'audio')).toHaveLength(1);
    // Only the pool's replacement stays open on the server.
    await waitFor(() => speaker.sessions.ready === 1, 'the replacement');
    await waitFor(() => emulator.liveConnections === 1, 'the barged-in session to close');
    speaker.close();
  });

  it('errors behave as cold: credits running out, and a rejected start (the pool drops it, speak meets the error itself)', async () => {
    const poor = createClient({ apiKey: POOR_KEY, baseUrl: emulator.baseUrl });
    try {
      const speaker = poor.warmSpeaker(OPTIONS);
      await speaker.ready();
      expect(speaker.sessions.ready).toBe(1);
      const error = await speakAll(poor).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LiveSessionError);
      expect(error).toMatchObject({ code: 'credits_exhausted', closeCode: 4402 });
      expect((error as LiveSessionError).unspoken).toContain('Hello there.');
      speaker.close();

      // voice 999 does not exist: the service rejects the warm session's start.
      const rejected = poor.warmSpeaker({ ...OPTIONS, voice_id: 999 });
      await rejected.ready();
      expect(rejected.sessions).toEqual({ ready: 0, connecting: 0 });
      const coldError = await speakAll(poor, { ...OPTIONS, voice_id: 999 }).catch((e: unknown) => e);
      expect(coldError).toMatchObject({ code: 'session_rejected', closeCode: 4400 });
      rejected.close();
    } finally {
      await poor.close();
    }
  });

  it('close() closes every session it holds (the server sees them close); client.close() closes its pools', async () => {
    const speaker = client.warmSpeaker(OPTIONS, { sessions: 3 });
    await waitFor(() => speaker.sessions.ready === 3, 'three ready sessions');
    expect(emulator.liveConnections).toBe(3);
    speaker.close();
    await waitFor(() => emulator.liveConnections === 0, 'the server to see the pool close');
    expect(speaker.sessions).toEqual({ ready: 0, connecting: 0 });

    const other = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    const pooled = other.warmSpeaker(OPTIONS, { sessions: 2 });
    await waitFor(() => pooled.sessions.ready === 2, 'two ready sessions');
    await other.close();
    await waitFor(() => emulator.liveConnections === 0, 'the client close to close its pools');
  });

  it('bad options throw at once, before anything is sent', () => {
    const upgrades = emulator.requests.filter((r) => r.method === 'UPGRADE').length;
    expect(() => client.warmSpeaker({ voice_id: -1 })).toThrow(ValidationError);
    expect(() => client.warmSpeaker(OPTIONS, { sessions: 0 })).toThrow(ValidationError);
    expect(() => client.warmSpeaker(OPTIONS, { idleTimeoutMs: -5 })).toThrow(ValidationError);
    expect(emulator.requests.filter((r) => r.method === 'UPGRADE').length).toBe(upgrades);
  });
});
