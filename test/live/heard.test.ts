import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { heardText, HeardTracker, speak, ValidationError, type LiveSpeechEvent } from '../../src/live/index.js';
import { concatSegments } from '../../src/operators/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { encodeWav16 } from '../../src/audio/wav.js';

const RATE = 1000;

/** Events of a session whose segments are given as words with [start, end] seconds and a length. */
function session(segments: Array<{ text: string; seconds: number; words?: Array<[number, number]> }>): LiveSpeechEvent[] {
  const events: LiveSpeechEvent[] = [{ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'wav' } }];
  segments.forEach((segment, segment_id) => {
    const tokens = segment.text.match(/\S+/g) ?? [];
    const word_timestamps = segment.words?.map(([start, end], i) => ({ word: tokens[i]!, start, end }));
    events.push({ type: 'segmentStart', segment_id, text: segment.text, ...(word_timestamps ? { word_timestamps } : {}) });
    const wav = encodeWav16(new Int16Array(Math.round(segment.seconds * RATE)), RATE);
    // split the file across frames, the header too
    for (let at = 0; at < wav.byteLength; at += 37) events.push({ type: 'audio', segment_id, bytes: wav.subarray(at, at + 37) });
    events.push({ type: 'segmentDone', segment_id });
  });
  events.push({ type: 'done' });
  return events;
}

const TWO = session([
  { text: 'Hello there, friend.', seconds: 1.5, words: [[0, 0.4], [0.45, 0.9], [0.95, 1.4]] },
  { text: ' How are you?', seconds: 1, words: [[0, 0.3], [0.35, 0.6], [0.65, 0.95]] },
]);

describe('heardText', () => {
  it('cuts after the last word whose audio ended, with word timestamps', () => {
    expect(heardText(TWO, 0)).toEqual({ heard: '', unheard: 'Hello there, friend. How are you?', playedSeconds: 0, complete: false, method: 'timestamps' });
    expect(heardText(TWO, 0.89).heard).toBe('Hello');
    expect(heardText(TWO, 0.9).heard).toBe('Hello there,');
    expect(heardText(TWO, 1.45)).toMatchObject({ heard: 'Hello there, friend.', unheard: ' How are you?' });
    expect(heardText(TWO, 1.5 + 0.6)).toMatchObject({ heard: 'Hello there, friend. How are', unheard: ' you?', complete: false });
    expect(heardText(TWO, 2.5)).toMatchObject({ heard: 'Hello there, friend. How are you?', unheard: '', complete: true });
    expect(heardText(TWO, 99).complete).toBe(true);
  });

  it('estimates from the audio length and the characters without timestamps, and says so', () => {
    const events = session([{ text: 'aaaa bbbb cccc dddd', seconds: 2 }]);
    expect(heardText(events, 0.9)).toMatchObject({ heard: 'aaaa', method: 'estimated' }); // 'aaaa' ends at 4/19 of 2 s
    expect(heardText(events, 1.1).heard).toBe('aaaa bbbb'); // 9/19 of 2 s = 0.95 s
    expect(heardText(events, 1.99).heard).toBe('aaaa bbbb cccc');
    expect(heardText(events, 2)).toMatchObject({ heard: 'aaaa bbbb cccc dddd', complete: true });
  });

  it('reads spoken segments (concatSegments) as well as events', async () => {
    const segments = await lastValueFrom(from(TWO).pipe(concatSegments(), toArray()));
    for (const t of [0, 0.5, 0.9, 1.6, 2.2, 3]) expect(heardText(segments, t)).toEqual(heardText(TWO, t));
  });

  it('does not count twice the text of a segment a reconnect cut short', () => {
    const events: LiveSpeechEvent[] = [
      { type: 'segmentStart', segment_id: 0, text: 'One two.' },
      { type: 'audio', segment_id: 0, bytes: encodeWav16(new Int16Array(500), RATE) },
      { type: 'reconnected', attempt: 1, session_id: 't', run_id: 2, resent: 'One two.' },
      { type: 'segmentStart', segment_id: 0, text: 'One two.' },
      { type: 'audio', segment_id: 0, bytes: encodeWav16(new Int16Array(1000), RATE) },
      { type: 'segmentDone', segment_id: 0 },
    ];
    expect(heardText(events, 1.5)).toMatchObject({ heard: 'One two.', unheard: '', complete: true });
    // control: the abandoned half second is on the timeline, so at 0.5 s nothing of the new segment is heard
    expect(heardText(events, 0.5)).toMatchObject({ heard: '', unheard: 'One two.' });
  });

  /** One segment's events: its text, then `wav` in one frame. */
  const segmentOf = (segment_id: number, text: string, wav: Uint8Array): LiveSpeechEvent[] => [
    { type: 'segmentStart', segment_id, text },
    { type: 'audio', segment_id, bytes: wav },
    { type: 'segmentDone', segment_id },
  ];
  const wavOf = (seconds: number): Uint8Array => encodeWav16(new Int16Array(Math.round(seconds * RATE)), RATE);

  it('a segment with no audio (an empty WAV) does not hold back the segments played after it', () => {
    const events = [...segmentOf(0, 'One.', wavOf(1)), ...segmentOf(1, ' ...', wavOf(0)), ...segmentOf(2, ' Two.', wavOf(1))];
    expect(heardText(events, 0)).toMatchObject({ heard: '', complete: false });
    expect(heardText(events, 0.5)).toMatchObject({ heard: '' });
    expect(heardText(events, 1)).toMatchObject({ heard: 'One. ... ', unheard: 'Two.' });
    expect(heardText(events, 2)).toMatchObject({ heard: 'One. ... Two.', unheard: '', complete: true });
    expect(heardText(events, 5).complete).toBe(true);
    // first in the session: nothing is heard before anything played, then it is
    const first = [...segmentOf(0, '...', wavOf(0)), ...segmentOf(1, ' One.', wavOf(1))];
    expect(heardText(first, 0)).toMatchObject({ heard: '', unheard: '... One.' });
    expect(heardText(first, 0.5)).toMatchObject({ heard: '... ', unheard: 'One.' });
    // control: the same session with the middle segment given audio is cut inside it
    const control = [...segmentOf(0, 'One.', wavOf(1)), ...segmentOf(1, ' ...', wavOf(1)), ...segmentOf(2, ' Two.', wavOf(1))];
    expect(heardText(control, 1.5)).toMatchObject({ heard: 'One. ', unheard: '... Two.' });
  });

  it("a WAV's length is its data chunk's declared size, not bytes after it; with the size unknown (streamed), the bytes after the header", () => {
    // a chunk after the data (`LIST`, 2,000 bytes = 1 s more at 1 kHz 16-bit) is not audio
    const list = new Uint8Array(8 + 2000);
    list.set([0x4c, 0x49, 0x53, 0x54, 0xd0, 0x07, 0, 0]); // 'LIST', 2000 little-endian
    const withList = new Uint8Array([...wavOf(1), ...list]);
    const events = [...segmentOf(0, 'One two.', withList), ...segmentOf(1, ' Three.', wavOf(1))];
    expect(heardText(events, 1)).toMatchObject({ heard: 'One two. ', unheard: 'Three.' });
    expect(heardText(events, 2).complete).toBe(true);
    // a streamed WAV declares its data size as 0xFFFFFFFF: the bytes after the 44-byte header
    // are the audio (1 s), the header itself is not (it would make the segment 22 ms longer)
    const streamed = wavOf(1);
    new DataView(streamed.buffer, streamed.byteOffset).setUint32(40, 0xffffffff, true);
    const live = [...segmentOf(0, 'One two.', streamed), ...segmentOf(1, ' Three.', wavOf(1))];
    expect(heardText(live, 1)).toMatchObject({ heard: 'One two. ', unheard: 'Three.' });
    expect(heardText(live, 2).complete).toBe(true);
  });

  it('word timestamps that split the words otherwise than the text are mapped by their characters', () => {
    // the service timed 'fri' and 'end.' apart: after 'fri' ended, 'friend.' is not heard yet
    const events: LiveSpeechEvent[] = [
      { type: 'segmentStart', segment_id: 0, text: 'Hello there, friend.', word_timestamps: [
        { word: 'Hello', start: 0, end: 0.4 }, { word: 'there,', start: 0.45, end: 0.9 }, { word: 'fri', start: 0.95, end: 1.1 }, { word: 'end.', start: 1.1, end: 1.4 },
      ] },
      ...segmentOf(0, '', wavOf(1.5)).slice(1),
    ];
    expect(heardText(events, 1.15)).toMatchObject({ heard: 'Hello there,', unheard: ' friend.', method: 'timestamps' });
    expect(heardText(events, 1.45).heard).toBe('Hello there, friend.');
  });

  it("a cut before a segment's first word keeps its leading space on the heard side; a segment of spaces alone needs no timestamps", () => {
    expect(heardText(TWO, 1.6)).toMatchObject({ heard: 'Hello there, friend. ', unheard: 'How are you?' });
    const withSpaces: LiveSpeechEvent[] = [...TWO.slice(0, -1), ...segmentOf(2, '  ', wavOf(0.2)), { type: 'done' }];
    expect(heardText(withSpaces, 2.6).method).toBe('timestamps');
    // control: a segment with words and no timestamps makes the cut an estimate
    const withWords: LiveSpeechEvent[] = [...TWO.slice(0, -1), ...segmentOf(2, ' Bye.', wavOf(0.2)), { type: 'done' }];
    expect(heardText(withWords, 2.6).method).toBe('estimated');
  });

  it('text written without spaces is cut between its words: by the service timestamps, or estimated (control: a spaced text is cut at its spaces as before)', () => {
    const chinese: LiveSpeechEvent[] = [
      { type: 'segmentStart', segment_id: 0, text: '你好世界。', word_timestamps: [
        { word: '你', start: 0, end: 0.25 }, { word: '好', start: 0.25, end: 0.5 }, { word: '世', start: 0.5, end: 0.75 }, { word: '界。', start: 0.75, end: 1 },
      ] },
      ...segmentOf(0, '', wavOf(1)).slice(1),
    ];
    expect(heardText(chinese, 0.5)).toMatchObject({ heard: '你好', unheard: '世界。', method: 'timestamps' });
    expect(heardText(chinese, 0.3).heard).toBe(''); // `你` alone is half a word
    expect(heardText(chinese, 1).heard).toBe('你好世界。');
    // Japanese, no timestamps: about half of 2 s of audio is some of its words, never a word cut
    const japanese = session([{ text: '今日はいい天気ですね。明日も晴れるでしょう。', seconds: 2 }]);
    const half = heardText(japanese, 1);
    expect(half.method).toBe('estimated');
    expect(half.heard.length).toBeGreaterThan(0);
    expect(half.unheard.length).toBeGreaterThan(0);
    expect(half.heard + half.unheard).toBe('今日はいい天気ですね。明日も晴れるでしょう。');
    expect([...new Intl.Segmenter('ja', { granularity: 'word' }).segment(half.heard + half.unheard)].map((p) => p.index)).toContain(half.heard.length);
    // control: a spaced text's words are its runs of non-space
    expect(heardText(session([{ text: 'Hello there friend.', seconds: 1.5 }]), 1).heard).toBe('Hello there');
  });

  it('nothing played: nothing heard, not even the spaces before the first word (control: a later segment keeps its leading space)', () => {
    const spaced = session([{ text: '  Hello there.', seconds: 1, words: [[0, 0.4], [0.45, 0.9]] }]);
    expect(heardText(spaced, 0)).toMatchObject({ heard: '', unheard: '  Hello there.' });
    expect(heardText(spaced, 0.45).heard).toBe('  Hello');
    expect(heardText(TWO, 1.6).heard).toBe('Hello there, friend. ');
  });

  it('rejects a played time that is not a number of seconds from 0', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => heardText(TWO, bad)).toThrow(ValidationError);
  });

  it('at any cut point: heard + unheard is the text, the cut is at a word boundary, and it only grows', () => {
    const segmentArb = fc
      .array(fc.stringMatching(/^[a-zA-Z,.!?']{1,9}$/), { minLength: 1, maxLength: 6 })
      .chain((words) =>
        fc.record({
          words: fc.constant(words),
          gaps: fc.array(fc.double({ min: 0.01, max: 0.5, noNaN: true }), { minLength: words.length * 2 + 1, maxLength: words.length * 2 + 1 }),
          timestamps: fc.boolean(),
          lead: fc.constantFrom('', ' ', '\n'),
        }),
      );
    fc.assert(
      fc.property(fc.array(segmentArb, { minLength: 1, maxLength: 4 }), fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { minLength: 2, maxLength: 8 }), (specs, cuts) => {
        const built = specs.map((spec, i) => {
          let t = 0;
          const words: Array<[number, number]> = spec.words.map((_, w) => {
            const start = (t += spec.gaps[2 * w]!);
            const end = (t += spec.gaps[2 * w + 1]!);
            return [start, end];
          });
          const seconds = t + spec.gaps[spec.gaps.length - 1]!;
          return { text: (i > 0 ? spec.lead || ' ' : '') + spec.words.join(' '), seconds, ...(spec.timestamps ? { words } : {}) };
        });
        const events = session(built);
        const text = built.map((b) => b.text).join('');
        let previous = '';
        for (const t of [...cuts].sort((a, b) => a - b)) {
          const report = heardText(events, t);
          expect(report.heard + report.unheard).toBe(text);
          expect(report.heard.startsWith(previous)).toBe(true);
          expect(report.unheard === '' || report.heard === '' || /\s$/.test(report.heard) || /^\s/.test(report.unheard)).toBe(true);
          expect(report.complete).toBe(report.unheard === '');
          previous = report.heard;
          // with timestamps everywhere, heard words are exactly the words that ended by t
          if (built.every((b) => b.words)) {
            let offset = 0;
            let ended = 0;
            for (const b of built) {
              ended += b.words!.filter(([, end]) => offset + end <= t + 1e-6).length;
              offset += Math.round(b.seconds * RATE) / RATE;
            }
            expect(report.method).toBe('timestamps');
            expect((report.heard.match(/\S+/g) ?? []).length).toBe(ended);
          }
        }
        const total = built.reduce((sum, b) => sum + Math.round(b.seconds * RATE) / RATE, 0);
        expect(heardText(events, total).complete).toBe(true);
      }),
    );
  });

  it('is incremental: a tracker fed event by event agrees with heardText at every step', () => {
    const tracker = new HeardTracker();
    TWO.forEach((event, i) => {
      tracker.push(event);
      expect(tracker.report(1.2)).toEqual(heardText(TWO.slice(0, i + 1), 1.2));
    });
    expect(tracker.totalSeconds).toBeCloseTo(2.5, 9);
    expect(tracker.text).toBe('Hello there, friend. How are you?');
  });
});

describe('HeardTracker: segment lengths', () => {
  const segmentOf = (segment_id: number, text: string, bytes: Uint8Array, word_timestamps?: Array<{ word: string; start: number; end: number }>): LiveSpeechEvent[] => [
    { type: 'segmentStart', segment_id, text, ...(word_timestamps ? { word_timestamps } : {}) },
    { type: 'audio', segment_id, bytes },
    { type: 'segmentDone', segment_id },
  ];
  const wavOf = (seconds: number): Uint8Array => encodeWav16(new Int16Array(Math.round(seconds * RATE)), RATE);
  /** A reconnect cut segment 0 after 0.5 s of audio; the new session spoke it again (1 s). */
  const respoken = (): HeardTracker => {
    const tracker = new HeardTracker();
    tracker.push({ type: 'segmentStart', segment_id: 0, text: 'One two.' });
    tracker.push({ type: 'audio', segment_id: 0, bytes: wavOf(0.5) });
    tracker.push({ type: 'reconnected', attempt: 1, session_id: 't', run_id: 2, resent: 'One two.' });
    for (const event of segmentOf(0, 'One two.', wavOf(1))) tracker.push(event);
    return tracker;
  };

  it('setDuration sets the latest segment with that id only, and ignores a negative length', () => {
    const tracker = respoken();
    expect(tracker.totalSeconds).toBeCloseTo(1.5, 9);
    tracker.setDuration(0, 2);
    expect(tracker.totalSeconds).toBeCloseTo(0.5 + 2, 9);
    tracker.setDuration(0, -1);
    tracker.setDuration(0, Number.NaN);
    expect(tracker.totalSeconds).toBeCloseTo(0.5 + 2, 9);
    // control: a length from 0 is taken
    tracker.setDuration(0, 0);
    expect(tracker.totalSeconds).toBeCloseTo(0.5, 9);
  });

  it("audio of another segment than the one arriving does not lengthen it", () => {
    const tracker = new HeardTracker();
    tracker.push({ type: 'segmentStart', segment_id: 0, text: 'One.' });
    const wav = wavOf(1);
    tracker.push({ type: 'audio', segment_id: 0, bytes: wav.subarray(0, 44) });
    tracker.push({ type: 'audio', segment_id: 7, bytes: wav.subarray(44) });
    expect(tracker.totalSeconds).toBe(0);
    // control: the same bytes for segment 0 are its audio
    tracker.push({ type: 'audio', segment_id: 0, bytes: wav.subarray(44) });
    expect(tracker.totalSeconds).toBeCloseTo(1, 9);
  });

  it('a WAV still arriving is as long as its bytes so far, not its declared size', () => {
    const wav = wavOf(2);
    const tracker = new HeardTracker();
    tracker.push({ type: 'segmentStart', segment_id: 0, text: 'aaaa bbbb' });
    tracker.push({ type: 'audio', segment_id: 0, bytes: wav.subarray(0, 44 + 2000) });
    expect(tracker.totalSeconds).toBeCloseTo(1, 9);
    expect(tracker.report(0.6).heard).toBe('aaaa'); // 'aaaa' ends at 4/9 of the 1 s so far
  });

  it('compressed audio with word timestamps lasts until its last word ends', () => {
    const mp3ish = new Uint8Array([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0]);
    const words = 'Hello there, my good old friend.'.split(' ').map((word, i) => ({ word, start: i / 6, end: (i + 1) / 6 }));
    const events = [...segmentOf(0, words.map((w) => w.word).join(' '), mp3ish, words), ...segmentOf(1, ' Bye.', mp3ish, [{ word: 'Bye.', start: 0, end: 0.2 }])];
    expect(heardText(events, 1.1)).toMatchObject({ heard: 'Hello there, my good old friend. ', unheard: 'Bye.', method: 'timestamps' });
    expect(heardText(events, 1.2)).toMatchObject({ heard: 'Hello there, my good old friend. Bye.', complete: true });
  });

  it('segments whose lengths add up with a rounding error are heard whole at their sum', () => {
    // 0.1 + 0.2 is 0.30000000000000004: at 0.3 s both were played, the trailing space too
    const events = [...segmentOf(0, 'One.', wavOf(0.1)), ...segmentOf(1, ' Two. ', wavOf(0.2))];
    expect(heardText(events, 0.3)).toMatchObject({ heard: 'One. Two. ', unheard: '', complete: true });
    // control: a little earlier the second segment is cut after its word, before the space
    expect(heardText(events, 0.25)).toMatchObject({ heard: 'One. ', unheard: 'Two. ' });
  });

  it('nothing is heard before anything played, even a word timed to end at 0', () => {
    const events = segmentOf(0, 'Oh. Yes.', wavOf(1), [{ word: 'Oh.', start: 0, end: 0 }, { word: 'Yes.', start: 0.1, end: 0.5 }]);
    expect(heardText(events, 0)).toMatchObject({ heard: '', unheard: 'Oh. Yes.' });
    // control: a moment later the word is heard
    expect(heardText(events, 0.01).heard).toBe('Oh.');
  });
});

describe('heardText on espeak audio from the emulator', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(() => emulator.close());

  const texts: Record<string, string> = {
    'en-us': 'The quick brown fox jumps over the lazy dog. It was a sunny afternoon in the park.',
    'de-de': 'Der schnelle braune Fuchs springt über den faulen Hund. Es war ein sonniger Nachmittag.',
    'fr-fr': 'Le renard brun rapide saute par-dessus le chien paresseux. Il faisait beau cet après-midi.',
  };

  it.each(Object.entries(texts))('the estimate stays within two words of the timestamps (%s)', async (language, text) => {
    const events = await lastValueFrom(
      from([text]).pipe(speak({ wsUrl: emulator.wsUrl, apiKey: emulator.apiKey }, { voice_id: 1, language, word_timestamps: true, output_format: 'wav' }), toArray()),
    );
    const stripped = events.map((e) => (e.type === 'segmentStart' ? { type: e.type, segment_id: e.segment_id, text: e.text } : e));
    const total = new HeardTracker();
    events.forEach((e) => total.push(e));
    let worst = 0;
    for (let t = 0; t <= total.totalSeconds; t += 0.1) {
      const exact = heardText(events, t);
      const estimate = heardText(stripped, t);
      expect(exact.method).toBe('timestamps');
      expect(estimate.method).toBe('estimated');
      expect(estimate.heard + estimate.unheard).toBe(exact.heard + exact.unheard);
      worst = Math.max(worst, Math.abs(words(exact.heard) - words(estimate.heard)));
    }
    expect(worst).toBeLessThanOrEqual(2); // measured: at most 1 (bench/heard-accuracy.ts)
  });
});

function words(text: string): number {
  return (text.match(/\S+/g) ?? []).length;
}
