/**
 * The streaming answers of the emulator: `POST /tts-stream` (audio bytes, chunked,
 * sentence by sentence as synthesized) and the deprecated `POST /translation/stream`
 * (server-sent events of pseudo-localized text).
 */
import { routes } from '../core/routes.js';
import { TranslationStreamRequestSchema, TtsStreamRequestSchema } from '../core/schemas.js';
import { canEncode, encodeAudio, missingEncoderHint, encodedSampleRate, mimeTypeOf, type OutputFormat } from '../audio/encode.js';
import { resample } from '../audio/pcm.js';
import { WAV_HEADER_BYTES, wavHeader } from '../audio/wav.js';
import { encodeSseEvent } from '../text/sse-encode.js';
import { compileRoute, invalidAt, parseJsonBody, problem, validate, type CompiledRoute, type Handler } from './http-util.js';
import { sentencesOf } from './http-media.js';
import { accentLetters, pseudoTag } from './pseudo.js';
import { resolveLanguage } from './state.js';
import type { SynthResult } from './types.js';

/** Size field written in a streamed WAV header whose length is not known yet. */
export const STREAMING_WAV_SIZE = 0xffffffff;

/**
 * A trigger for tests: a `/translation/stream` source text containing it makes the
 * stream fail (an `error` event) where the trigger stands.
 */
export const TRANSLATION_FAIL_TRIGGER = '[[fail]]';

/** Content type of raw PCM output, e.g. `audio/pcm;encoding=s16le;rate=22050;channels=1`. */
function contentTypeOf(format: OutputFormat, sampleRate: number): string {
  if (format.startsWith('pcm_')) return `audio/pcm;encoding=${format.slice(4)};rate=${sampleRate};channels=1`;
  return mimeTypeOf(format);
}

/**
 * `POST /tts-stream`. Validation (422) and credit checks (402) happen before any byte
 * is sent; then the first sentence is synthesized, headers go out with
 * `X-Credits-Required` (credits per sentence times the number of sentences), and each
 * sentence's audio is written as its own chunk, charged just before it is synthesized.
 *
 * Formats: `wav` (a streaming header whose RIFF and data sizes are 0xFFFFFFFF, since the
 * total length is not known when the header is sent, followed by 16-bit PCM), every
 * `pcm_*` format, and `mp3` when the optional encoder is installed (one MP3 stream per
 * sentence, concatenated). Others: 422 at `['body', 'output_configuration', 'format']`.
 */
const ttsStream: Handler = async (ctx) => {
  const { state, res, apiKey } = ctx;
  const body = validate(TtsStreamRequestSchema, parseJsonBody(await ctx.body()));
  const voice = state.voice(body.voice_id);
  if (!voice) throw invalidAt(['body', 'voice_id'], `unknown voice_id ${body.voice_id}`);
  const format = body.output_configuration.format;
  if (!canEncode(format)) {
    throw invalidAt(['body', 'output_configuration', 'format'], `output format "${format}" is not supported by the emulator${missingEncoderHint(format)}`);
  }
  const synth = await state.synthesizer();
  const language = resolveLanguage(body.language);
  if (!synth.supportsLanguage(language)) throw invalidAt(['body', 'language'], `language "${language}" is not supported`);
  const sentences = sentencesOf(body.text, language);
  const price = state.options.prices.speechSegment;
  const required = price * sentences.length;
  if (state.credits.balance(apiKey) < required) throw problem(402, 'insufficient credits');

  const requestedRate = body.output_configuration.sample_rate ?? undefined;
  const speakingRate = body.voice_settings?.speaking_rate ?? undefined;
  let aborted = false;
  res.on('close', () => {
    aborted = true;
  });
  const synthesize = (text: string): Promise<SynthResult> => {
    if (!state.credits.charge(apiKey, price)) return Promise.reject(new Error('credits ran out'));
    return synth.synthesize({ text: text.trim(), language, voice, sampleRate: requestedRate, speakingRate, wordTimestamps: false });
  };

  // One sentence of look-ahead: the next sentence synthesizes while this one is written.
  let next: Promise<SynthResult> | undefined = sentences[0] !== undefined ? synthesize(sentences[0]) : undefined;
  next?.catch(() => undefined);
  let rate = 0;
  for (let i = 0; i < sentences.length && next; i++) {
    let result: SynthResult;
    try {
      result = await next;
    } catch (error) {
      if (i === 0) throw problem(500, `synthesis failed: ${(error as Error).message}`);
      res.destroy();
      return;
    }
    const following = sentences[i + 1];
    next = following !== undefined && !aborted && !state.closing ? synthesize(following) : undefined;
    next?.catch(() => undefined);
    if (i === 0) {
      rate = encodedSampleRate(format, requestedRate ?? result.sampleRate);
      res.writeHead(200, {
        'content-type': contentTypeOf(format, rate),
        'x-credits-required': String(required),
        'x-sample-rate': String(rate),
        'cache-control': 'no-store',
      });
      if (format === 'wav') {
        const header = wavHeader({ sampleRate: rate, channels: 1, bitsPerSample: 16, audioFormat: 1 }, 0);
        const view = new DataView(header.buffer);
        view.setUint32(4, STREAMING_WAV_SIZE, true);
        view.setUint32(WAV_HEADER_BYTES - 4, STREAMING_WAV_SIZE, true);
        res.write(header);
      }
    }
    if (aborted || state.closing) break;
    const pcm = format === 'mp3' ? result.pcm : resample(result.pcm, result.sampleRate, rate);
    const bytes = encodeAudio(pcm, format === 'mp3' ? result.sampleRate : rate, format === 'wav' ? 'pcm_s16le' : format);
    res.write(bytes);
    if (i + 1 < sentences.length) await state.delay(state.options.streamDelayMs);
  }
  if (!res.headersSent) {
    // No sentence at all (text of whitespace only cannot pass validation, but be safe).
    res.writeHead(200, { 'content-type': contentTypeOf(format, requestedRate ?? 22050), 'x-credits-required': '0' });
  }
  res.end();
};

/** Pieces of a streamed translation: each word with the whitespace after it. */
export function translationPieces(text: string): string[] {
  return text.match(/\s+|\S+\s*/g) ?? [];
}

/**
 * `POST /translation/stream` (deprecated). Answers `text/event-stream` with header
 * `X-Credits-Required`; each event's `data` is the next piece (a word and the
 * whitespace after it) of the pseudo-localized text, the first piece led by the language
 * tag; then the stream ends. A failure ends the stream with `event: error` whose data is
 * the message: a `taskOutcome` fault for `translation` (or `*`) fails it at once; the
 * trigger {@link TRANSLATION_FAIL_TRIGGER} in the source fails it where it stands.
 */
const translationStream: Handler = async (ctx) => {
  const { state, res, apiKey } = ctx;
  const body = validate(TranslationStreamRequestSchema, parseJsonBody(await ctx.body()));
  const price = state.options.prices.translationStream;
  if (!state.credits.charge(apiKey, price)) throw problem(402, 'insufficient credits');
  const faults = state.faultsFor(apiKey);
  const forced = faults.taskOutcome?.translation ?? faults.taskOutcome?.['*'];

  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-credits-required': String(price),
  });
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  if (forced) {
    res.end(encodeSseEvent({ event: 'error', data: `translation failed (${forced}, fault injection)` }));
    return;
  }
  const failAt = body.text.indexOf(TRANSLATION_FAIL_TRIGGER);
  const source = failAt >= 0 ? body.text.slice(0, failAt) : body.text;
  const pieces = translationPieces(source).map((piece) => accentLetters(piece));
  if (pieces.length > 0) pieces[0] = pseudoTag(body.target_language) + (pieces[0] ?? '');
  for (const [i, piece] of pieces.entries()) {
    if (closed || state.closing) break;
    if (i > 0) await state.delay(state.options.streamDelayMs);
    res.write(encodeSseEvent({ data: piece }));
  }
  if (failAt >= 0 && !closed) {
    res.end(encodeSseEvent({ event: 'error', data: 'translation failed: the source text asked for a failure' }));
    return;
  }
  res.end();
};

/** Routes of the streaming endpoints. */
export function streamRoutes(): Array<CompiledRoute<Handler>> {
  return [
    compileRoute('POST', routes.ttsStream, [], ttsStream),
    compileRoute('POST', routes.translationStream, [], translationStream),
  ];
}
