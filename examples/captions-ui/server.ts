/**
 * Live captions in a web page, on rxvoice alone: this server serves two pages (plain DOM
 * at `/`, React at `/react.html`), bundles them with esbuild, and attaches the live relay
 * at `/speech`. The pages run `speak()` from `rxvoice/live` against the relay with no key,
 * play with `toWebAudio()` from `rxvoice/web` and highlight each word when it is heard;
 * the relay opens the service session with the server's key. No protocol of its own.
 *
 *   npx tsx examples/captions-ui/server.ts [--port 8080] [--synth espeak|tone]
 *
 * With RXVOICE_API_KEY / RXVOICE_BASE_URL it talks to that service, otherwise to an
 * embedded emulator.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { attachLiveRelay, type LiveRelay, type LiveRelayOptions } from '../../src/relay/index.js';

/** Options of {@link startCaptionsServer}. */
export interface CaptionsServerOptions {
  /** The service key and address (default RXVOICE_API_KEY / RXVOICE_BASE_URL). */
  apiKey?: string;
  baseUrl?: string;
  port?: number;
  host?: string;
  /** Passed to the relay (limits, the upstream WebSocket class, ...). */
  relay?: Partial<LiveRelayOptions>;
}

/** A running captions server. */
export interface CaptionsServer {
  url: string;
  relay: LiveRelay;
  close(): Promise<void>;
}

const PAGES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/react.html': { file: 'react.html', type: 'text/html; charset=utf-8' },
};

/** The two pages' scripts, bundled for the browser (no Node built-in may slip in). */
async function bundle(): Promise<Map<string, string>> {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const result = await build({
    entryPoints: { app: `${here}app.ts`, 'react-app': `${here}react-app.ts` },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    minify: true,
    outdir: '/',
    write: false,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  return new Map(result.outputFiles.map((file) => [file.path, file.text]));
}

/** Starts the captions server with its relay. */
export async function startCaptionsServer(options: CaptionsServerOptions = {}): Promise<CaptionsServer> {
  const scripts = await bundle();
  const server = createServer((req, res) => void serve(req, res));
  const relay = attachLiveRelay(server, {
    path: '/speech',
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...options.relay,
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const script = scripts.get(path);
    if (req.method === 'GET' && script !== undefined) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(script);
      return;
    }
    const page = PAGES[path];
    if (req.method !== 'GET' || page === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    try {
      res.writeHead(200, { 'content-type': page.type, 'cache-control': 'no-store' }).end(await readFile(new URL(page.file, import.meta.url)));
    } catch {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('cannot read the page');
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${address.port}/`,
    relay,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function runMain(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      synth: { type: 'string', default: 'espeak' },
    },
  });
  let emulator: Emulator | undefined;
  if (!process.env['RXVOICE_API_KEY'] && !process.env['RXVOICE_BASE_URL']) {
    emulator = await startEmulator({ synth: values.synth === 'tone' ? 'tone' : 'espeak' });
    console.error(`speech: embedded emulator at ${emulator.baseUrl} (synth ${values.synth})`);
  }
  const captions = await startCaptionsServer({
    ...(emulator ? { apiKey: emulator.apiKey, baseUrl: emulator.baseUrl } : {}),
    port: Number(values.port),
    host: values.host,
  });
  console.log(`Live captions: open ${captions.url} (React: ${captions.url}react.html)`);
  const shutdown = async (): Promise<void> => {
    await captions.close();
    await emulator?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runMain();
}
