/**
 * A phone agent on Twilio Media Streams, with no account: an embedded emulator speaks, and
 * a Media Streams WebSocket server answers calls.
 *
 * The first line of standard output is the address to stream a call to,
 * `ws://127.0.0.1:<port>/media` (put it behind a `wss://` tunnel in TwiML's
 * `<Connect><Stream url="...">` for a real call). On each call's `start` it says the
 * greeting into the call (a live session asked for 8 kHz WAV, played as 20 ms mu-law frames at
 * real time); a key press (`dtmf`) interrupts it (barge-in: `clear`, no audio after it). On
 * interruption, or when the call stops, it prints the call's heard report as one JSON line:
 * `{"heard":...,"unheard":...,"playedSeconds":...,"complete":...,"method":...,"streamSid":...,"reason":...}`.
 *
 * Run: `PORT=8080 npx tsx examples/twilio.ts` (no PORT: a free port; `--synth tone` for
 * tones instead of espeak-ng speech). Stops on SIGINT / SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { of } from 'rxjs';
import { WebSocketServer } from 'ws';
import type { HeardReport } from '../src/live/index.js';
import { twilioMediaStream } from '../src/telephony/index.js';
import { speechService, synthOption } from './lib/speech-service.js';

const GREETING = 'Hello! Thanks for calling. How can I help you today?';

const { values, positionals } = parseArgs({ options: { synth: { type: 'string' } }, allowPositionals: true });
const { synth } = synthOption(values.synth, process.env, positionals);
const port = Number(process.env['PORT'] ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, not ${process.env['PORT']}`);

const { client, emulator } = await speechService(synth);
const http = createServer((_request, response) => response.writeHead(426).end('This server speaks Twilio Media Streams over WebSocket at /media.\n'));
const server = new WebSocketServer({ server: http, path: '/media' });

server.on('connection', (socket) => {
  let report: HeardReport | undefined;
  let printed = false;
  let streamSid: string | undefined; // kept after the call ends
  const print = (reason: string): void => {
    if (printed) return;
    printed = true;
    const heard = report ?? { heard: '', unheard: GREETING, playedSeconds: 0, complete: false, method: 'timestamps' };
    // what the session had not begun is unheard too: heard + unheard is the whole greeting
    const unheard = GREETING.startsWith(heard.heard) ? GREETING.slice(heard.heard.length) : heard.unheard;
    console.log(JSON.stringify({ ...heard, unheard, streamSid: call.streamSid ?? streamSid, reason }));
  };
  const call = twilioMediaStream(socket, { onHeard: (heard) => (report = heard) });
  call.dtmf$.subscribe(() => call.interrupt());
  call.started.then(
    (start) => {
      streamSid = start.streamSid;
      console.error(`call ${start.callSid ?? '?'} (stream ${start.streamSid}) started`);
    },
    (error: unknown) => console.error(`no call: ${(error as Error).message}`),
  );
  // Said at once: the live session starts while the call is being set up, and its audio goes
  // out from the call's start message on (a key pressed from then on interrupts it).
  call
    .say(of(GREETING).pipe(client.speak({ voice_id: 1, output_format: 'wav', sample_rate: 8000, word_timestamps: true })))
    .subscribe({
      next: (event) => {
        if (event.type === 'heard' && event.reason === 'interrupted') print('interrupted');
      },
      error: (error: unknown) => console.error(`speech ended: ${(error as Error).message}`),
    });
  void call.ended.then((end) => print(end.reason));
});

await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
console.log(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/media`);

const stop = async (): Promise<void> => {
  for (const socket of server.clients) socket.terminate();
  server.close();
  http.close();
  await emulator?.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
