/**
 * What the checks of the package itself share (package.test.ts, blocks.test.ts): the
 * package's entries, the entries for frameworks (optional peers) with code that must
 * compile without and with them, and the TypeScript blocks of the README, the guides
 * under docs/ and the JSDoc in src/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, Record<string, string>>;
  dependencies: Record<string, string>;
  files: string[];
};

/** Subpath of an `exports` key as a specifier: `.` -> `rxvoice`, `./live` -> `rxvoice/live`. */
export const specifierOf = (key: string): string => (key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`);
export const ENTRIES = Object.keys(pkg.exports).map(specifierOf);

/**
 * Entries for a framework, an optional peer that nothing else loads: its packages (the
 * framework first), code that must compile without them (the entry's own options are still
 * checked), and code that must compile with them (the entry's classes are the framework's).
 */
export const FRAMEWORKS: Record<string, { peers: string[]; withoutPeer: string; withPeer: string; firstCall?: string }> = {
  'rxvoice/livekit': {
    peers: ['@livekit/agents', '@livekit/rtc-node'],
    withoutPeer: `
      import { TTS, type TTSOptions } from 'rxvoice/livekit';
      const options: TTSOptions = { voice_id: 1, language: 'en-us', sampleRate: 24000 };
      export const tts = new TTS(options);
      // @ts-expect-error voice_id is a number
      new TTS({ voice_id: 'one' });
    `,
    withPeer: `
      import { voice, tts as lk } from '@livekit/agents';
      import type { AudioFrame } from '@livekit/rtc-node';
      import { createClient } from 'rxvoice';
      import { TTS } from 'rxvoice/livekit';
      const client = createClient({ apiKey: 'key', baseUrl: 'http://127.0.0.1:1' });
      export const tts: lk.TTS = new TTS({ voice_id: 1, client });
      export const session = new voice.AgentSession({ tts });
      export const stream: lk.SynthesizeStream = tts.stream();
      export const chunked: lk.ChunkedStream = tts.synthesize('Hello there.');
      export const frame: Promise<AudioFrame> = chunked.collect();
      // @ts-expect-error voice_id is a number
      new TTS({ voice_id: 'one' });
    `,
  },
};
FRAMEWORKS['rxvoice/ai-sdk'] = {
  peers: ['@ai-sdk/provider', 'ai'],
  // the entry loads without its peers; a model's first call imports @ai-sdk/provider (m: the entry)
  firstCall: "m.camb.speech().doGenerate({ text: 'Hello there.', voice: '1' })",
  withoutPeer: `
    import { camb, createCamb, type CambSpeechModel, type CambTranscriptionModel } from 'rxvoice/ai-sdk';
    export const speech: CambSpeechModel = createCamb({ voice: 1, language: 'en-us' }).speech();
    export const transcription: CambTranscriptionModel = camb.transcription('default');
    // @ts-expect-error voice is a voice id (a number)
    createCamb({ voice: 'one' });
  `,
  withPeer: `
    import type { ProviderV3, SpeechModelV3, TranscriptionModelV3 } from '@ai-sdk/provider';
    import { createProviderRegistry, experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe } from 'ai';
    import { camb, createCamb } from 'rxvoice/ai-sdk';
    export const provider: ProviderV3 = createCamb({ apiKey: 'key', baseUrl: 'http://127.0.0.1:1' });
    export const speech: SpeechModelV3 = camb.speech();
    export const transcription: TranscriptionModelV3 = camb.transcription();
    export const registry = createProviderRegistry({ camb });
    export const spoken = generateSpeech({ model: camb.speech('default'), text: 'Hello there.', voice: '1' });
    export const heard = transcribe({ model: camb.transcription(), audio: new Uint8Array(8) });
  `,
};
export const FRAMEWORK_ENTRIES = Object.keys(FRAMEWORKS);
/** Frameworks the README's blocks use that no entry needs: LangChain (`fromTokens` reads its chunks by their shape). */
export const BLOCK_FRAMEWORKS = ['@langchain/core'];
export const FRAMEWORK_PEERS = [...Object.values(FRAMEWORKS).flatMap((f) => f.peers), ...BLOCK_FRAMEWORKS];
/** Entries that load without any framework. */
export const PLAIN_ENTRIES = ENTRIES.filter((e) => !FRAMEWORK_ENTRIES.includes(e));

export function files(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? files(full, keep) : keep(full) ? [full] : [];
  });
}

/** A README or JSDoc block that imports a framework: checked where the framework is installed. */
export const needsFramework = (b: Block): boolean => FRAMEWORK_PEERS.some((peer) => b.code.includes(`'${peer}'`) || b.code.includes(`'${peer}/`));

/** A TypeScript block: where it comes from (for messages), its code, and whether it is marked to run. */
export interface Block {
  origin: string;
  code: string;
  /** Marked ```` ```ts runnable ````: the README promises it runs as pasted. */
  runnable: boolean;
}

/** A fenced TypeScript block; group 1 the rest of the info string (`runnable`), group 2 the code. */
export const FENCE = /```(?:ts|typescript)(?:[ \t]+([^\n]*))?\n([\s\S]*?)```/g;

/** The README's pages: README.md and the guides under docs/ (docs/api.md is generated from the sources). */
export const GUIDE_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md') && n !== 'api.md').map((n) => `docs/${n}`)];

export function readmeBlocks(): Block[] {
  return GUIDE_FILES.flatMap((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    return [...text.matchAll(FENCE)].map((m) => ({
      origin: `${file}:${text.slice(0, m.index).split('\n').length}`,
      code: m[2] as string,
      runnable: /\brunnable\b/.test(m[1] ?? ''),
    }));
  });
}

export function jsdocBlocks(): Block[] {
  const out: Block[] = [];
  for (const file of files(join(ROOT, 'src'), (p) => p.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
      const body = (comment[0] as string)
        .replace(/^\/\*\*/, '')
        .replace(/\*\/$/, '')
        .split('\n')
        .map((line) => line.replace(/^\s*\* ?/, ''))
        .join('\n');
      // examples of internals (`@internal`, not in the package's API) are not a user's code
      if (/@internal\b/.test(body)) continue;
      for (const m of body.matchAll(FENCE)) {
        const line = text.slice(0, comment.index).split('\n').length;
        out.push({ origin: `${relative(ROOT, file)}:${line}`, code: m[2] as string, runnable: false });
      }
    }
  }
  return out;
}
