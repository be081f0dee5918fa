/**
 * The frames a live session of the emulator sends (live.ts): JSON frames and binary audio
 * frames, with the key's `dropAfterFrames` fault (the TCP socket is destroyed, no close
 * frame) and back-pressure on the send buffer (a binary frame waits for the socket to
 * drain past {@link SEND_HIGH_WATER_BYTES}). Which frame goes out when is the session's.
 */
import { WebSocket } from 'ws';
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
