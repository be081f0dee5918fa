/**
 * The emulator's HTTP request handler: request log, authentication (`x-api-key`),
 * injected faults (latency, error statuses), routing over the shared routes table, and
 * the temporary result files under `/files/`.
 *
 * Answers other than 200 and 422 carry `{ error, status }`: 401 (missing or invalid
 * key; the key is never echoed), 402 (a streaming call the credits cannot pay), 403
 * (expired temporary address), 404 (unknown path, task, run or file), 405, 413 (body
 * larger than `options.maxBodyBytes`), 500, and injected statuses (`faults.httpErrors`,
 * with `Retry-After` when `retryAfter` is set).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { drawLatencyMs } from './options.js';
import type { EmulatorState } from './state.js';
import {
  FILES_PREFIX,
  HttpProblem,
  baseUrlOf,
  problem,
  readBody,
  sendBytes,
  sendJson,
  type CompiledRoute,
  type Handler,
  type HandlerContext,
} from './http-util.js';
import { taskRoutes } from './http-tasks.js';
import { streamRoutes } from './http-stream.js';
import { voiceRoutes } from './http-voices.js';

/** Header carrying the API key. */
export const API_KEY_HEADER = 'x-api-key';

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Build the `(req, res)` listener of one emulator. */
export function createRequestHandler(state: EmulatorState): (req: IncomingMessage, res: ServerResponse) => void {
  const table: Array<CompiledRoute<Handler>> = [...taskRoutes(), ...streamRoutes(), ...voiceRoutes()];

  const serveFile = async (res: ServerResponse, pathname: string): Promise<void> => {
    const name = pathname.slice(FILES_PREFIX.length);
    const token = name.replace(/\.[A-Za-z0-9]+$/, '');
    const file = state.files.get(token);
    if (!file) throw problem(404, 'file not found');
    if (Date.now() >= file.expiresAt) throw problem(403, 'the temporary address has expired');
    sendBytes(res, file.contentType, await file.produce());
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const pathname = url.pathname;

    // Temporary result addresses are pre-signed: no key needed.
    if (pathname.startsWith(FILES_PREFIX) && (method === 'GET' || method === 'HEAD')) {
      await state.delay(drawLatencyMs(state.options.faults.httpLatencyMs));
      await serveFile(res, pathname);
      return;
    }

    const key = headerValue(req, API_KEY_HEADER);
    const accepted = state.isAcceptedKey(key);
    const faults = accepted ? state.faultsFor(key) : state.options.faults;
    await state.delay(drawLatencyMs(faults.httpLatencyMs));
    if (!accepted) {
      throw problem(401, key === undefined || key === '' ? 'missing API key (header x-api-key)' : 'invalid API key');
    }
    const injected = state.takeHttpError(key);
    if (injected) {
      const headers: Record<string, string> = {};
      if (injected.retryAfter !== undefined) headers['retry-after'] = String(injected.retryAfter);
      throw problem(injected.status, `emulated HTTP ${injected.status} (fault injection)`, headers);
    }

    let pathMatched = false;
    for (const route of table) {
      const match = route.regex.exec(pathname);
      if (!match) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      try {
        route.params.forEach((name, i) => {
          params[name] = decodeURIComponent(match[i + 1] ?? '');
        });
      } catch {
        throw problem(404, 'not found');
      }
      let body: Promise<Buffer> | undefined;
      const ctx: HandlerContext = {
        req,
        res,
        state,
        apiKey: key,
        params,
        url,
        baseUrl: baseUrlOf(req, state),
        body: () => (body ??= readBody(req, state.options.maxBodyBytes)),
      };
      await route.handler(ctx);
      return;
    }
    if (pathMatched) throw problem(405, `method ${method} not allowed`);
    throw problem(404, 'not found');
  };

  return (req, res) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    state.requests.push({ method: (req.method ?? 'GET').toUpperCase(), path: url.pathname });
    if (state.options.log) {
      res.on('finish', () => {
        // Path only: a query could carry a key (`api_key`), and keys are never logged.
        process.stderr.write(`[rxvoice-emulator] ${req.method ?? 'GET'} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms\n`);
      });
    }
    handle(req, res, url).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      try {
        if (error instanceof HttpProblem) sendJson(res, error.status, error.body, error.headers);
        else if (error instanceof Error && error.name === 'EspeakUnavailableError') {
          // The optional espeak-ng package is missing: say so (the message names the fix).
          sendJson(res, 500, { error: error.message, status: 500 });
        } else sendJson(res, 500, { error: 'internal error of the emulator', status: 500 });
      } catch {
        res.destroy();
      }
    });
  };
}
