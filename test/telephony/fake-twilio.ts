/** A fake Twilio Media Streams peer for tests: a real WebSocket client. */
import { WebSocket } from 'ws';

/** Twilio's `start` message of a test call. */
export const START = {
  event: 'start',
  sequenceNumber: '1',
  streamSid: 'MZ0001',
  start: {
    streamSid: 'MZ0001',
    accountSid: 'AC0001',
    callSid: 'CA0001',
    tracks: ['inbound'],
    customParameters: { who: 'test' },
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  },
};

/**
 * A fake Media Streams peer (Twilio's side): plays what it receives at real time (a buffer
 * that drains 20 ms per frame), echoes each mark when the audio before it has played, and
 * records, in bytes of audio received, where each mark and the clear came.
 */
export class FakeTwilio {
  readonly socket: WebSocket;
  bytes = 0;
  marks: Array<{ name: string; at: number }> = [];
  clearAt: number | undefined;
  mediaAfterClear = 0;
  closed: Promise<void>;
  private playedUntil = 0;
  private onBytes: Array<{ at: number; run: () => void }> = [];

  constructor(address: string) {
    this.socket = new WebSocket(address);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.socket.on('message', (data) => this.receive(JSON.parse(String(data)) as { event: string; media?: { payload: string }; mark?: { name: string } }));
  }

  async open(): Promise<void> {
    await new Promise((resolve) => this.socket.once('open', resolve));
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send(START);
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** Runs `run` once `at` bytes of audio have been received. */
  whenBytes(at: number, run: () => void): void {
    this.onBytes.push({ at, run });
  }

  private receive(message: { event: string; media?: { payload: string }; mark?: { name: string } }): void {
    if (message.event === 'media') {
      if (this.clearAt !== undefined) this.mediaAfterClear++;
      this.bytes += Buffer.from(message.media!.payload, 'base64').length;
      this.playedUntil = Math.max(this.playedUntil, Date.now()) + 20;
      for (const waiting of this.onBytes.filter((w) => this.bytes >= w.at)) {
        this.onBytes.splice(this.onBytes.indexOf(waiting), 1);
        waiting.run();
      }
    } else if (message.event === 'mark') {
      const name = message.mark!.name;
      this.marks.push({ name, at: this.bytes });
      // echo when the audio before the mark has played (unless cleared by then)
      setTimeout(() => this.clearAt === undefined && this.send({ event: 'mark', streamSid: 'MZ0001', mark: { name } }), Math.max(0, this.playedUntil - Date.now()));
    } else if (message.event === 'clear') {
      this.clearAt = this.bytes;
    }
  }
}

