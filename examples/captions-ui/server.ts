/**
 * Live captions in a web page. This server (node:http + ws) serves a small static page
 * and runs the live speech session SERVER-side, so the API key never reaches the
 * browser. Over its own WebSocket (`/ws`) it relays, per segment, a JSON message
 * `{ type: 'segment', segment_id, text, words }` followed by the segment's WAV as one
 * binary message; the page plays them in order and highlights each word as it is
 * spoken. "Interrupt" in the page pauses the audio and sends `{ type: 'interrupt' }`:
 * the server unsubscribes the session (its WebSocket to the service closes) and answers
 * `{ type: 'interrupted', sessionClosed: true }`.
 *
 *   npx tsx examples/captions-ui/server.ts [--port 8080] [--synth espeak|tone]
 *
 * With RXVOICE_API_KEY / RXVOICE_BASE_URL it talks to that service, otherwise to an
 * embedded emulator.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { finalize, type OperatorFunction, type Subscription } from 'rxjs';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { SpokenSegment } from '../../src/index.js';
import type { SpeakOptions } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { concatSegments } from '../../src/operators/index.js';
import { CHAT_ANSWER, tokenStream, type TokenPace } from '../lib/chat-answer.js';
import { speechService } from '../lib/speech-service.js';

/** Makes a live speech operator (`client.speak`, or the session operator with a key). */
export type SpeakFactory = (options: SpeakOptions) => OperatorFunction<string, LiveSpeechEvent>;

export interface CaptionsServerOptions {
  /** Live speech for a session's options: usually `(o) => client.speak(o)`. */
  speak: SpeakFactory;
  port?: number;
  host?: string;
  voiceId?: number;
  language?: string;
  /** Text the page offers to speak. */
  defaultText?: string;
  /** Pace of the fake chat-bot token stream the text is pushed as. */
  pace?: TokenPace;
}

export interface CaptionsStats {
  /** Live sessions started, running now, and ended (completed, failed or interrupted). */
  sessionsStarted: number;
  sessionsActive: number;
  sessionsEnded: number;
  interrupts: number;
  segmentsSent: number;
}

export interface CaptionsServer {
  url: string;
  stats(): CaptionsStats;
  close(): Promise<void>;
}

const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
};

/** Start the captions server. */
export async function startCaptionsServer(options: CaptionsServerOptions): Promise<CaptionsServer> {
  const stats: CaptionsStats = { sessionsStarted: 0, sessionsActive: 0, sessionsEnded: 0, interrupts: 0, segmentsSent: 0 };
  const defaultText = options.defaultText ?? CHAT_ANSWER;

  const server = createServer((req, res) => {
    void serveStatic(req, res);
  });
  const wss = new WebSocketServer({ server, path: '/ws', maxPayload: 64 * 1024 });

  wss.on('connection', (socket: WebSocket) => {
    let session: Subscription | undefined;
    const send = (message: unknown): void => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    };
    const stop = (): void => {
      session?.unsubscribe();
      session = undefined;
    };
    send({ type: 'hello', text: defaultText });

    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return;
      let message: { type?: unknown; text?: unknown };
      try {
        message = JSON.parse(String(data)) as { type?: unknown; text?: unknown };
      } catch {
        return;
      }
      if (message.type === 'speak') {
        stop();
        const text = typeof message.text === 'string' && message.text.trim() !== '' ? message.text.slice(0, 20_000) : defaultText;
        stats.sessionsStarted++;
        stats.sessionsActive++;
        session = tokenStream(text, options.pace)
          .pipe(
            options.speak({
              voice_id: options.voiceId ?? 1,
              language: options.language ?? 'en-us',
              output_format: 'wav',
              word_timestamps: true,
            }),
            concatSegments(),
            finalize(() => {
              stats.sessionsActive--;
              stats.sessionsEnded++;
            }),
          )
          .subscribe({
            next: (segment: SpokenSegment) => {
              send({ type: 'segment', segment_id: segment.segment_id, text: segment.text, words: segment.word_timestamps });
              if (socket.readyState === socket.OPEN) socket.send(segment.audio, { binary: true });
              stats.segmentsSent++;
            },
            complete: () => send({ type: 'done' }),
            // rxvoice errors never carry the key.
            error: (error: unknown) => send({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
          });
      } else if (message.type === 'interrupt') {
        stats.interrupts++;
        const hadSession = session !== undefined && !session.closed;
        stop();
        send({ type: 'interrupted', sessionClosed: true, hadSession });
      }
    });
    socket.on('close', stop);
    socket.on('error', stop);
  });

  async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const entry = STATIC[path];
    if (req.method !== 'GET' || !entry) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    try {
      const body = await readFile(new URL(entry.file, import.meta.url));
      res.writeHead(200, { 'content-type': entry.type, 'cache-control': 'no-store' }).end(body);
    } catch {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('cannot read the page');
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${address.port}/`,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
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
  const { client, emulator } = await speechService(values.synth);
  if (emulator) console.error(`speech: embedded emulator at ${emulator.baseUrl} (synth ${values.synth})`);
  const captions = await startCaptionsServer({
    speak: (o) => client.speak(o),
    port: Number(values.port),
    host: values.host,
  });
  console.log(`Live captions: open ${captions.url}`);
  const shutdown = async (): Promise<void> => {
    await captions.close();
    await client.close();
    await emulator?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown());
  process.once('SIGTERM', () => void shutdown());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runMain();
}
