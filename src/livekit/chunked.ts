/**
 * `TTS.synthesize(text)`: one text over `POST /tts-stream` as raw PCM (`pcm_s16le` at the
 * TTS's sample rate), cut into LiveKit `AudioFrame`s as the bytes arrive.
 */
import { shortuuid, tts } from '@livekit/agents';
import { from, concatMap, type Subscription } from 'rxjs';
import { speakableString } from '../client/speakable.js';
import { createSentenceSegmenter } from '../text/sentences.js';
import { isAbort, toLiveKitError } from './errors.js';
import { PcmFrameCutter } from './frame-cutter.js';
import type { APIConnectOptions, AudioFrame, LiveKitAgents } from './peer.js';
import type { StreamSettings } from './settings.js';

/** Longest text of one `/tts-stream` request (the contract's limit). */
export const MAX_REQUEST_CHARS = 3000;

/**
 * A text as the texts of its requests, each at most `max` characters: whole sentences
 * packed together, a sentence longer than `max` cut at its last space before the limit.
 */
export function requestTexts(text: string, locale: string | undefined, max = MAX_REQUEST_CHARS): string[] {
  if (text.length <= max) return [text];
  const segmenter = createSentenceSegmenter(locale === undefined ? {} : { locale });
  const pieces: string[] = [];
  let piece = '';
  for (const sentence of [...segmenter.feed(text), ...segmenter.end()]) {
    let rest = sentence;
    // The whitespace before a sentence ends the piece before it, where it fits: a cut inside
    // it would leave a piece of whitespace alone (and the sentences run together).
    const gap = leadingSpace(rest);
    if (piece !== '' && piece.length + gap <= max) {
      piece += rest.slice(0, gap);
      rest = rest.slice(gap);
    }
    if (piece !== '' && piece.length + rest.length > max) {
      pieces.push(piece);
      piece = '';
    }
    while (rest.length > max) {
      const space = rest.lastIndexOf(' ', max - 1);
      const cut = space >= leadingSpace(rest) ? space + 1 : max;
      pieces.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    piece += rest;
  }
  if (piece !== '') pieces.push(piece);
  return pieces.filter((p) => p.trim() !== '');
}

const leadingSpace = (text: string): number => text.length - text.trimStart().length;

const Base: LiveKitAgents['tts']['ChunkedStream'] = tts.ChunkedStream;

/** The audio of one text, as LiveKit's `ChunkedStream` (see `TTS.synthesize`). */
export class ChunkedStream extends Base {
  label = 'rxvoice.ChunkedStream';
  readonly #settings: StreamSettings;
  readonly #owner: InstanceType<LiveKitAgents['tts']['TTS']>;

  constructor(owner: InstanceType<LiveKitAgents['tts']['TTS']>, settings: StreamSettings, text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal) {
    super(text, owner, connOptions, abortSignal);
    this.#settings = settings;
    this.#owner = owner;
  }

  /**
   * Reports a failure on the TTS's `error` event as LiveKit's own streams do (not
   * recoverable), and ends the stream. LiveKit's `ChunkedStream` leaves an error thrown by
   * `run()` unhandled (a process-level unhandled rejection) after reporting it, so it is
   * thrown only when nobody listens to `error` (then it is LiveKit's own behaviour).
   */
  #fail(error: Error): void {
    if (this.#owner.listenerCount('error') === 0) throw error;
    this.#owner.emit('error', { type: 'tts_error', timestamp: Date.now(), label: this.#owner.label, error, recoverable: false });
  }

  protected async run(): Promise<void> {
    if (this.abortSignal.aborted) return;
    const { client, speak, sampleRate, frameSamples, locale } = this.#settings;
    const requestId = shortuuid();
    const bytes = new PcmFrameCutter(sampleRate, frameSamples); // LiveKit's AudioByteStream, without its copies
    let last: AudioFrame | undefined;
    const put = (frame: AudioFrame, final: boolean): void => this.queue.put({ requestId, segmentId: requestId, frame, final });
    const take = (frames: AudioFrame[]): void => {
      for (const frame of frames) {
        if (last) put(last, false);
        last = frame;
      }
    };
    const settings = speak.speaking_rate == null ? {} : { voice_settings: { speaking_rate: speak.speaking_rate } };
    const { speakable } = speak;
    const language = typeof speak.language === 'string' ? { language: speak.language } : {};
    const input = speakable ? await speakableString(this.inputText, speakable === true ? language : { ...language, ...speakable }) : this.inputText;
    if (this.abortSignal.aborted || input.trim() === '') return; // nothing to hear (only thoughts, say)
    const requests = requestTexts(input, locale).map((text) => ({
      text,
      voice_id: speak.voice_id,
      language: speak.language ?? 'en-us',
      output_configuration: { format: 'pcm_s16le' as const, sample_rate: sampleRate },
      ...settings,
    }));
    let subscription: Subscription | undefined;
    const stop = (): void => subscription?.unsubscribe();
    this.abortSignal.addEventListener('abort', stop, { once: true });
    try {
      await new Promise<void>((resolve, reject) => {
        subscription = from(requests)
          .pipe(concatMap((request) => client.ttsStream(request, { signal: this.abortSignal })))
          .subscribe({
            next: (chunk) => {
              if (chunk.sampleRate !== undefined && chunk.sampleRate !== sampleRate) {
                stop();
                reject(new Error(`/tts-stream answered ${chunk.sampleRate} Hz audio, ${sampleRate} Hz was asked for`));
                return;
              }
              take(bytes.write(chunk.bytes));
            },
            error: reject,
            complete: resolve,
          });
        this.abortSignal.addEventListener('abort', () => resolve(), { once: true });
      });
    } catch (error) {
      if (this.abortSignal.aborted || isAbort(error)) return;
      this.#fail(toLiveKitError(error));
      return;
    } finally {
      this.abortSignal.removeEventListener('abort', stop);
    }
    if (this.abortSignal.aborted) return;
    take(bytes.flush());
    if (last) put(last, true);
  }
}
