/**
 * The key never appears in an error in any form a service or a proxy may echo it: as is,
 * URI-encoded (either case of hex), form-encoded; in a status answer's body, a redirect's
 * address, a task's failure message. A raw server on port 0 answers what each case needs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { redact } from '../../src/core/errors.js';

const KEY = "sk+test/KEY=1234567890!'~";
const FORMS = [KEY, encodeURIComponent(KEY), encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()), new URLSearchParams({ k: KEY }).toString().slice(2)];

let server: Server;
let base = '';
/** What the server echoes the key as, next. */
let echoed = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/text-to-sound' && req.method === 'POST') return json(401, { error: `invalid key ${echoed}`, status: 401 });
    if (req.url === '/text-to-sound/fails') return json(200, { status: 'ERROR', message: `upstream said api_key=${echoed}` });
    if (req.url === '/text-to-sound/moved') return json(302, {}, { location: `https://elsewhere.example/k/${echoed}` });
    if (req.url === '/text-to-sound/broken') return json(500, { error: `upstream rejected ${echoed}` });
    json(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Everything of an error a log could show. */
const shown = (error: unknown): string => {
  const e = error as Error & Record<string, unknown>;
  return [e.message, String(e['location'] ?? ''), JSON.stringify(e['body'] ?? ''), JSON.stringify(e['issues'] ?? '')].join('\n');
};

describe('the key in an echoed form never reaches an error', () => {
  it('as is, URI-encoded (both cases of hex) and form-encoded: in a 401 and a 500 body, a redirect, a task failure', async () => {
    const client = createClient({ apiKey: KEY, baseUrl: base, maxRetries: 0 });
    for (const form of FORMS) {
      echoed = form;
      const errors = await Promise.all([
        lastValueFrom(client.sound.create({ prompt: 'rain' })).catch((e: unknown) => e),
        lastValueFrom(client.sound.status('broken')).catch((e: unknown) => e),
        lastValueFrom(client.sound.status('moved')).catch((e: unknown) => e),
        lastValueFrom(client.tasks.resume('sound', 'fails')).catch((e: unknown) => e),
      ]);
      expect(errors.map((e) => (e as Error).name)).toEqual(['AuthenticationError', 'ApiError', 'RedirectError', 'TaskFailedError']);
      for (const error of errors) {
        for (const any of FORMS) expect(shown(error)).not.toContain(any);
        expect(shown(error)).toContain('***'); // control: the echo was there, masked
      }
    }
    await client.close();
  });

  it('redact: each form of a long secret masked; a short secret withholds the text in any form', () => {
    for (const form of FORMS) expect(redact(`said ${form}.`, [KEY])).toBe('said ***.');
    expect(redact(`said ${encodeURIComponent('a/b+c')}`, ['a/b+c'])).toMatch(/withheld/);
    expect(redact('nothing here', [KEY])).toBe('nothing here');
  });
});
