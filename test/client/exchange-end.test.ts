/**
 * The end of an exchange: a reader that completed (its body read to the end) is not
 * aborted afterwards (that abort cost a DOMException and an event on every call);
 * unsubscribing mid-body still aborts (the control). Before the change the first test saw
 * both signals aborted.
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

/** A server answering 6 bytes whole (`/whole`) or 2 bytes then nothing (`/hang`). */
async function serve(): Promise<{ url: string }> {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      if (req.url === '/hang') res.write(Buffer.from([1, 2]));
      else res.end(Buffer.from([1, 2, 3, 4, 5, 6]));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function transportFor(baseUrl: string): HttpTransport {
  const { config, apiKey } = resolveConfig({ apiKey: 'test-key', baseUrl, maxRetries: 0 });
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
});
