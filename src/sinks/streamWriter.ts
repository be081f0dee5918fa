/**
 * Writes to a Node Writable with backpressure: when `write()` returns false, the next
 * write waits for 'drain'; a stream error or close rejects the wait.
 */
import type { Writable } from 'node:stream';

export class StreamWriter {
  /** How many times a write waited for 'drain'. */
  drainWaits = 0;
  /** Bytes handed to the stream. */
  bytes = 0;
  private lastFlush: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private readonly onError = (error: Error): void => {
    this.failure ??= error;
  };
  /** How to end each wait in progress (for 'drain', 'finish' or a flush) at once: `cancel`. */
  private readonly waits = new Set<(error: Error) => void>();
  private cancelled: Error | undefined;

  constructor(private readonly stream: Writable) {
    stream.on('error', this.onError);
  }

  /** Write `chunk`; resolves at once, or after 'drain' when the stream's buffer is full. */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.destroyed || this.stream.writableEnded) throw new Error('the stream is closed');
    if (chunk.byteLength === 0) return;
    let accepted = true;
    this.lastFlush = new Promise<void>((resolve, reject) => {
      accepted = this.stream.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
    this.lastFlush.catch(() => undefined);
    this.bytes += chunk.byteLength;
    if (!accepted) {
      this.drainWaits++;
      await this.drain();
    }
  }

  /** Resolves when the last chunk written was handed to the underlying resource. */
  async flush(): Promise<void> {
    await this.cancellable(this.lastFlush);
    if (this.failure) throw this.failure;
  }

  /**
   * End every wait in progress now, with an error, and refuse new ones: an unsubscribe while a
   * stream that stopped reading holds a write (no 'drain' will come) leaves no listener and no
   * pending write behind.
   */
  cancel(): void {
    this.cancelled ??= new Error('the write was cancelled');
    for (const stop of [...this.waits]) stop(this.cancelled);
  }

  /**
   * `end()` the stream and wait for 'finish'. Rejects when the stream errors, or was (or
   * gets) destroyed before it finished: a destroyed stream never emits 'finish' (Node
   * destroys a child's stdin when the child exits).
   */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.stream.writableFinished) return;
    if (this.stream.destroyed) throw new Error('the stream was closed before it finished');
    const finished = this.until('finish', 'the stream was closed before it finished');
    this.stream.end();
    await finished;
  }

  /** Stop listening to the stream (its own listeners stay). */
  detach(): void {
    this.stream.off('error', this.onError);
  }

  /** `promise`, or the cancellation error once `cancel` is called. */
  private cancellable<T>(promise: Promise<T>): Promise<T> {
    if (this.cancelled) return Promise.reject(this.cancelled);
    return new Promise<T>((resolve, reject) => {
      const onCancel = (error: Error): void => {
        this.waits.delete(onCancel);
        reject(error);
      };
      this.waits.add(onCancel);
      promise.then(resolve, reject).finally(() => this.waits.delete(onCancel));
    });
  }

  /** The stream's error, if it had one. */
  get error(): Error | undefined {
    return this.failure;
  }

  private drain(): Promise<void> {
    return this.until('drain', 'the stream closed before it drained');
  }

  /** Resolves at the stream's next `event`; rejects on its error, or on 'close' before it. */
  private until(event: 'drain' | 'finish', closedMessage: string): Promise<void> {
    const stream = this.stream;
    return new Promise<void>((resolve, reject) => {
      if (this.cancelled) return reject(this.cancelled);
      const cleanup = (): void => {
        stream.off(event, onEvent);
        stream.off('error', onError);
        stream.off('close', onClose);
        this.waits.delete(onCancel);
      };
      const onCancel = (error: Error): void => {
        cleanup();
        reject(error);
      };
      this.waits.add(onCancel);
      const onEvent = (): void => {
        cleanup();
        resolve();
      };
      const onError = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const onClose = (): void => {
        cleanup();
        reject(this.failure ?? new Error(closedMessage));
      };
      stream.on(event, onEvent);
      stream.on('error', onError);
      stream.on('close', onClose);
    });
  }
}
