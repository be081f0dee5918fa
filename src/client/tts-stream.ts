/**
 * POST /tts-stream as an Observable of typed audio chunks. For `pcm_*` formats the
 * chunks are realigned to whole samples: the odd bytes of a chunk are carried into the
 * next one. If the answer ends in the middle of a sample, the whole samples are still
 * emitted and the Observable then errors with a `ProtocolError` (the audio was
 * truncated). Unsubscribing aborts the request.
 */
import { Observable, defer, switchMap } from 'rxjs';
import { ProtocolError } from '../core/errors.js';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import { TtsStreamRequestSchema, type TtsStreamFormat, type TtsStreamRequest } from '../core/schemas.js';
import { headerNumber, lazily, streamedBody, warnNumericLanguage } from './shared.js';

/** One piece of streamed speech. */
export interface TtsStreamChunk {
  /** Output format asked for (`wav`, `mp3`, `pcm_s16le`, ...). */
  format: TtsStreamFormat;
  /** Sample rate, from the `X-Sample-Rate` answer header or the request; undefined when neither says. */
  sampleRate: number | undefined;
  /** Credits the request costs, from the `X-Credits-Required` answer header. */
  creditsRequired: number | undefined;
  /** Audio bytes; for `pcm_*` formats always whole samples. */
  bytes: Uint8Array;
  /** 0-based position of this chunk in the stream. */
  index: number;
}

/** Bytes per (mono) sample of a PCM format, or undefined for container formats. */
export function pcmSampleBytes(format: TtsStreamFormat): number | undefined {
  if (!format.startsWith('pcm_')) return undefined;
  return format.includes('16') ? 2 : 4;
}

/** A pure realigner: `feed` returns whole samples, keeping the remainder for the next call. */
export interface PcmAligner {
  /** The whole samples of `chunk` plus the bytes held from before; a partial sample at its end is held for the next chunk. */
  feed(chunk: Uint8Array): Uint8Array;
  /** Bytes of a partial sample left over (0 when the stream ended on a sample boundary). */
  pending(): number;
}

/**
 * Realigns raw PCM chunks (which a network may split anywhere) on whole samples.
 *
 * @param sampleBytes Bytes of one sample frame (e.g. 2 for `pcm_s16le` mono, 4 for `pcm_f32le`).
 * @returns An aligner: `feed` each chunk in order, `pending()` at the end tells the bytes left over.
 */
export function createPcmAligner(sampleBytes: number): PcmAligner {
  let carry = new Uint8Array(0);
  return {
    feed(chunk) {
      let data = chunk;
      if (carry.byteLength > 0) {
        data = new Uint8Array(carry.byteLength + chunk.byteLength);
        data.set(carry, 0);
        data.set(chunk, carry.byteLength);
      }
      const whole = data.byteLength - (data.byteLength % sampleBytes);
      carry = data.slice(whole);
      return data.subarray(0, whole);
    },
    pending: () => carry.byteLength,
  };
}

/** Options of `ttsStream`: the abort `signal`, and `onHeaders`. */
export interface TtsStreamOptions extends CallOptions {
  /** Called once with the answer's headers (lower-case names), before the first chunk. */
  onHeaders?: (headers: Record<string, string>) => void;
}

/** Stream speech (POST /tts-stream). Validated locally before sending. */
export function ttsStream(transport: HttpTransport, request: TtsStreamRequest, options: TtsStreamOptions = {}): Observable<TtsStreamChunk> {
  const endpoint = `POST ${routes.ttsStream}`;
  return lazily(() => {
    const body = transport.validate(TtsStreamRequestSchema, request, endpoint);
    warnNumericLanguage(transport, body as Record<string, unknown>);
    const format = body.output_configuration.format;
    const sampleBytes = pcmSampleBytes(format);
    return transport.exchange(
      { method: 'POST', path: routes.ttsStream, json: body, kind: 'creation', endpoint, stream: true, accept: '*/*', signal: options.signal },
      (response) => {
        const chunks = new Observable<TtsStreamChunk>((subscriber) => {
          const sampleRate = headerNumber(response, 'x-sample-rate') ?? body.output_configuration.sample_rate ?? undefined;
          const creditsRequired = headerNumber(response, 'x-credits-required');
          options.onHeaders?.(Object.fromEntries(response.headers));
          const aligner = sampleBytes ? createPcmAligner(sampleBytes) : undefined;
          let index = 0;
          return streamedBody(transport, response, endpoint, () => '').subscribe({
            next(value) {
              const bytes = aligner ? aligner.feed(value) : value;
              if (bytes.byteLength === 0) return;
              subscriber.next({ format, sampleRate, creditsRequired, bytes, index: index++ });
            },
            error: (error: unknown) => subscriber.error(error),
            complete() {
              if (aligner && aligner.pending() > 0) {
                subscriber.error(
                  new ProtocolError(`${endpoint}: the audio ended in the middle of a ${sampleBytes}-byte sample (${aligner.pending()} bytes left over)`),
                );
                return;
              }
              subscriber.complete();
            },
          });
        });
        // a 200 JSON answer where audio is expected is the service's message, not audio
        return defer(() => transport.refuseJson({ endpoint }, response)).pipe(switchMap(() => chunks));
      },
    );
  });
}
