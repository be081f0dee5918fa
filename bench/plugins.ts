/**
 * What the framework plugins add over a plain `fetch`: the AI SDK's `generateSpeech` and
 * LiveKit's `tts.synthesize()`, rxvoice's (`rxvoice/ai-sdk`, `rxvoice/livekit`) against
 * ElevenLabs' (`@ai-sdk/elevenlabs` 2.x, `@livekit/agents-plugin-elevenlabs`).
 *
 * One fake server answers every POST with the same bytes: the emulator's answer to the
 * first `/tts-stream` request it proxies (status, headers and body recorded once), so
 * rxvoice's and ElevenLabs' plugins read identical responses. For each call: the time of
 * the plugin's call, minus the median of a plain `fetch` of the same answer (POST, JSON
 * body, body read whole) measured in the same rounds (the three interleaved, so load
 * hits each alike; `@ai-sdk/elevenlabs` has no base address option, so its `fetch` option
 * rewrites the host). The figure is the median overhead, ms; the peer is ElevenLabs'
 * plugin over the same fetch; target ratio <= 1 (LiveKit) and <= 1.2 (AI SDK).
 *
 * Run alone: `npx tsx bench/plugins.ts`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, now, round, row, runAlone } from './util.js';

export interface PluginsOptions {
  /** Calls of each kind (after warm-up). */
  calls?: number;
}

const TEXT = 'Sure, I can help with that. Your train leaves at noon from platform four.';

interface Recorded {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The fake server: proxies the first `/tts-stream` to `upstream`, then answers every POST with it. */
async function replayServer(upstream: string): Promise<{ server: Server; url: string }> {
  let recorded: Promise<Recorded> | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      recorded ??= (async () => {
        const answer = await fetch(`${upstream}${req.url ?? '/'}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': String(req.headers['x-api-key'] ?? '') },
          body: Buffer.concat(chunks),
        });
        const headers: IncomingHttpHeaders = {};
        answer.headers.forEach((value, name) => {
          if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'].includes(name)) headers[name] = value;
        });
        return { status: answer.status, headers, body: Buffer.from(await answer.arrayBuffer()) };
      })();
      void recorded.then((r) => {
        res.writeHead(r.status, { ...r.headers, 'content-length': r.body.byteLength });
        res.end(r.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

type Call = () => Promise<unknown>;

/** Median time of each call kind, the kinds interleaved call by call. */
async function interleaved(calls: Record<string, Call>, count: number): Promise<Record<string, number>> {
  const times: Record<string, number[]> = {};
  const names = Object.keys(calls);
  for (const name of names) for (let i = 0; i < 5; i++) await (calls[name] as Call)(); // warm-up
  for (let i = 0; i < count; i++) {
    // rotate the order so no kind always runs first
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length] as string;
      const t = now();
      await (calls[name] as Call)();
      (times[name] ??= []).push(now() - t);
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(times[name] as number[])]));
}

export async function run(options: PluginsOptions = {}): Promise<BenchRow[]> {
  const count = options.calls ?? (QUICK ? 40 : 200);
  const emulator = await startEmulator({ synth: 'tone', log: false });
  const apiKey = emulator.apiKey;
  // one fake server per framework: each replays the answer to its own plugin's request
  const fakes: Server[] = [];
  const fakeServer = async (): Promise<string> => {
    const fake = await replayServer(emulator.baseUrl);
    fakes.push(fake.server);
    return fake.url;
  };
  const plainFetch = async (url: string): Promise<void> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ text: TEXT, voice_id: 1, language: 'en-us' }),
    });
    await res.arrayBuffer();
  };
  try {
    // --- AI SDK ---
    const { experimental_generateSpeech: generateSpeech } = await import('ai');
    const { createCamb } = await import('../src/ai-sdk/index.js');
    const { createElevenLabs } = await import('@ai-sdk/elevenlabs');
    const aiUrl = await fakeServer();
    const camb = createCamb({ apiKey, baseUrl: aiUrl, voice: 1, maxRetries: 0 });
    // @ai-sdk/elevenlabs has no base address option: its `fetch` sends it to the fake server
    const eleven = createElevenLabs({
      apiKey: 'bench',
      fetch: (url, init) => fetch(String(url).replace('https://api.elevenlabs.io', aiUrl), init),
    });
    // the first /tts-stream call records the answer every later call replays
    await generateSpeech({ model: camb.speech(), text: TEXT, voice: '1', maxRetries: 0 });
    const ai = await interleaved(
      {
        fetch: () => plainFetch(`${aiUrl}/tts-stream`),
        ours: () => generateSpeech({ model: camb.speech(), text: TEXT, voice: '1', maxRetries: 0 }),
        peer: () => generateSpeech({ model: eleven.speech('eleven_multilingual_v2'), text: TEXT, voice: 'voice', maxRetries: 0 }),
      },
      count,
    );

    // --- LiveKit ---
    const { TTS } = await import('../src/livekit/index.js');
    const drain = async (stream: AsyncIterable<unknown>): Promise<void> => {
      for await (const _ of stream) void _;
    };
    const elevenlabs = await import('@livekit/agents-plugin-elevenlabs');
    const { initializeLogger } = await import('@livekit/agents');
    initializeLogger({ pretty: false, level: 'warn' });
    const lkUrl = await fakeServer();
    const ours = new TTS({ voice_id: 1, apiKey, baseUrl: lkUrl, sampleRate: 22_050 });
    const peer = new elevenlabs.TTS({ apiKey: 'bench', baseURL: `${lkUrl}/v1`, encoding: 'pcm_22050' });
    await drain(ours.synthesize(TEXT)); // records the answer
    const lk = await interleaved(
      {
        fetch: () => plainFetch(`${lkUrl}/tts-stream`),
        ours: () => drain(ours.synthesize(TEXT)),
        peer: () => drain(peer.synthesize(TEXT)),
      },
      count,
    );
    await ours.close();
    await peer.close();

    const note = (m: Record<string, number>, what: string): string =>
      `median over ${count} calls each, interleaved; plain fetch ${round(m['fetch'] as number)} ms, ours ${round(m['ours'] as number)} ms, ElevenLabs ${round(m['peer'] as number)} ms; the same replayed answer for both; target ratio ${what}`;
    const over = (m: Record<string, number>, k: string): number => (m[k] as number) - (m['fetch'] as number);
    return [
      row('plugins: AI SDK generateSpeech overhead over a plain fetch (rxvoice/ai-sdk vs @ai-sdk/elevenlabs)', over(ai, 'ours'), over(ai, 'peer'), 'ms', note(ai, '<= 1.2'), 'lower'),
      row('plugins: LiveKit synthesize() overhead over a plain fetch (rxvoice/livekit vs @livekit/agents-plugin-elevenlabs)', over(lk, 'ours'), over(lk, 'peer'), 'ms', note(lk, '<= 1'), 'lower'),
    ];
  } finally {
    for (const server of fakes) {
      server.closeAllConnections();
      server.close();
    }
    await emulator.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) runAlone(run);
