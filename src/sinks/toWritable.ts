import type { Writable } from 'node:stream';
import type { OperatorFunction } from 'rxjs';
import type { PcmFormat } from '../audio/wav.js';
import { pcmSeconds, streamingWavHeader } from '../audio/pcm.js';
import { SinkError, toSinkError } from './errors.js';
import { isPcmChunk, isSpokenSegment, PcmAssembler, type PcmSinkInput } from './inputs.js';
import { sinkOperator } from './runSink.js';
import { checkOptions } from '../core/validation.js';
import { WritableOptionsSchema } from './options.js';
import { StreamWriter } from './streamWriter.js';

/** Options of `toWritable`. */
export interface WritableOptions {
  /**
   * Write one WAV stream: a header with streaming sizes (0xFFFFFFFF) first, then the PCM
   * of every WAV segment and PCM chunk, unwrapped (as `toAudioDevice` does). Default
   * false: segments' audio bytes and chunks' PCM are written as they come.
   */
  unwrapWav?: boolean;
  /** `end()` the stream after the last write and wait for 'finish'. Default false. */
  end?: boolean;
  /** `destroy()` the stream on unsubscribe or source error. Default false: it stays open. */
  destroyOnUnsubscribe?: boolean;
}

/** Emitted by `toWritable` after each value was written (and, when the stream asked, drained). */
export interface WritableWriteProgress {
  type: 'progress';
  /** Values written. */
  segments: number;
  /** Bytes handed to the stream. */
  bytes: number;
  /** Times a write waited for 'drain'. */
  drainWaits: number;
}

/** Emitted by `toWritable` once, last, after the last write was flushed (and the stream ended, with `end`). */
export interface WritableDone {
  type: 'done';
  segments: number;
  bytes: number;
  drainWaits: number;
  /** Seconds of PCM written, with `unwrapWav`. */
  seconds: number | undefined;
}

/** What `toWritable` emits: `progress` per value, then `done`. */
export type WritableProgress = WritableWriteProgress | WritableDone;

/** What `toWritable` takes: segments, PCM chunks, or raw bytes. */
export type WritableSinkInput = PcmSinkInput | Uint8Array;

/**
 * Writes segment audio, PCM chunks or raw bytes to any Node Writable, in order and with
 * backpressure.
 *
 * <span class="informal">When `write()` returns false, nothing more is written until
 * 'drain'.</span>
 *
 * Completes after the last write was flushed (its write callback ran), and with
 * `end: true` after `end()` and 'finish'. Errors (`SinkError`, reason `'writable'`) when
 * the stream errors or closes. Unsubscribing stops writing; the stream stays open
 * unless `destroyOnUnsubscribe`.
 *
 * ```
 * segments:   --s1--s2--|
 * toWritable: --p---p----(d|)
 * ```
 *
 * ## Example
 * ```ts
 * segments$.pipe(toWritable(process.stdout, { unwrapWav: true })).subscribe();
 * ```
 *
 * @param stream Where to write.
 * @param options WAV unwrapping, end, destroy.
 * @return An Observable of write progress, ending with `done`.
 * @throws {ValidationError} At once, for bad options (nothing is opened or written).
 */
export function toWritable(stream: Writable, options: WritableOptions = {}): OperatorFunction<WritableSinkInput, WritableProgress> {
  checkOptions(WritableOptionsSchema, { ...options, stream }, 'toWritable');
  return sinkOperator<WritableSinkInput, WritableProgress>((fail) => {
    const writer = new StreamWriter(stream);
    const assembler = new PcmAssembler('toWritable');
    let format: PcmFormat | undefined;
    let pcmBytes = 0;
    let segments = 0;
    // The stream failing between writes fails the output too.
    const onError = (error: Error): void => fail(toSinkError(error, 'toWritable: the stream failed', 'writable'));
    stream.on('error', onError);

    const piecesOf = (value: WritableSinkInput): Uint8Array[] => {
      if (value instanceof Uint8Array) return [value];
      if (options.unwrapWav) {
        const pieces = assembler.push(value);
        for (const piece of pieces) pcmBytes += piece.byteLength;
        if (!format && assembler.format) {
          format = assembler.format;
          pieces.unshift(streamingWavHeader(format));
        }
        return pieces;
      }
      if (isPcmChunk(value)) return [value.pcm];
      if (isSpokenSegment(value)) return [value.audio];
      throw new SinkError('invalid_audio', 'toWritable takes SpokenSegment, { pcm, format } or Uint8Array values');
    };

    const detach = (): void => {
      stream.off('error', onError);
      writer.detach();
    };

    return {
      async write(value) {
        const pieces = piecesOf(value);
        try {
          for (const piece of pieces) await writer.write(piece);
        } catch (error) {
          throw toSinkError(error, 'toWritable: the stream failed', 'writable');
        }
        segments++;
        return { type: 'progress', segments, bytes: writer.bytes, drainWaits: writer.drainWaits };
      },
      async finish() {
        assembler.end();
        try {
          await writer.flush();
          if (options.end) await writer.end();
        } catch (error) {
          throw toSinkError(error, 'toWritable: the stream failed', 'writable');
        } finally {
          detach();
        }
        return {
          type: 'done',
          segments,
          bytes: writer.bytes,
          drainWaits: writer.drainWaits,
          seconds: format ? pcmSeconds(pcmBytes, format) : undefined,
        };
      },
      interrupt() {
        // a write waiting for a 'drain' that may never come (a reader that stopped) ends now
        writer.cancel();
        if (options.destroyOnUnsubscribe && !stream.destroyed) stream.destroy();
      },
      async abort() {
        detach();
      },
    };
  });
}
