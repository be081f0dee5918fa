import type { OperatorFunction } from 'rxjs';
import type { SpokenSegment } from '../live/events.js';
import { checkWritablePath, type AtomicFile } from './atomicFile.js';
import { checkOptions } from '../core/validation.js';
import { FileOptionsSchema } from './options.js';
import { SinkError, toSinkError } from './errors.js';
import { isSpokenSegment, segmentIsWav } from './inputs.js';
import { stripId3v1, stripId3v2 } from './id3.js';
import { openPendingFile } from './pendingFile.js';
import { sinkOperator } from './runSink.js';

/** Options of `toFile`. */
export interface FileOptions {
  /** fsync the file and its directory before completing. Default true. */
  fsync?: boolean;
  /** File mode of the new file (before umask). Default 0o666. */
  mode?: number;
  /**
   * Join segments into one stream by format (default true): for mp3 and aac, drop the
   * ID3v2 tag at the start of every segment after the first and any ID3v1 tag at the end
   * of a segment; for flac, drop the `fLaC` marker and metadata of every segment after
   * the first and fix the first STREAMINFO (total samples summed, MD5 and frame sizes
   * set to "unknown"). With false, bytes are written exactly as they come.
   */
  join?: boolean;
}

/** Emitted by `toFile` after each write: values and bytes written so far. */
export interface FileWriteProgress {
  type: 'progress';
  segments: number;
  bytes: number;
}

/** Emitted by `toFile` once, last, when the file is complete under its final name. */
export interface FileDone {
  type: 'done';
  /** Absolute path of the file written. */
  path: string;
  segments: number;
  bytes: number;
  /** Format of the segments (from `SpokenSegment.format`), undefined for raw bytes. */
  format: string | undefined;
}

/** What `toFile` emits: `progress` per write, then `done`. */
export type FileProgress = FileWriteProgress | FileDone;

/** What `toFile` takes: segments in a compressed format, or raw bytes. */
export type FileSinkInput = SpokenSegment | Uint8Array;

/**
 * Writes the audio of segments (mp3, flac, aac) or raw byte chunks into one file, by
 * frame concatenation, and completes only when the file is complete under its name.
 *
 * <span class="informal">Like `toWavFile`, for everything that is not WAV.</span>
 *
 * Atomic like `toWavFile`: written to `.<name>.<random>.tmp` in the same directory,
 * each write awaited in order, fsync'd, closed and renamed onto `path` on complete;
 * removed on error or unsubscribe.
 *
 * Segments are joined as described for `options.join`: mp3 and ADTS aac frames are
 * self-contained, so the frames of every segment follow one another; tags that would
 * land mid-stream are dropped. A Xing/Info frame at the start of a later mp3 segment
 * stays (decoders play it as a few ms of silence). Segments in WAV error with
 * `SinkError` (reason `'unsupported_format'`) pointing to `toWavFile`; segments whose
 * format differs from the first error with reason `'format_mismatch'`.
 *
 * ```
 * segments: --s1----s2--|
 * toFile:   --p-----p----(d|)
 * ```
 *
 * ## Example
 * ```ts
 * await lastValueFrom(text$.pipe(client.speak({ voice_id: 1, output_format: 'mp3' }), concatSegments(), toFile('out.mp3')));
 * ```
 *
 * @param path Where the file ends up.
 * @param options fsync, file mode, joining.
 * @return An Observable of write progress, ending with `done`.
 * @throws {ValidationError} At once, for bad options (nothing is opened or written).
 */
export function toFile(path: string, options: FileOptions = {}): OperatorFunction<FileSinkInput, FileProgress> {
  checkOptions(FileOptionsSchema, { ...options, path }, 'toFile');
  const join = options.join ?? true;
  return sinkOperator<FileSinkInput, FileProgress>(() => {
    // Before the source is subscribed: throws SinkError when the file cannot be written.
    checkWritablePath(path);
    const pending = openPendingFile('toFile', path, options.mode);
    let segments = 0;
    let bytes = 0;
    let format: string | undefined;
    let sawSegment = false;
    let flac: FlacJoin | undefined;

    const piecesOf = (input: FileSinkInput, fileOffset: number): Uint8Array => {
      if (input instanceof Uint8Array) return input;
      if (!isSpokenSegment(input)) throw new SinkError('invalid_audio', 'toFile takes SpokenSegment or Uint8Array values');
      if (segmentIsWav(input)) {
        throw new SinkError(
          'unsupported_format',
          `toFile does not join WAV files (segment ${input.segment_id}); use toWavFile() to write one WAV file`,
        );
      }
      const first = !sawSegment;
      if (first) {
        format = input.format;
        sawSegment = true;
      } else if (input.format !== format) {
        throw new SinkError(
          'format_mismatch',
          `toFile: segment ${input.segment_id} is ${input.format ?? 'of unknown format'} but the file is ${format ?? 'of unknown format'}`,
        );
      }
      let audio = input.audio;
      if (!join) return audio;
      if (format === 'mp3' || format === 'aac') {
        if (!first) audio = stripId3v2(audio);
        audio = stripId3v1(audio);
      } else if (format === 'flac') {
        if (first) flac = FlacJoin.fromFirst(audio, fileOffset);
        else audio = flac ? flac.next(audio, input.segment_id) : audio;
      }
      return audio;
    };

    const writeAll = async (inputs: readonly FileSinkInput[]): Promise<FileWriteProgress> => {
      let offset = bytes;
      const pieces = inputs.map((input) => {
        const piece = piecesOf(input, offset);
        offset += piece.byteLength;
        return piece;
      });
      const target = await pending.ready();
      try {
        bytes += await target.append(pieces);
      } catch (error) {
        throw toSinkError(error, `toFile could not write ${target.temporaryPath}`);
      }
      segments += inputs.length;
      return { type: 'progress', segments, bytes };
    };

    return {
      write: (input) => writeAll([input]),
      writeMany: writeAll,
      async finish() {
        const target = await pending.ready();
        try {
          if (flac) await flac.patch(target);
          await target.commit({ fsync: options.fsync ?? true });
        } catch (error) {
          throw toSinkError(error, `toFile could not finish ${target.path}`);
        }
        return { type: 'done', path: target.path, segments, bytes, format };
      },
      abort: () => pending.abort(),
    };
  });
}

/** Joins FLAC files: later files lose their header, the first STREAMINFO is fixed at the end. */
class FlacJoin {
  private totalSamples: bigint | undefined;
  private constructor(
    private readonly streamInfoOffset: number,
    private readonly layout: string,
    /** Byte 13 of the first STREAMINFO body (bits per sample, top bits of the total). */
    private readonly byte13: number,
    samples: bigint,
  ) {
    this.totalSamples = samples === 0n ? undefined : samples;
  }

  static fromFirst(audio: Uint8Array, fileOffset: number): FlacJoin | undefined {
    const info = readStreamInfo(audio);
    if (!info) return undefined;
    return new FlacJoin(fileOffset + 8, info.layout, audio[8 + 13] ?? 0, info.totalSamples);
  }

  next(audio: Uint8Array, segmentId: number): Uint8Array {
    const info = readStreamInfo(audio);
    if (!info) return audio;
    if (info.layout !== this.layout) {
      throw new SinkError('format_mismatch', `toFile: FLAC segment ${segmentId} is ${info.layout}, the file is ${this.layout}`);
    }
    if (this.totalSamples !== undefined) this.totalSamples = info.totalSamples === 0n ? undefined : this.totalSamples + info.totalSamples;
    return audio.subarray(info.framesOffset);
  }

  /** Rewrite STREAMINFO: frame sizes and MD5 unknown (0), total samples summed (0 if any was unknown). */
  async patch(file: AtomicFile): Promise<void> {
    const zeros = new Uint8Array(6);
    await file.writeAt(zeros, this.streamInfoOffset + 4); // min/max frame size: unknown
    const total = this.totalSamples ?? 0n;
    const buffer = new Uint8Array(1);
    // Byte 13 keeps its high nibble (bits per sample) and gets the top 4 bits of the total.
    buffer[0] = (this.byte13 & 0xf0) | Number((total >> 32n) & 0x0fn);
    await file.writeAt(buffer, this.streamInfoOffset + 13);
    const low = new Uint8Array(4);
    new DataView(low.buffer).setUint32(0, Number(total & 0xffffffffn), false);
    await file.writeAt(low, this.streamInfoOffset + 14);
    await file.writeAt(new Uint8Array(16), this.streamInfoOffset + 18); // MD5: unknown
  }
}

interface StreamInfo {
  /** `rate/channels/bits`, to compare segments. */
  layout: string;
  totalSamples: bigint;
  /** Offset of the first audio frame (after every metadata block). */
  framesOffset: number;
}

function readStreamInfo(audio: Uint8Array): StreamInfo | undefined {
  if (audio.byteLength < 42 || audio[0] !== 0x66 || audio[1] !== 0x4c || audio[2] !== 0x61 || audio[3] !== 0x43) return undefined;
  if (((audio[4] ?? 0) & 0x7f) !== 0) return undefined; // STREAMINFO must come first
  const body = 8;
  const b = (i: number): number => audio[body + i] ?? 0;
  const sampleRate = (b(10) << 12) | (b(11) << 4) | (b(12) >> 4);
  const channels = ((b(12) >> 1) & 0x07) + 1;
  const bits = (((b(12) & 0x01) << 4) | (b(13) >> 4)) + 1;
  const totalSamples = (BigInt(b(13) & 0x0f) << 32n) | BigInt(((b(14) << 24) >>> 0) + (b(15) << 16) + (b(16) << 8) + b(17));
  let offset = 4;
  for (;;) {
    if (offset + 4 > audio.byteLength) return undefined;
    const header = audio[offset] ?? 0;
    const length = ((audio[offset + 1] ?? 0) << 16) | ((audio[offset + 2] ?? 0) << 8) | (audio[offset + 3] ?? 0);
    offset += 4 + length;
    if (header & 0x80) break;
  }
  return { layout: `${sampleRate} Hz/${channels} ch/${bits}-bit`, totalSamples, framesOffset: offset };
}
