import type { OperatorFunction } from 'rxjs';
import { wavHeader, wavHeaderBytes, type PcmFormat } from '../audio/wav.js';
import { patchWavSizes, pcmSeconds } from '../audio/pcm.js';
import { checkWritablePath, type AtomicFile } from './atomicFile.js';
import { checkOptions } from '../core/validation.js';
import { WavFileOptionsSchema } from './options.js';
import { toSinkError } from './errors.js';
import { PcmAssembler, type PcmSinkInput } from './inputs.js';
import { openPendingFile } from './pendingFile.js';
import { sinkOperator } from './runSink.js';

/** Options of `toWavFile`. */
export interface WavFileOptions {
  /**
   * Format of the file. Default: the format of the first segment or chunk. Used as is
   * for an empty stream (default then 22050 Hz, mono, 16-bit, espeak-ng's native rate).
   */
  format?: PcmFormat;
  /** fsync the file and its directory before completing. Default true. */
  fsync?: boolean;
  /** File mode of the new file (before umask). Default 0o666. */
  mode?: number;
}

/**
 * Emitted after each write. `segments` counts the inputs written so far (one write may
 * carry several inputs that queued up meanwhile), `bytes` the PCM bytes, `seconds` the audio.
 */
export interface WavFileWriteProgress {
  type: 'progress';
  segments: number;
  bytes: number;
  seconds: number;
}

/** Emitted once, last, when the file is complete under its final name. */
export interface WavFileDone {
  type: 'done';
  /** Absolute path of the file written. */
  path: string;
  /** Segments and chunks written. */
  segments: number;
  /** PCM bytes in the data chunk. */
  bytes: number;
  /** Size of the whole file. */
  fileBytes: number;
  seconds: number;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Bytes dropped because they did not make a whole sample frame (odd byte counts). */
  droppedBytes: number;
}

/** What `toWavFile` emits: `progress` per write, then `done`. */
export type WavFileProgress = WavFileWriteProgress | WavFileDone;

/** For an empty stream with no `format` option. */
const DEFAULT_EMPTY_FORMAT: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };

/**
 * Writes spoken segments (or raw PCM chunks) into one WAV file, and completes only
 * when the file is complete, closed and under its final name.
 *
 * <span class="informal">Each segment's own WAV container is taken apart: one header,
 * then the PCM of every segment, then the sizes patched in.</span>
 *
 * The file is written under a temporary name in the same directory
 * (`.<name>.<random>.tmp`): a header with placeholder sizes (44 bytes; 58 for float), then the PCM of each
 * input, each write awaited in order (memory stays flat: nothing is accumulated), then
 * the RIFF and data sizes are patched at offsets 4 and 40, the file is fsync'd and
 * closed, and renamed onto `path`. On error or unsubscribe the temporary file is
 * removed: no half-written file ever exists under `path`.
 *
 * ```
 * segments:  --s1----s2----s3--|
 * toWavFile: --p-----p-----p----(d|)      p: progress, d: done (after rename)
 * ```
 *
 * Inputs: `SpokenSegment` in WAV (by `format === 'wav'`, or sniffed when `format` is
 * unknown) or `{ pcm, format }` chunks. The first input fixes the format; an input in
 * another format errors with `SinkError` (reason `'format_mismatch'`): nothing is
 * resampled. A segment in mp3/flac/aac errors with reason `'unsupported_format'`
 * pointing to `toFile`. A segment whose declared data size is a streaming placeholder
 * (or past its end) contributes the bytes actually present; a trailing partial sample
 * frame of a segment is dropped (of a chunk: carried into the next chunk), and counted
 * in `droppedBytes`.
 *
 * On complete: emits `{ type: 'done', ... }` then completes. On error (source or I/O):
 * removes the temporary file, then errors (I/O failures as `SinkError`, reason `'io'`).
 *
 * ## Example
 * ```ts
 * const done = await lastValueFrom(
 *   text$.pipe(client.speak({ voice_id: 1 }), concatSegments(), toWavFile('out.wav'), filter((p) => p.type === 'done')),
 * );
 * console.log(`${done.seconds.toFixed(1)} s written to ${done.path}`);
 * ```
 *
 * @param path Where the WAV file ends up.
 * @param options Format for empty streams, fsync, file mode.
 * @return An Observable of write progress, ending with `done`.
 * @throws {ValidationError} At once, for bad options (nothing is opened or written).
 */
export function toWavFile(path: string, options: WavFileOptions = {}): OperatorFunction<PcmSinkInput, WavFileProgress> {
  checkOptions(WavFileOptionsSchema, { ...options, path }, 'toWavFile');
  return sinkOperator<PcmSinkInput, WavFileProgress>(() => {
    // Before the source is subscribed (nothing upstream starts, or is paid for, when
    // the file cannot be written): throws SinkError.
    checkWritablePath(path);
    const assembler = new PcmAssembler('toWavFile', options.format);
    const pending = openPendingFile('toWavFile', path, options.mode);
    let headerWritten = false;
    let dataBytes = 0;
    let segments = 0;

    const writeHeader = async (target: AtomicFile, format: PcmFormat): Promise<void> => {
      if (headerWritten) return;
      // Placeholder sizes (0): patched before closing.
      await target.append([wavHeader(format, 0)]);
      headerWritten = true;
    };

    const writeAll = async (inputs: readonly PcmSinkInput[]): Promise<WavFileWriteProgress> => {
      const pieces = inputs.flatMap((input) => assembler.push(input));
      const format = assembler.format as PcmFormat;
      const target = await pending.ready();
      try {
        await writeHeader(target, format);
        dataBytes += await target.append(pieces);
      } catch (error) {
        throw toSinkError(error, `toWavFile could not write ${target.temporaryPath}`);
      }
      segments += inputs.length;
      return { type: 'progress', segments, bytes: dataBytes, seconds: pcmSeconds(dataBytes, format) };
    };

    return {
      write: (input) => writeAll([input]),
      writeMany: writeAll,
      async finish() {
        assembler.end();
        const format = assembler.format ?? DEFAULT_EMPTY_FORMAT;
        const target = await pending.ready();
        try {
          await writeHeader(target, format);
          if (dataBytes % 2 === 1) await target.append([new Uint8Array(1)]); // RIFF pad byte
          // the header again, its sizes (RIFF, data; a float header's frames) now known
          await target.writeAt(patchWavSizes(wavHeader(format, 0), dataBytes), 0);
          await target.commit({ fsync: options.fsync ?? true });
        } catch (error) {
          throw toSinkError(error, `toWavFile could not finish ${target.path}`);
        }
        return {
          type: 'done',
          path: target.path,
          segments,
          bytes: dataBytes,
          fileBytes: wavHeaderBytes(format) + dataBytes + (dataBytes % 2),
          seconds: pcmSeconds(dataBytes, format),
          sampleRate: format.sampleRate,
          channels: format.channels,
          bitsPerSample: format.bitsPerSample,
          droppedBytes: assembler.droppedBytes,
        };
      },
      abort: () => pending.abort(),
    };
  });
}
