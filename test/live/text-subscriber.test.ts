/** The text source's subscriber of a live session: used by RxJS as it is, one finalizer without an array, SafeSubscriber's guarantees kept. */
import { afterEach, describe, expect, it } from 'vitest';
import { Subject, Subscription, config, from, map, throwError, type Observer } from 'rxjs';
import { TextSubscriber, type TextSourceHost } from '../../src/live/text-subscriber.js';

/** A host that records what reaches it. */
class Recorder implements TextSourceHost {
  readonly seen: string[] = [];
  pushText(text: string): void {
    this.seen.push(`next:${text}`);
  }
  textFailed(error: unknown): void {
    this.seen.push(`error:${String(error)}`);
  }
  textCompleted(): void {
    this.seen.push('complete');
  }
}

/** The finalizer array RxJS keeps on a subscription (a private field; read here to show it is absent). */
const finalizers = (subscription: Subscription): unknown => (subscription as unknown as { _finalizers: unknown })._finalizers;

describe('TextSubscriber', () => {
  afterEach(() => {
    config.onUnhandledError = null;
  });

  it('is the subscription RxJS returns (not wrapped); a plain observer is wrapped (control)', () => {
    const subject = new Subject<string>();
    const subscriber = new TextSubscriber(new Recorder());
    expect(subject.subscribe(subscriber)).toBe(subscriber);
    const observer: Observer<string> = { next: () => {}, error: () => {}, complete: () => {} };
    const wrapped = subject.subscribe(observer);
    expect(wrapped).not.toBe(observer);
    expect(wrapped.constructor.name).toBe('SafeSubscriber');
  });

  it("keeps a Subject's removal in a field (no finalizer array, where a SafeSubscriber has one), and unsubscribing removes it from the Subject", () => {
    const subject = new Subject<string>();
    const subscriber = subject.subscribe(new TextSubscriber(new Recorder()));
    expect(finalizers(subscriber)).toBeNull();
    // control: the same subscription through RxJS's own subscriber grows an array
    const control = subject.subscribe({ next: () => {} });
    expect(Array.isArray(finalizers(control))).toBe(true);
    control.unsubscribe();
    expect(subject.observed).toBe(true);
    subscriber.unsubscribe();
    expect(subject.observed).toBe(false);
    expect(subscriber.closed).toBe(true);
  });

  it('runs every finalizer added, the first from its field and the others from the array, once', () => {
    const subscriber = new TextSubscriber(new Recorder());
    const ran: string[] = [];
    subscriber.add(() => ran.push('first'));
    subscriber.add(() => ran.push('second'));
    subscriber.add(new Subscription(() => ran.push('third')));
    expect(Array.isArray(finalizers(subscriber))).toBe(true);
    subscriber.unsubscribe();
    subscriber.unsubscribe();
    expect(ran.sort()).toEqual(['first', 'second', 'third']);
    // added once closed: run at once, as RxJS does
    subscriber.add(() => ran.push('late'));
    expect(ran).toContain('late');
  });

  it('remove() takes a finalizer out whether it is in the field or in the array', () => {
    const subscriber = new TextSubscriber(new Recorder());
    const ran: string[] = [];
    const first = new Subscription(() => ran.push('first'));
    const second = new Subscription(() => ran.push('second'));
    subscriber.add(first);
    subscriber.add(second);
    subscriber.remove(first);
    subscriber.remove(second);
    subscriber.unsubscribe();
    expect(ran).toEqual([]);
  });

  it('forwards values, then completion, and nothing after the end (through an operator too)', () => {
    const host = new Recorder();
    const subject = new Subject<string>();
    subject.pipe(map((s) => s.toUpperCase())).subscribe(new TextSubscriber(host));
    subject.next('a');
    subject.complete();
    subject.next('late');
    expect(host.seen).toEqual(['next:A', 'complete']);
    expect(subject.observed).toBe(false);
  });

  it('forwards an error once and ends the subscription', () => {
    const host = new Recorder();
    const subscriber = throwError(() => 'boom').subscribe(new TextSubscriber(host));
    expect(host.seen).toEqual(['error:boom']);
    expect(subscriber.closed).toBe(true);
  });

  it('forwards a synchronous source in order', () => {
    const host = new Recorder();
    from(['a', 'b']).subscribe(new TextSubscriber(host));
    expect(host.seen).toEqual(['next:a', 'next:b', 'complete']);
  });

  it('forwards nothing after unsubscribing', () => {
    const host = new Recorder();
    const subscriber = new TextSubscriber(host);
    subscriber.unsubscribe();
    subscriber.next('a');
    subscriber.error('x');
    subscriber.complete();
    expect(host.seen).toEqual([]);
  });

  it("reports an exception of the session's next as RxJS does (config.onUnhandledError), never into the source", async () => {
    const reported = new Promise<unknown>((resolve) => {
      config.onUnhandledError = resolve;
    });
    const host = new Recorder();
    host.pushText = (text) => {
      if (text === 'bad') throw new Error('host failed');
      host.seen.push(`next:${text}`);
    };
    const subject = new Subject<string>();
    subject.subscribe(new TextSubscriber(host));
    expect(() => subject.next('bad')).not.toThrow();
    subject.next('good');
    expect(host.seen).toEqual(['next:good']);
    expect(((await reported) as Error).message).toBe('host failed');
  });
});
