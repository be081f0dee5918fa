/**
 * A tiny OpenAI-compatible chat completions server (node:http, `stream: true` as SSE),
 * answering every question with a canned chat-bot answer at an LLM-like pace. Lets the
 * examples run the real `openai` package with no account and no network.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHAT_ANSWER, tokenDelay, tokenize, type TokenPace } from './chat-answer.js';

export interface FakeOpenAiServer {
  /** Base address for the `openai` client, e.g. `http://127.0.0.1:41234/v1`. */
  baseURL: string;
  /** Requests answered so far. */
  readonly requests: number;
  close(): Promise<void>;
}

export interface FakeOpenAiOptions {
  answer?: string;
  pace?: TokenPace;
  /** The only key accepted (as `Authorization: Bearer <key>`). Default `sk-fake`. */
  apiKey?: string;
}

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAiServer> {
  const answer = options.answer ?? CHAT_ANSWER;
  const apiKey = options.apiKey ?? 'sk-fake';
  let requests = 0;
  const open = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid api key' } }));
      return;
    }
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const request = JSON.parse(body || '{}') as { model?: string; stream?: boolean };
    requests++;
    const id = `chatcmpl-fake-${requests}`;
    const created = Math.floor(Date.now() / 1000);
    const model = request.model ?? 'fake-model';
    const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

    if (!request.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id, object: 'chat.completion', created, model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    open.add(res);
    res.on('close', () => open.delete(res));
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (const token of tokenize(answer, options.pace)) {
      await new Promise((resolve) => setTimeout(resolve, tokenDelay(options.pace)));
      if (res.destroyed) return;
      res.write(chunk({ content: token }, null));
    }
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
