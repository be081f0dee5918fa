/**
 * The end of an exchange: a reader that completed (its body read to the end) is not
 * aborted afterwards (that abort cost a DOMException and an event on every call);
 * unsubscribing mid-body still aborts (the control). Before the change the first test saw
 * both signals aborted. A streamed answer is not cut by `timeoutMs` once its body began (the
 * mutant dropping that clear passed every test before).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, lastValueFrom, Observable, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyBytes } from '../../src/client/body.js';
import { resolveConfig } from '../../src/client/config.js';
import { HttpTransport } from '../../src/client/request.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/**
 * A server answering 6 bytes whole (`/whole`), 2 bytes then nothing (`/hang`), or 2 bytes
 * then 2 more when `finish()` is called (`/later`).
 */
async function serve(): Promise<{ url: string; finish: () => void }> {
  let finishLater: (() => void) | undefined;
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      if (req.url === '/hang') res.write(Buffer.from([1, 2]));
      else if (req.url === '/later') {
        res.write(Buffer.from([1, 2]));
        finishLater = () => res.end(Buffer.from([3, 4]));
      } else res.end(Buffer.from([1, 2, 3, 4, 5, 6]));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, finish: () => finishLater?.() };
}

function transportFor(baseUrl: string, timeoutMs?: number): HttpTransport {
  const { config, apiKey } = resolveConfig({ apiKey: 'test-key', baseUrl, maxRetries: 0, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  return new HttpTransport(config, apiKey);
}

describe('HttpTransport.exchange: the end of the body', () => {
  it('a completed read is not aborted afterwards (twice in a row)', async () => {
    const { url } = await serve();
    const transport = transportFor(url);
    const signals: AbortSignal[] = [];
    const call = () =>
      lastValueFrom(
        transport
          .exchange<Uint8Array>({ method: 'POST', path: '/whole', json: {}, kind: 'idempotent', endpoint: '/whole', stream: true }, (response, signal) => {
            signals.push(signal);
            return bodyBytes(response);
          })
          .pipe(toArray()),
      );
    expect((await call()).flatMap((c) => [...c])).toEqual([1, 2, 3, 4, 5, 6]);
    await call();
    expect(signals).toHaveLength(2);
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
  });

  it('control: unsubscribing in the middle of the body aborts it', async () => {
    const { url } = await serve();
    const transport = transportFor(url);
    let seen: AbortSignal | undefined;
    const first = await firstValueFrom(
      transport.exchange<Uint8Array>({ method: 'POST', path: '/hang', json: {}, kind: 'idempotent', endpoint: '/hang', stream: true }, (response, signal) => {
        seen = signal;
        return bodyBytes(response) as Observable<Uint8Array>;
      }),
    );
    expect([...first]).toEqual([1, 2]);
    expect(seen?.aborted).toBe(true);
  });

  it('a streamed answer is not cut by timeoutMs once its body has begun (control: the same wait kills a body read whole)', async () => {
    const TIMEOUT_MS = 2000;
    const read = async (stream: boolean): Promise<number[] | Error> => {
      const { url, finish } = await serve();
      const transport = transportFor(url, TIMEOUT_MS);
      const bytes: number[] = [];
      return new Promise((resolve) => {
        let waiting = false;
        transport.exchange<Uint8Array>({ method: 'POST', path: '/later', json: {}, kind: 'idempotent', endpoint: '/later', stream }, (response) => bodyBytes(response)).subscribe({
          next: (chunk) => {
            bytes.push(...chunk);
            // the body has begun: wait past the request's timeout (real time, as the timeout runs), then end it
            if (!waiting) setTimeout(finish, TIMEOUT_MS + 500);
            waiting = true;
          },
          error: (error: Error) => resolve(error),
          complete: () => resolve(bytes),
        });
      });
    };
    expect(await read(true)).toEqual([1, 2, 3, 4]);
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    const whole = await read(false);
    expect(whole).toBeInstanceOf(Error);
    expect((whole as Error).name).toBe('TimeoutError');
    expect((whole as Error).message).toContain(`timed out after ${TIMEOUT_MS} ms`);
  }, 20_000);
});
