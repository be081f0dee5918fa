/** A fake WHATWG-style WebSocket for speak() in virtual time (test/live/session-timers and session-phases): its peer scripted by the test. */
import type { TestScheduler } from 'rxjs/testing';

/** A WHATWG-style fake socket whose peer is scripted in virtual time. */
export function fakeSocketClass(scheduler: TestScheduler, script: (socket: FakeSocket, index: number) => void, opened: number[]) {
  let count = 0;
  return class extends FakeSocket {
    constructor(url: string) {
      super(url);
      opened.push(scheduler.now());
      const index = count++;
      scheduler.schedule(() => script(this, index), 1);
    }
  };
}

/** Sockets whose peer opens and says `session.ready` at once, then `then` (each kept in `sockets`, opening times in `opened`). */
export function readyPeers(scheduler: TestScheduler, then: (socket: FakeSocket) => void = () => {}, opened: number[] = []) {
  const sockets: FakeSocket[] = [];
  FakeSocket.created = sockets;
  const Ctor = fakeSocketClass(
    scheduler,
    (socket) => {
      socket.peerOpen();
      socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
      then(socket);
    },
    opened,
  );
  return { sockets, Ctor };
}

/**
 * speak()'s connection to sockets whose peer opens, sends `frames` in order, then closes
 * with `close` when given (every socket the session opens plays the same script).
 */
export function scriptedConnection(scheduler: TestScheduler, frames: ReadonlyArray<object>, close?: readonly [code: number, reason: string]) {
  const WebSocket = fakeSocketClass(
    scheduler,
    (socket) => {
      socket.peerOpen();
      for (const frame of frames) socket.peerSend(frame);
      if (close) socket.peerClose(close[0], close[1]);
    },
    [],
  );
  return { wsUrl: 'ws://fake', apiKey: 'k', WebSocket, headersSupported: false };
}

/** A minimal WHATWG-style WebSocket, driven by the test. */
export class FakeSocket {
  static created: FakeSocket[] = [];
  readonly url: string;
  readyState = 0;
  binaryType = 'blob';
  readonly sent: string[] = [];
  closedWith: number | undefined;
  private readonly listeners = new Map<string, ((event: unknown) => void)[]>();
  constructor(url: string) {
    this.url = url;
    FakeSocket.created.push(this);
  }
  addEventListener(type: string, listener: (event: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(code = 1000): void {
    if (this.readyState === 3) return;
    this.closedWith = code;
    this.readyState = 3;
  }
  private fire(type: string, event: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
  peerOpen(): void {
    this.readyState = 1;
    this.fire('open', {});
  }
  peerSend(frame: object | Uint8Array, evenIfClosed = false): void {
    if (this.readyState !== 1 && !evenIfClosed) return;
    this.fire('message', { data: frame instanceof Uint8Array ? frame.buffer.slice(0) : JSON.stringify(frame) });
  }
  peerError(event: object): void {
    this.fire('error', event);
  }
  peerClose(code: number, reason: string): void {
    if (this.readyState === 3 && this.closedWith !== undefined) return;
    this.readyState = 3;
    this.fire('close', { code, reason });
  }
}
