/**
 * rxvoice/ai-sdk with the `ai` package's own `generateSpeech` and `transcribe` against
 * the emulator (tone synth, real sockets, port 0): options mapped to the contract's
 * fields (seen by a recording proxy), warnings, headers and credits, the abort signal
 * (the emulator stops charging once the request closes; control: a whole run charges
 * every sentence), the AI SDK's own errors (401, 422, a task ERROR, bad input before
 * sending, a missing key), and the models' types against `@ai-sdk/provider`'s.
 */
import {
  APICallError,
  InvalidArgumentError,
  LoadAPIKeyError,
  LoadSettingError,
  NoSuchModelError,
  type ProviderV3,
  type SpeechModelV3,
  type TranscriptionModelV3,
} from '@ai-sdk/provider';
import { createProviderRegistry, experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { camb, createCamb, type CambProvider } from '../../src/ai-sdk/index.js';
import { loadAiSdkProvider } from '../../src/ai-sdk/errors.js';
import { encodeWav16, parseWavHeader, wavHeader } from '../../src/audio/wav.js';
import { concatBytes } from '../../src/core/bytes.js';
import { createClient } from '../../src/index.js';
import { createServer, type AddressInfo } from 'node:net';
import { AuthenticationError, ConnectionError, RateLimitError, RxVoiceError, TaskFailedError, ValidationError } from '../../src/core/errors.js';
import type { Emulator } from '../../src/emulator/index.js';
import { FAST_POLLING, FAST_RETRY, countingProxy, emulator } from '../client/helpers.js';

// The models are the AI SDK's own types (compile-time checks).
export const speechModelType: SpeechModelV3 = camb.speech();
export const transcriptionModelType: TranscriptionModelV3 = camb.transcription();
export const providerType: ProviderV3 = camb;

let emu: Emulator;
const providers: CambProvider[] = [];

/** A provider on the emulator (or `baseUrl`), closed after the tests. */
function provider(options: Parameters<typeof createCamb>[0] = {}): CambProvider {
  const made = createCamb({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, polling: FAST_POLLING, retry: FAST_RETRY, warn: () => undefined, ...options });
  providers.push(made);
  return made;
}

function sentences(n: number): string {
  return Array.from({ length: n }, (_, i) => `This is sentence number ${i + 1}.`).join(' ');
}

beforeAll(async () => {
  emu = await emulator();
});
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await emu.close();
});

describe('generateSpeech (ai) through camb.speech()', () => {
  it('speaks over /tts-stream: options mapped to the contract, warnings, headers and credits', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const result = await generateSpeech({
        model: camb.speech(),
        text: 'Hello there. How are you today?',
        voice: '1',
        outputFormat: 'wav',
        speed: 1.5,
        language: 'en',
        instructions: 'Speak slowly.',
        headers: { 'x-extra': 'yes' },
        providerOptions: { camb: { sampleRate: 16000, maintainSourceAccent: true, applyEnhancement: true, enhanceNamedEntitiesPronunciation: true } },
      });
      const bytes = result.audio.uint8Array;
      expect(Buffer.from(bytes.subarray(0, 4)).toString('latin1')).toBe('RIFF');
      expect(bytes.byteLength).toBeGreaterThan(1000);
      expect(result.audio.mediaType).toBe('audio/wav');
      // one whole file: the stream's placeholder sizes made true
      expect(parseWavHeader(bytes)).toMatchObject({ sampleRate: 16000, dataOffset: 44, dataBytes: bytes.byteLength - 44 });
      const sent = proxy.seen.filter((r) => r.path === '/tts-stream');
      expect(sent).toHaveLength(1);
      expect(JSON.parse(sent[0]!.body)).toEqual({
        text: 'Hello there. How are you today?',
        voice_id: 1,
        language: 'en-us',
        enhance_named_entities_pronunciation: true,
        output_configuration: { format: 'wav', sample_rate: 16000, apply_enhancement: true },
        voice_settings: { speaking_rate: 1.5, maintain_source_accent: true, enhance_reference_audio_quality: false }, // the client's default
      });
      expect(result.warnings).toEqual([
        { type: 'unsupported', feature: 'instructions' },
        { type: 'unsupported', feature: 'headers', details: 'not sent: x-extra' },
        { type: 'compatibility', feature: 'language', details: '"en" sent as the locale tag en-us' },
      ]);
      expect(result.providerMetadata).toEqual({ camb: { format: 'wav', creditsRequired: 2, sampleRate: 16000 } });
      expect(result.responses[0]?.headers?.['x-credits-required']).toBe('2');
      expect(result.responses[0]?.modelId).toBe('default');
    } finally {
      await proxy.close();
    }
  });

  it('a model id is sent as speech_model; pcm and aac are the service formats pcm_s16le and adts', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl, voice: 1 });
      const result = await generateSpeech({ model: camb.speech('mars-pro'), text: 'Hello there.', outputFormat: 'pcm' });
      const body = JSON.parse(proxy.seen.find((r) => r.path === '/tts-stream')!.body) as Record<string, unknown>;
      expect(body).toMatchObject({ speech_model: 'mars-pro', voice_id: 1, output_configuration: { format: 'pcm_s16le' } });
      expect(result.warnings).toEqual([{ type: 'compatibility', feature: 'outputFormat', details: '"pcm" sent as pcm_s16le' }]);
      expect(result.audio.uint8Array.byteLength % 2).toBe(0);
      expect(result.providerMetadata['camb']?.['format']).toBe('pcm_s16le');
      // a format named in capitals is the service's own
      const upper = await generateSpeech({ model: camb.speech(), text: 'Hello there.', outputFormat: 'WAV' });
      expect([upper.warnings, upper.providerMetadata['camb']?.['format']]).toEqual([[], 'wav']);
    } finally {
      await proxy.close();
    }
  });

  it('the abort signal closes the request mid-stream: the emulator stops charging (control: a whole run charges every sentence)', async () => {
    const slow = await emulator({ streamDelayMs: 150 });
    const camb = createCamb({ apiKey: slow.apiKey, baseUrl: slow.baseUrl, warn: () => undefined });
    try {
      const text = sentences(10);
      const balance = (): number => slow.context.credits.balance(slow.apiKey);
      const start = balance();
      await generateSpeech({ model: camb.speech(), text, voice: '1' });
      expect(start - balance()).toBe(10); // control
      const before = balance();
      const controller = new AbortController();
      const call = generateSpeech({ model: camb.speech(), text, voice: '1', abortSignal: controller.signal });
      // abort once the first sentences are charged (the answer is streaming)
      while (before - balance() < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort();
      const error = await call.catch((e: unknown) => e);
      expect((error as Error).name).toBe('AbortError');
      await new Promise((resolve) => setTimeout(resolve, 800)); // time for 5 more sentences
      expect(before - balance()).toBeLessThanOrEqual(4);
    } finally {
      await camb.close();
      await slow.close();
    }
  });

  it('a wrong key: APICallError 401, not retryable, the key nowhere in it', async () => {
    const key = 'wrong-key-0123456789';
    const camb = provider({ apiKey: key });
    const error = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APICallError);
    const apiError = error as APICallError;
    expect(apiError.statusCode).toBe(401);
    expect(apiError.isRetryable).toBe(false);
    expect(apiError.url).toBe(`${emu.baseUrl}/tts-stream`);
    expect(apiError.cause).toBeInstanceOf(AuthenticationError);
    expect(JSON.stringify({ ...apiError, message: apiError.message })).not.toContain(key);
  });

  it('a forbidden call (403): APICallError 403, not 401, not retryable', async () => {
    const forbidden = await emulator({ faults: { httpErrors: { status: 403, count: 1 } } });
    try {
      const error = await generateSpeech({ model: provider({ baseUrl: forbidden.baseUrl, apiKey: forbidden.apiKey }).speech(), text: 'Hello there.', voice: '1' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APICallError);
      expect([(error as APICallError).statusCode, (error as APICallError).isRetryable]).toEqual([403, false]);
      expect((error as APICallError).cause).toMatchObject({ name: 'AuthenticationError', status: 403 });
    } finally {
      await forbidden.close();
    }
  });

  it('a voice the service refuses: APICallError 422 with the detail, not retryable, sent once', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const error = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '987654' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APICallError);
      const apiError = error as APICallError;
      expect(apiError.statusCode).toBe(422);
      expect(apiError.isRetryable).toBe(false);
      expect(JSON.parse(apiError.responseBody ?? '{}')).toMatchObject({ detail: [{ loc: ['body', 'voice_id'] }] });
      expect(apiError.cause).toBeInstanceOf(ValidationError);
      expect(proxy.seen.filter((r) => r.path === '/tts-stream')).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('bad input is an InvalidArgumentError before anything is sent (control: a good call is seen)', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const bad = [
        { text: 'Hi', voice: '1' }, // shorter than 3 characters
        { text: '   ', voice: '1' }, // only whitespace (3 characters: the service's length rule alone lets it by)
        { text: ' \n\t\u00a0 ', voice: '1' },
        { text: 'Hello there.', voice: 'alloy' },
        { text: 'Hello there.', voice: '1e0' }, // a number, not a voice id
        { text: 'Hello there.', voice: '0x2' },
        { text: 'Hello there.' }, // no voice, and no default
        { text: 'Hello there.', voice: '1', outputFormat: 'ogg' },
        { text: 'Hello there.', voice: '1', speed: 9 },
        { text: 'Hello there.', voice: '1', language: 'xx' },
        { text: 'Hello there.', voice: '1', providerOptions: { camb: { sampleRate: 5 } } },
        { text: 'Hello there.', voice: '1', providerOptions: { camb: { voiceId: 3 } } },
      ];
      for (const call of bad) {
        const error = await generateSpeech({ model: camb.speech(), ...call }).catch((e: unknown) => e);
        expect(error, JSON.stringify(call)).toBeInstanceOf(InvalidArgumentError);
      }
      expect(proxy.seen).toEqual([]);
      await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' });
      expect(proxy.seen.map((r) => r.path)).toEqual(['/tts-stream']);
    } finally {
      await proxy.close();
    }
  });

  it('no key: creating camb and its models does not throw; the first call fails with LoadAPIKeyError (bad address: LoadSettingError)', async () => {
    const keyless = createCamb({ env: {} });
    const model = keyless.speech();
    const noKey = await generateSpeech({ model, text: 'Hello there.', voice: '1' }).catch((e: unknown) => e);
    expect(noKey).toBeInstanceOf(LoadAPIKeyError);
    expect((noKey as Error).message).toContain('CAMB_API_KEY');
    const badAddress = await generateSpeech({
      model: createCamb({ env: { CAMB_API_KEY: 'k-0123456789', CAMB_BASE_URL: 'client.camb.ai/apis' } }).speech(),
      text: 'Hello there.',
      voice: '1',
    }).catch((e: unknown) => e);
    expect(badAddress).toBeInstanceOf(LoadSettingError);
    expect((badAddress as Error).message).toContain('no scheme');
    // the environment variables, read on the first call: CAMB_ first, then RXVOICE_
    for (const env of [
      { CAMB_API_KEY: emu.apiKey, CAMB_BASE_URL: emu.baseUrl, RXVOICE_BASE_URL: 'https://unused.example' },
      { RXVOICE_API_KEY: emu.apiKey, RXVOICE_BASE_URL: emu.baseUrl },
    ]) {
      const fromEnv = createCamb({ env });
      providers.push(fromEnv);
      const { audio } = await generateSpeech({ model: fromEnv.speech(), text: 'Hello there.', voice: '1' });
      expect(audio.uint8Array.byteLength).toBeGreaterThan(44);
    }
  });

  it('options of the wrong type throw a ValidationError from createCamb at once', async () => {
    expect(() => createCamb({ voice: -1 })).toThrow(ValidationError);
    expect(() => createCamb({ language: 'English' })).toThrow(ValidationError);
    expect(() => createCamb({ timeoutMs: -5 })).toThrow(ValidationError);
    // a client given, and client options beside it: which one is meant? (control: the client alone)
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    expect(() => createCamb({ client, apiKey: emu.apiKey })).toThrow(/give either a client or client options \(apiKey\)/);
    expect(() => createCamb({ client, voice: 1, language: 'de-de' })).not.toThrow();
    await client.close();
  });
});

describe("the AI SDK's retry flag: retryable only when the failed call surely cost nothing", () => {
  /** The service answers every request 429 (Retry-After 1 s, honoured at most 1 ms): the client's retries run out. */
  const RATE_LIMITED = { status: 429, count: 1_000_000, retryAfter: 1 };
  /** A provider whose client and the AI SDK retry nothing, so that the first failure is the answer. */
  const noRetries = (target: { baseUrl: string; apiKey: string }, options: Parameters<typeof createCamb>[0] = {}): CambProvider =>
    provider({ baseUrl: target.baseUrl, apiKey: target.apiKey, maxRetries: 0, retry: { ...FAST_RETRY, maxRetryAfterMs: 1 }, ...options });

  it('a rate limit on /tts-stream: APICallError 429 with its Retry-After, retryable (nothing was made), sent once', async () => {
    const limited = await emulator({ faults: { httpErrors: RATE_LIMITED } });
    try {
      const error = await generateSpeech({ model: noRetries(limited).speech(), text: 'Hello there.', voice: '1', maxRetries: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APICallError);
      const apiError = error as APICallError;
      expect([apiError.statusCode, apiError.isRetryable]).toEqual([429, true]);
      expect(apiError.responseHeaders).toEqual({ 'retry-after': '1' });
      expect(apiError.cause).toBeInstanceOf(RateLimitError);
      expect(limited.requests.filter((r) => r.path === '/tts-stream')).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });

  it('a 503 on /tts-stream: APICallError 503, not retryable (the request was sent: it may have been charged; the 429 above is the control)', async () => {
    const unavailable = await emulator({ faults: { httpErrors: { ...RATE_LIMITED, status: 503 } } });
    try {
      const error = await generateSpeech({ model: noRetries(unavailable).speech(), text: 'Hello there.', voice: '1', maxRetries: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APICallError);
      expect([(error as APICallError).statusCode, (error as APICallError).isRetryable]).toEqual([503, false]);
      // what the service answered, for the caller to read
      expect((error as APICallError).data).toMatchObject({ status: 503 });
      expect(JSON.parse((error as APICallError).responseBody!)).toMatchObject({ status: 503 });
    } finally {
      await unavailable.close();
    }
  });

  it('a service that cannot be reached: APICallError, retryable, the ConnectionError as cause', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve())); // nothing listens there now
    const camb = noRetries({ baseUrl: `http://127.0.0.1:${port}`, apiKey: emu.apiKey });
    const error = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1', maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APICallError);
    expect((error as APICallError).isRetryable).toBe(true);
    expect((error as APICallError).cause).toBeInstanceOf(ConnectionError);
  });

  it('a transcription rate limited once its task exists is not retryable (a repeat would pay again); before it, retryable (control)', async () => {
    const wav = encodeWav16(new Int16Array(1600), 16000);
    const limited = await emulator({ taskDurationMs: 60_000 });
    try {
      // before the task: the upload itself is refused
      limited.context.options.faults.httpErrors = RATE_LIMITED;
      const before = await transcribe({ model: noRetries(limited).transcription(), audio: wav, maxRetries: 0 }).catch((e: unknown) => e);
      expect(before).toBeInstanceOf(APICallError);
      expect([(before as APICallError).statusCode, (before as APICallError).isRetryable]).toEqual([429, true]);
      expect((before as APICallError).url).toBe(`${limited.baseUrl}/transcription`);
      // after the task: the upload is answered, then every status call is refused
      delete limited.context.options.faults.httpErrors;
      const limitOnceCreated: typeof fetch = async (input, init) => {
        const answer = await fetch(input, init);
        if (init?.method === 'POST' && String(input).endsWith('/transcription')) limited.context.options.faults.httpErrors = { ...RATE_LIMITED };
        return answer;
      };
      const after = await transcribe({ model: noRetries(limited, { fetch: limitOnceCreated }).transcription(), audio: wav, maxRetries: 0 }).catch((e: unknown) => e);
      expect(after).toBeInstanceOf(APICallError);
      const apiError = after as APICallError;
      expect([apiError.statusCode, apiError.isRetryable]).toEqual([429, false]);
      expect(apiError.url).toMatch(new RegExp(`^${limited.baseUrl}/transcription/.+`));
      expect(limited.requests.filter((r) => r.method === 'POST' && r.path === '/transcription')).toHaveLength(2); // one refused, one made the task
    } finally {
      await limited.close();
    }
  });
});

describe('generateSpeech: language', () => {
  it('a locale tag is sent as it is, lower-cased (an underscore read as a dash), with no warning', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      for (const [language, sent] of [
        ['en-GB', 'en-gb'],
        ['pt_PT', 'pt-pt'],
        ['de-de', 'de-de'],
        ['zh-Hant', 'zh-hant'], // a script of 4 letters
      ]) {
        const before = proxy.seen.length;
        const { warnings } = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1', language });
        expect(warnings, language).toEqual([]);
        const body = JSON.parse(proxy.seen.slice(before).find((r) => r.path === '/tts-stream')!.body) as { language: string };
        expect(body.language).toBe(sent);
      }
    } finally {
      await proxy.close();
    }
  });
});

describe('generateSpeech: language auto', () => {
  it("'auto' sends the provider's language, with a warning (automatic detection is not supported)", async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl, language: 'de-de' });
      const { warnings } = await generateSpeech({ model: camb.speech(), text: 'Hallo.', voice: '1', language: 'auto' });
      expect(warnings).toEqual([{ type: 'unsupported', feature: 'language', details: 'automatic language detection is not supported: sent de-de' }]);
      expect(JSON.parse(proxy.seen.find((r) => r.path === '/tts-stream')!.body)).toMatchObject({ language: 'de-de' });
    } finally {
      await proxy.close();
    }
  });
});

describe('generateSpeech: speakable text (issue 31)', () => {
  const reply = '<think>They want a link.</think>Read **the docs** at https://example.com/docs?a=1, it costs $3.50.';
  it('sends the speakable text by default; providerOptions.camb.speakable sets its options or turns it off (control)', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const texts = async (speakable?: unknown): Promise<string> => {
        const before = proxy.seen.length;
        await generateSpeech({ model: camb.speech(), text: reply, voice: '1', ...(speakable === undefined ? {} : { providerOptions: { camb: { speakable } } as never }) });
        return (JSON.parse(proxy.seen.slice(before).find((r) => r.path === '/tts-stream')!.body) as { text: string }).text;
      };
      expect(await texts()).toBe('Read the docs at example.com, it costs $3.50.');
      expect(await texts({ spokenForm: true, links: 'drop' })).toBe('Read the docs at , it costs three dollars and fifty cents.');
      expect(await texts(false)).toBe(reply);
    } finally {
      await proxy.close();
    }
  });
  it('bad speakable options: InvalidArgumentError before anything is sent', async () => {
    const error = await generateSpeech({ model: provider().speech(), text: 'Hello there.', voice: '1', providerOptions: { camb: { speakable: { links: 'short' } } } }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AI_InvalidArgumentError');
    // spoken forms in a language that has no number words here
    const noWords = await generateSpeech({ model: provider().speech(), text: 'It costs $3.50.', voice: '1', language: 'ja', providerOptions: { camb: { speakable: { spokenForm: true } } } }).catch((e: unknown) => e);
    expect(noWords).toBeInstanceOf(InvalidArgumentError);
    expect((noWords as Error).message).toContain('spokenForm speaks en, de, es and fr');
  });
});

describe('transcribe (ai) through camb.transcription()', () => {
  const wav = encodeWav16(new Int16Array(16000 * 2).map((_, i) => Math.round(8000 * Math.sin(i / 10))), 16000); // 2 s

  it('uploads the audio as a transcription task, polls, and gives segments in seconds, text, language and duration', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const result = await transcribe({ model: camb.transcription(), audio: wav });
      expect(result.text.length).toBeGreaterThan(0);
      expect(result.segments.length).toBeGreaterThan(0);
      for (const segment of result.segments) {
        expect(segment.endSecond).toBeGreaterThan(segment.startSecond);
        expect(result.text).toContain(segment.text.trim());
      }
      expect(result.language).toBe('en');
      expect(result.durationInSeconds).toBeCloseTo(2, 5);
      const meta = result.providerMetadata['camb'] as { taskId: string; runId: number; transcript: Array<{ speaker: string }> };
      expect(meta.transcript).toHaveLength(result.segments.length);
      expect(typeof meta.runId).toBe('number');
      const paths = proxy.seen.map((r) => `${r.method} ${r.path.replace(/^(\/transcription(?:-result)?)\/[^/]+$/, '$1/:id')}`);
      expect(paths[0]).toBe('POST /transcription');
      expect(paths).toContain('GET /transcription/:id');
      expect(paths.at(-1)).toBe('GET /transcription-result/:id');
      expect(proxy.seen[0]!.body).toContain('en-us');
    } finally {
      await proxy.close();
    }
  });

  it('a model id is not sent (the service has one model), with a warning; the duration of a stereo WAV counts both channels', async () => {
    const stereo = concatBytes([wavHeader({ sampleRate: 16000, channels: 2, bitsPerSample: 16, audioFormat: 1 }, 16000 * 4), new Uint8Array(16000 * 4)]); // 1 s
    const result = await transcribe({ model: provider().transcription('whisper-1'), audio: stereo });
    expect(result.warnings).toEqual([{ type: 'unsupported', feature: 'modelId', details: 'the service has one transcription model; "whisper-1" is not sent' }]);
    expect(result.durationInSeconds).toBeCloseTo(1, 5);
  });

  it('a task that ends in ERROR: APICallError, not retryable, the task created once (the AI SDK does not pay twice)', async () => {
    const failing = await emulator({ faults: { taskOutcome: { transcription: 'ERROR' } } });
    const camb = createCamb({ apiKey: failing.apiKey, baseUrl: failing.baseUrl, polling: FAST_POLLING, warn: () => undefined });
    try {
      const error = await transcribe({ model: camb.transcription(), audio: wav, maxRetries: 2 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APICallError);
      const apiError = error as APICallError;
      expect(apiError.isRetryable).toBe(false);
      expect(apiError.cause).toBeInstanceOf(TaskFailedError);
      expect(apiError.data).toMatchObject({ status: 'ERROR' });
      // the service's own words on the failure go along
      const { serviceMessage } = apiError.cause as TaskFailedError;
      expect(serviceMessage).toBeTruthy();
      expect(apiError.data).toMatchObject({ message: serviceMessage });
      expect(apiError.url).toMatch(new RegExp(`^${failing.baseUrl}/transcription/.+`));
      expect(failing.requests.filter((r) => r.method === 'POST' && r.path === '/transcription')).toHaveLength(1);
    } finally {
      await camb.close();
      await failing.close();
    }
  });

  it('the abort signal while the task runs: AbortError, and the polling stops (control: it was polling)', async () => {
    const slow = await emulator({ taskDurationMs: 60_000 });
    try {
      const camb = provider({ baseUrl: slow.baseUrl, apiKey: slow.apiKey });
      const polls = (): number => slow.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/transcription/')).length;
      const controller = new AbortController();
      const call = transcribe({ model: camb.transcription(), audio: wav, abortSignal: controller.signal }).catch((e: unknown) => e);
      while (polls() < 3) await new Promise((resolve) => setTimeout(resolve, 5)); // control: polling every 5 to 20 ms
      controller.abort();
      expect(((await call) as Error).name).toBe('AbortError');
      const after = polls();
      await new Promise((resolve) => setTimeout(resolve, 200)); // time for 10 more polls
      expect(polls()).toBe(after);
    } finally {
      await slow.close();
    }
  });

  it('audio of a type the service does not take: InvalidArgumentError, nothing sent', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const camb = provider({ baseUrl: proxy.baseUrl });
      const ogg = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
      const error = await transcribe({ model: camb.transcription(), audio: ogg }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(proxy.seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('the provider', () => {
  it('fits createProviderRegistry; language, embedding and image models are NoSuchModelError', async () => {
    const registry = createProviderRegistry({ camb: provider() });
    const { audio } = await generateSpeech({ model: registry.speechModel('camb:default'), text: 'Hello there.', voice: '1' });
    expect(audio.uint8Array.byteLength).toBeGreaterThan(44);
    // after a call (the module loaded): the very class the user imports
    expect(() => registry.languageModel('camb:gpt')).toThrow(NoSuchModelError);
    expect(() => camb.embeddingModel('e')).toThrow(NoSuchModelError);
    expect(() => camb.imageModel('i')).toThrow(NoSuchModelError);
  });

  it('close() closes the client it made; a call after it makes a new one (the closed one fails every call)', async () => {
    const camb = provider();
    await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' });
    await camb.close();
    const { audio } = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' });
    expect(audio.uint8Array.byteLength).toBeGreaterThan(44);
  });

  it('a missing @ai-sdk/provider is an error naming the package (control: the real one loads)', async () => {
    await expect(loadAiSdkProvider()).resolves.toHaveProperty('APICallError');
    const error = await loadAiSdkProvider('@ai-sdk/provider-not-installed').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RxVoiceError);
    expect((error as Error).message).toContain('npm install ai @ai-sdk/provider-not-installed');
  });
});
