import { describe, expect, it, beforeAll } from 'vitest';
import wavefile from 'wavefile';
import { canEncode, encodeAudio, UnsupportedAudioFormatError } from '../../src/audio/encode.js';
import { resample } from '../../src/audio/pcm.js';
import { loadMp3Encoder } from '../../src/audio/mp3.js';
import { parseWavHeader } from '../../src/audio/wav.js';
import { EmulatorOptionsSchema } from '../../src/emulator/options.js';
import { loadSynthesizer } from '../../src/emulator/synth/index.js';
import { espeakModuleStats, groupWords } from '../../src/emulator/synth/espeak.js';
import type { Synthesizer, SynthRequest } from '../../src/emulator/types.js';
import { createSynthPool, type SynthPool } from '../../src/emulator/synth/pool.js';
import type { Voice } from '../../src/core/schemas.js';

const male: Voice = { id: 1, voice_name: 'Alex', gender: 1, age: 35, description: null, language: 'en-us', is_published: true };
const female: Voice = { ...male, id: 4, gender: 2, language: 'fr-fr' };

function request(text: string, extra: Partial<SynthRequest> = {}): SynthRequest {
  return { text, language: 'en-us', voice: male, wordTimestamps: false, ...extra };
}

/** RMS of a stretch of samples (0..32768). */
function rms(pcm: Int16Array, from = 0, to = pcm.length): number {
  let sum = 0;
  const a = Math.max(0, Math.floor(from));
  const b = Math.min(pcm.length, Math.ceil(to));
  for (let i = a; i < b; i++) sum += (pcm[i] ?? 0) ** 2;
  return b > a ? Math.sqrt(sum / (b - a)) : 0;
}

function readWav(bytes: Uint8Array): { rate: number; samples: Float64Array; bits: string } {
  const wav = new wavefile.WaveFile(bytes);
  const fmt = wav.fmt as { sampleRate: number; numChannels: number };
  expect(fmt.numChannels).toBe(1);
  return { rate: fmt.sampleRate, samples: wav.getSamples(false, Float64Array) as unknown as Float64Array, bits: wav.bitDepth };
}

describe('tone synthesizer', () => {
  const options = EmulatorOptionsSchema.parse({ synth: 'tone', toneWordSeconds: 0.25 });
  let tone: Synthesizer;
  beforeAll(async () => {
    tone = await loadSynthesizer('tone', options);
  });

  it('makes one burst of exactly toneWordSeconds per word, no gaps, exact timestamps', async () => {
    const result = await tone.synthesize(request('The  quick brown\nfox jumps.', { wordTimestamps: true }));
    expect(result.sampleRate).toBe(22050);
    expect(result.pcm.length).toBe(Math.round(5 * 0.25 * 22050));
    expect(result.words).toEqual([
      { word: 'The', start: 0, end: 0.25 },
      { word: 'quick', start: 0.25, end: 0.5 },
      { word: 'brown', start: 0.5, end: 0.75 },
      { word: 'fox', start: 0.75, end: 1 },
      { word: 'jumps.', start: 1, end: 1.25 },
    ]);
    // Every word's stretch carries sound.
    for (const w of result.words) {
      expect(rms(result.pcm, w.start * 22050 + 200, w.end * 22050 - 200)).toBeGreaterThan(5000);
    }
  });

  it('is deterministic and honours the sample rate and toneWordSeconds; it speaks the languages the espeak synth speaks, so a language is refused whichever synth runs', async () => {
    const other = await loadSynthesizer('tone', EmulatorOptionsSchema.parse({ synth: 'tone', toneWordSeconds: 0.1 }));
    const a = await other.synthesize(request('one two three', { sampleRate: 16000, language: 'ja-jp' }));
    const b = await other.synthesize(request('one two three', { sampleRate: 16000, language: '42' }));
    expect(a.sampleRate).toBe(16000);
    expect(a.pcm.length).toBe(4800);
    expect(Array.from(a.pcm)).toEqual(Array.from(b.pcm));
    expect(other.supportsLanguage('xx-yy')).toBe(false);
    expect(other.supportsLanguage('7')).toBe(false);
    for (const language of ['en-us', 'de-de', 'ja-jp', 'zh-cn', 'ar-ae']) expect(other.supportsLanguage(language)).toBe(true); // control
    const empty = await other.synthesize(request('   '));
    expect(empty.pcm.length).toBe(0);
    expect(empty.words).toEqual([]);
  });
});

describe('encodeAudio', () => {
  const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);

  it('writes a WAV readable by wavefile', () => {
    const bytes = encodeAudio(pcm, 16000, 'wav');
    expect(bytes.byteLength).toBe(44 + 12);
    const wav = readWav(bytes);
    expect(wav.rate).toBe(16000);
    expect(wav.bits).toBe('16');
    expect(Array.from(wav.samples)).toEqual(Array.from(pcm));
  });

  it('writes every raw PCM sample type and byte order', () => {
    const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const s16le = encodeAudio(pcm, 16000, 'pcm_s16le');
    const s16be = encodeAudio(pcm, 16000, 'pcm_s16be');
    const s32le = encodeAudio(pcm, 16000, 'pcm_s32le');
    const s32be = encodeAudio(pcm, 16000, 'pcm_s32be');
    const f32le = encodeAudio(pcm, 16000, 'pcm_f32le');
    const f32be = encodeAudio(pcm, 16000, 'pcm_f32be');
    pcm.forEach((v, i) => {
      expect(view(s16le).getInt16(i * 2, true)).toBe(v);
      expect(view(s16be).getInt16(i * 2, false)).toBe(v);
      expect(view(s32le).getInt32(i * 4, true)).toBe(v * 65536);
      expect(view(s32be).getInt32(i * 4, false)).toBe(v * 65536);
      expect(view(f32le).getFloat32(i * 4, true)).toBeCloseTo(v / 32768, 6);
      expect(view(f32be).getFloat32(i * 4, false)).toBeCloseTo(v / 32768, 6);
    });
  });

  it('encodes mp3 with the optional encoder, and rejects flac/aac/adts with a typed error', async () => {
    expect(canEncode('mp3')).toBe(false); // not loaded yet
    expect(await loadMp3Encoder()).toBe(true);
    expect(canEncode('mp3')).toBe(true);
    const tone = new Int16Array(22050);
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(Math.sin((2 * Math.PI * 440 * i) / 22050) * 10000);
    const mp3 = encodeAudio(tone, 22050, 'mp3');
    // An MPEG frame sync at the start; about 48 kbit/s for one second.
    expect(mp3[0]).toBe(0xff);
    expect((mp3[1] ?? 0) & 0xe0).toBe(0xe0);
    expect(mp3.byteLength).toBeGreaterThan(4000);
    expect(mp3.byteLength).toBeLessThan(9000);
    for (const format of ['flac', 'aac', 'adts'] as const) {
      expect(canEncode(format)).toBe(false);
      expect(() => encodeAudio(tone, 22050, format)).toThrow(UnsupportedAudioFormatError);
    }
  });

  it('mp3: whole frames back to back, as many as the input needs, the last frames of the encoder (flush) included', async () => {
    expect(await loadMp3Encoder()).toBe(true);
    // Layer III frame headers, ISO/IEC 11172-3 (MPEG-1) and 13818-3 (MPEG-2, 2.5): bit rates (kbit/s)
    // by index, sample rates by version, bytes = 144000 (MPEG-1) or 72000 x kbit/s / rate + padding,
    // 1152 (MPEG-1) or 576 samples a frame
    const KBPS = { 1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320], 2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160] };
    const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };
    const walk = (mp3: Uint8Array) => {
      let at = 0;
      let samples = 0;
      while (at < mp3.length) {
        const [b0, b1, b2] = [mp3[at]!, mp3[at + 1]!, mp3[at + 2]!];
        expect([b0, b1 & 0xe0, (b1 >> 1) & 3]).toEqual([0xff, 0xe0, 1]); // a frame sync, layer III
        const version = (b1 >> 3) & 3;
        const kbps = KBPS[version === 3 ? 1 : 2][b2 >> 4]!;
        const rate = RATES[version]![(b2 >> 2) & 3]!;
        at += Math.floor(((version === 3 ? 144000 : 72000) * kbps) / rate) + ((b2 >> 1) & 1);
        samples += version === 3 ? 1152 : 576;
      }
      expect(at).toBe(mp3.length); // the last frame ends with the bytes
      return samples;
    };
    for (const [rate, seconds] of [
      [44100, 2],
      [22050, 1],
      [8000, 3],
    ] as const) {
      const pcm = Int16Array.from({ length: rate * seconds }, (_, i) => Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 10000));
      const frameSamples = rate >= 32000 ? 1152 : 576;
      const samples = walk(encodeAudio(pcm, rate, 'mp3'));
      // every input sample is in a frame (after the encoder's delay), and at most a few frames more
      expect(samples).toBeGreaterThanOrEqual(pcm.length + 576);
      expect(samples).toBeLessThanOrEqual(pcm.length + 576 + 3 * frameSamples);
    }
  });

  it('resamples linearly to the requested rate', () => {
    const src = new Int16Array(22050).fill(1000);
    const out = resample(src, 22050, 16000);
    expect(out.length).toBe(16000);
    expect(out.every((v) => v === 1000)).toBe(true);
    expect(resample(src, 22050, 22050)).toBe(src);
    const ramp = Int16Array.from([0, 100, 200, 300]);
    expect(Array.from(resample(ramp, 1, 2))).toEqual([0, 50, 100, 150, 200, 250, 300, 300]);
  });
});

describe('espeak synthesizer', () => {
  let espeak: Synthesizer;
  let firstCallMs = 0;
  let secondCallMs = 0;
  // on the event loop (synthThreads: 0): the engine itself, its module stats in this thread
  const options = EmulatorOptionsSchema.parse({ synth: 'espeak', synthThreads: 0 });

  beforeAll(async () => {
    espeak = await loadSynthesizer('espeak', options);
  }, 20_000);

  it('speaks en-us: non-silent, plausible duration, a WAV wavefile reads at 22050 Hz', async () => {
    let t = performance.now();
    const result = await espeak.synthesize(request('Hello world, this is the emulator speaking.'));
    firstCallMs = performance.now() - t;
    expect(result.sampleRate).toBe(22050);
    const seconds = result.pcm.length / result.sampleRate;
    expect(seconds).toBeGreaterThan(1.2);
    expect(seconds).toBeLessThan(5);
    expect(rms(result.pcm)).toBeGreaterThan(500);
    const wav = readWav(encodeAudio(result.pcm, result.sampleRate, 'wav'));
    expect(wav.rate).toBe(22050);
    expect(wav.samples.length).toBe(result.pcm.length);
    t = performance.now();
    await espeak.synthesize(request('Hello world, this is the emulator speaking.'));
    secondCallMs = performance.now() - t;
  }, 20_000);

  it('reuses the compiled module: compiled once per process, each call only instantiates', async () => {
    const again = await loadSynthesizer('espeak', options);
    const t = performance.now();
    await again.synthesize(request('Hello world, this is the emulator speaking.'));
    const thirdCallMs = performance.now() - t;
    const stats = espeakModuleStats();
    // Two loads, three calls: one compilation.
    expect(stats.compiles).toBe(1);
    expect(stats.calls).toBeGreaterThanOrEqual(3);
    // Timing depends on the machine's load, so it is reported rather than asserted
    // tightly; a later call is never dramatically slower than the first one.
    expect(Math.min(secondCallMs, thirdCallMs)).toBeLessThan(firstCallMs * 2 + 250);
    console.info(
      `espeak: compile ${stats.compileMs.toFixed(0)} ms once; ${(stats.callMs / stats.calls).toFixed(0)} ms per call ` +
        `(first ${firstCallMs.toFixed(0)}, then ${secondCallMs.toFixed(0)}, ${thirdCallMs.toFixed(0)})`,
    );
  }, 20_000);

  it('speaks fr-fr with a female variant and honours the requested sample rate', async () => {
    const result = await espeak.synthesize(request('Bonjour tout le monde.', { language: 'fr-fr', voice: female, sampleRate: 16000 }));
    expect(result.sampleRate).toBe(16000);
    const seconds = result.pcm.length / 16000;
    expect(seconds).toBeGreaterThan(0.6);
    expect(seconds).toBeLessThan(4);
    expect(rms(result.pcm)).toBeGreaterThan(500);
    expect(readWav(encodeAudio(result.pcm, 16000, 'wav')).rate).toBe(16000);
  }, 20_000);

  it('speaking_rate changes the duration', async () => {
    const normal = await espeak.synthesize(request('This sentence is spoken at two speeds.'));
    const fast = await espeak.synthesize(request('This sentence is spoken at two speeds.', { speakingRate: 2 }));
    expect(fast.pcm.length).toBeLessThan(normal.pcm.length * 0.75);
  }, 20_000);

  it('supports the mapped locale tags only', () => {
    for (const tag of ['en-us', 'en-gb', 'fr-fr', 'de-de', 'es-es', 'it-it', 'pt-br', 'zh-cn', 'ja-jp']) {
      expect(espeak.supportsLanguage(tag)).toBe(true);
    }
    expect(espeak.supportsLanguage('xx-yy')).toBe(false);
    expect(espeak.supportsLanguage('tlh-qo')).toBe(false);
  });

  it('word timestamps line up with the audio: speech inside each word, quiet between words', async () => {
    const text = 'Stop kicking that cat, please. It is 3.14 degrees — quite cold!';
    const result = await espeak.synthesize(request(text, { wordTimestamps: true }));
    const rate = result.sampleRate;
    expect(result.words.map((w) => w.word)).toEqual(groupWords(text));
    expect(result.words.map((w) => w.word)).toEqual(['Stop', 'kicking', 'that', 'cat,', 'please.', 'It', 'is', '3.14', 'degrees —', 'quite', 'cold!']);
    let previousEnd = 0;
    result.words.forEach((w, i) => {
      expect(w.start).toBeGreaterThanOrEqual(previousEnd);
      expect(w.end).toBeGreaterThan(w.start + 0.05);
      // Speech energy in the word (its first and last 30 ms at least, within 100 ms of the edges).
      expect(rms(result.pcm, w.start * rate, w.end * rate)).toBeGreaterThan(800);
      expect(rms(result.pcm, w.start * rate, (w.start + 0.1) * rate)).toBeGreaterThan(150);
      expect(rms(result.pcm, (w.end - 0.1) * rate, w.end * rate)).toBeGreaterThan(150);
      // Quiet between this word and the next.
      const next = result.words[i + 1];
      if (next) expect(rms(result.pcm, w.end * rate, next.start * rate)).toBeLessThan(100);
      previousEnd = w.end;
    });
    expect(result.pcm.length / rate).toBeCloseTo(result.words.at(-1)?.end ?? 0, 2);
  }, 20_000);

  it('honours the sample rate with word timestamps too', async () => {
    const result = await espeak.synthesize(request('One two three.', { wordTimestamps: true, sampleRate: 44100 }));
    expect(result.sampleRate).toBe(44100);
    expect(result.words).toHaveLength(3);
    for (const w of result.words) expect(rms(result.pcm, w.start * 44100, w.end * 44100)).toBeGreaterThan(800);
  }, 20_000);
});

describe('espeak in worker threads (the default)', () => {
  it('speaks exactly what the in-loop synthesizer speaks, compiles once here, and close() ends every thread', async () => {
    const pooled = await loadSynthesizer('espeak', EmulatorOptionsSchema.parse({ synth: 'espeak', synthThreads: 2 }));
    const inline = await loadSynthesizer('espeak', EmulatorOptionsSchema.parse({ synth: 'espeak', synthThreads: 0 }));
    const pool = pooled as SynthPool;
    expect(pool.threadCount()).toBe(1); // one thread starts at once, the others on demand
    const asked = [request('One two three.', { wordTimestamps: true }), request('Bonjour tout le monde.', { language: 'fr-fr', voice: female, sampleRate: 16000 })];
    const [a, b] = await Promise.all(asked.map((r) => pooled.synthesize(r)));
    expect(pool.threadCount()).toBe(2);
    for (const [i, result] of [a!, b!].entries()) {
      const same = await inline.synthesize(asked[i]!);
      expect(result.sampleRate).toBe(same.sampleRate);
      expect(result.words).toEqual(same.words);
      expect(Buffer.from(result.pcm.buffer, result.pcm.byteOffset, result.pcm.byteLength).equals(Buffer.from(same.pcm.buffer, same.pcm.byteOffset, same.pcm.byteLength))).toBe(true);
    }
    expect(espeakModuleStats().compiles).toBe(1); // the threads got the module compiled here
    expect(pooled.supportsLanguage('fr-fr')).toBe(true);
    expect(pooled.supportsLanguage('xx-yy')).toBe(false);
    await pool.close();
    expect(pool.threadCount()).toBe(0);
    await expect(pooled.synthesize(asked[0]!)).rejects.toThrow(/closed/);
  }, 60_000);
});

describe('synthesis thread pool', () => {
  // A thread that answers with 10 samples, and dies on any text with "crash" in it.
  const entry = {
    eval: true,
    script: `
      const { parentPort } = require('node:worker_threads');
      parentPort.on('message', ({ id, request }) => {
        if (request.text.includes('crash')) process.exit(3);
        if (request.text.includes('fail')) return parentPort.postMessage({ id, error: 'no voice for that' });
        parentPort.postMessage({ id, result: { pcm: new Int16Array(10).fill(request.text.length), sampleRate: 22050, words: [] } });
      });`,
  };
  const pool = (threads: number) => createSynthPool({ name: 'tone', threads, entry, supportsLanguage: () => true });

  it('a dead thread fails only its request; the next one gets a new thread; queued requests keep their order', async () => {
    const p = pool(1);
    const results = await Promise.allSettled([
      p.synthesize(request('one')),
      p.synthesize(request('crash here')),
      p.synthesize(request('three!')),
      p.synthesize(request('fail now')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'the tone synthesis thread stopped (exit code 3)' });
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ message: 'no voice for that' });
    expect(Array.from((results[2] as PromiseFulfilledResult<{ pcm: Int16Array }>).value.pcm)).toEqual(new Array(10).fill(6));
    expect(p.threadCount()).toBe(1);
    await p.close();
    expect(p.threadCount()).toBe(0);
  });

  it('runs at most `threads` at once and close() fails what still waits', async () => {
    const p = pool(2);
    const first = [p.synthesize(request('a')), p.synthesize(request('b')), p.synthesize(request('c'))];
    expect(p.threadCount()).toBe(2);
    const closing = p.close();
    const settled = await Promise.allSettled(first);
    await closing;
    // the queued third request is failed at once; the two in threads end with their threads (or before)
    expect(settled[2]).toMatchObject({ status: 'rejected', reason: { message: 'the tone synthesizer is closed' } });
    expect(p.threadCount()).toBe(0);
  });
});
