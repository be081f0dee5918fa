/**
 * The frames a live session of the emulator sends (live.ts): JSON frames, binary audio
 * frames and a segment's frames together, with the key's `dropAfterFrames` fault (the TCP socket is destroyed, no close
 * frame) and back-pressure on the send buffer (a binary frame waits for the socket to
 * drain past {@link SEND_HIGH_WATER_BYTES}). Which frame goes out when is the session's.
 */
import { WebSocket } from 'ws';
import { MAX_AUDIO_FRAME_BYTES } from '../live/protocol.js';
import type { LiveSegment } from './live-synthesis.js';
import type { Faults } from './options.js';

/** Stop sending while this many bytes wait in the socket's buffer. */
export const SEND_HIGH_WATER_BYTES = 1024 * 1024;

/** What the writer asks of its session. */
export interface FrameWriterSession {
  /** False once the session is torn down: nothing more is sent. */
  isLive(): boolean;
  /** The `dropAfterFrames` fault dropped the connection: tear the session down. */
  dropped(): void;
  log(line: string): void;
}

/** Sends one session's frames; each send says whether the frame went out. */
export class LiveFrameWriter {
  private binaryFramesSent = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly faults: Faults,
    private readonly session: FrameWriterSession,
  ) {}

  /** A JSON frame; `faultsApply` is false before `session.ready` (the drop fault waits for the session). */
  json(frame: object, faultsApply: boolean): boolean {
    if (!this.session.isLive() || this.socket.readyState !== WebSocket.OPEN) return false;
    if (faultsApply && this.dropIfDue()) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  /** A binary frame; resolves once the send buffer is below the high-water mark. */
  async binary(chunk: Uint8Array): Promise<boolean> {
    if (!this.session.isLive() || this.socket.readyState !== WebSocket.OPEN) return false;
    if (this.dropIfDue()) return false;
    const flushed = new Promise<void>((resolve) => this.socket.send(chunk, { binary: true }, () => resolve()));
    this.binaryFramesSent++;
    // Backpressure: wait for the socket to flush while too much is buffered.
    if (this.socket.bufferedAmount > SEND_HIGH_WATER_BYTES) await flushed;
    return this.session.isLive();
  }

  /**
   * A ready segment: `segment.start` (with its words when `wordTimestamps`), its audio in
   * binary frames of at most 64 KiB (concatenated: one playable file), `segment.done`.
   */
  async segment(segment: LiveSegment, wordTimestamps: boolean): Promise<boolean> {
    const start: Record<string, unknown> = { type: 'segment.start', segment_id: segment.id, text: segment.text };
    if (wordTimestamps && segment.words) start.word_timestamps = segment.words;
    if (!this.json(start, true)) return false;
    const audio = segment.audio ?? new Uint8Array(0);
    for (let offset = 0; offset < audio.byteLength; offset += MAX_AUDIO_FRAME_BYTES) {
      if (!(await this.binary(audio.subarray(offset, offset + MAX_AUDIO_FRAME_BYTES)))) return false;
    }
    return this.json({ type: 'segment.done', segment_id: segment.id }, true);
  }

  /** A segment synthesis gave up on: `segment.skipped` with its text. */
  skipped(segment: LiveSegment): boolean {
    return this.json({ type: 'segment.skipped', segment_id: segment.id, text: segment.text }, true);
  }

  /** `dropAfterFrames`: once that many binary frames went out, the next frame drops the connection. */
  private dropIfDue(): boolean {
    const limit = this.faults.dropAfterFrames;
    if (limit === undefined || this.binaryFramesSent < limit) return false;
    this.session.log('dropping the connection (fault dropAfterFrames)');
    this.session.dropped();
    this.socket.terminate();
    return true;
  }
}
