/**
 * Bad input table: for every endpoint of the client, every field of the contract given a
 * wrong type, an out-of-range value, a wrong length, or left out when required. Each
 * must be rejected locally (`ValidationError`, `source: 'local'`) with the right `loc`,
 * before anything is sent (the emulator's request log does not change). The table is
 * generated from a compact spec: endpoint -> a valid base request + field descriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, of, type Observable } from 'rxjs';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { rejectionOf } from './helpers.js';
import { PassThrough } from 'node:stream';
import { segmentSentences } from '../../src/operators/segmentSentences.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { wordTimeline } from '../../src/operators/wordTimeline.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import { toFile } from '../../src/sinks/toFile.js';
import { toWavFile } from '../../src/sinks/toWavFile.js';
import { toWritable } from '../../src/sinks/toWritable.js';
import { toAudioDevice } from '../../src/sinks/toAudioDevice.js';
import { fromFile } from '../../src/sources/fromFile.js';
import { parseSse } from '../../src/operators/parseSse.js';

// ---------------------------------------------------------------------------
// Field descriptions and the mutations they imply
// ---------------------------------------------------------------------------

interface Common {
  required?: boolean;
  nullable?: boolean;
}
type Field =
  | (Common & { kind: 'string'; min?: number; max?: number })
  | (Common & { kind: 'language' })
  | (Common & { kind: 'int'; min?: number; max?: number })
  | (Common & { kind: 'number'; min?: number; positive?: boolean; max?: number })
  | (Common & { kind: 'enum'; values: readonly (string | number)[] })
  | (Common & { kind: 'bool' })
  | (Common & { kind: 'url' })
  | (Common & { kind: 'object' })
  | (Common & { kind: 'array'; of: Field; min?: number; max?: number; unique?: boolean; sample: unknown });

/** A bad value, and the path (relative to the field) the issue must point at. */
interface Mutation {
  label: string;
  value: unknown;
  /** Sub-path under the field (array element index). */
  at?: (string | number)[];
  /** Remove the field instead of setting it. */
  remove?: boolean;
}

const WRONG_SHAPES: Mutation[] = [
  { label: 'an object', value: { a: 1 } },
  { label: 'an array', value: ['x'] },
];

function mutationsOf(field: Field): Mutation[] {
  const out: Mutation[] = [];
  if (field.required) out.push({ label: 'missing', value: undefined, remove: true });
  if (!field.nullable) out.push({ label: 'null', value: null });
  switch (field.kind) {
    case 'string':
      out.push({ label: 'a number', value: 42 }, { label: 'a boolean', value: true }, ...WRONG_SHAPES);
      if (field.min !== undefined) out.push({ label: `shorter than ${field.min}`, value: 'x'.repeat(field.min - 1) });
      if (field.max !== undefined) out.push({ label: `longer than ${field.max}`, value: 'x'.repeat(field.max + 1) });
      break;
    case 'language':
      out.push(
        { label: 'a boolean', value: true },
        ...WRONG_SHAPES,
        { label: 'upper case', value: 'EN-US' },
        { label: 'an underscore', value: 'en_us' },
        { label: 'a name', value: 'english' },
        { label: 'empty', value: '' },
        { label: 'a fractional id', value: 1.5 },
        { label: 'a negative id', value: -3 },
        { label: 'id zero', value: 0 },
      );
      break;
    case 'int':
      out.push(
        { label: 'a numeric string', value: '5' },
        { label: 'a boolean', value: true },
        { label: 'a fraction', value: 1.5 },
        { label: 'NaN', value: Number.NaN },
        { label: 'Infinity', value: Number.POSITIVE_INFINITY },
        ...WRONG_SHAPES,
      );
      if (field.min !== undefined) out.push({ label: `below ${field.min}`, value: field.min - 1 });
      if (field.max !== undefined) out.push({ label: `above ${field.max}`, value: field.max + 1 });
      break;
    case 'number':
      out.push(
        { label: 'a numeric string', value: '5' },
        { label: 'a boolean', value: true },
        { label: 'NaN', value: Number.NaN },
        { label: 'Infinity', value: Number.POSITIVE_INFINITY },
        ...WRONG_SHAPES,
      );
      if (field.positive) out.push({ label: 'zero', value: 0 }, { label: 'negative', value: -1 });
      if (field.min !== undefined) out.push({ label: `below ${field.min}`, value: field.min - 0.01 });
      if (field.max !== undefined) out.push({ label: `above ${field.max}`, value: field.max + 0.01 });
      break;
    case 'enum': {
      const numeric = typeof field.values[0] === 'number';
      out.push({ label: 'a boolean', value: true }, ...WRONG_SHAPES);
      if (numeric) {
        out.push(
          { label: 'a value out of the set', value: Math.max(...(field.values as number[])) + 1 },
          { label: 'a numeric string', value: String(field.values[0]) },
          { label: 'a fraction', value: 1.5 },
          { label: 'a negative', value: -1 },
        );
      } else {
        out.push(
          { label: 'a value out of the set', value: 'something-else' },
          { label: 'upper case', value: String(field.values[0]).toUpperCase() },
          { label: 'a number', value: 1 },
        );
      }
      break;
    }
    case 'bool':
      out.push({ label: 'a string', value: 'true' }, { label: 'a number', value: 1 }, { label: 'zero', value: 0 }, ...WRONG_SHAPES);
      break;
    case 'url':
      out.push(
        { label: 'a number', value: 42 },
        { label: 'a boolean', value: true },
        { label: 'not a url', value: 'not a url' },
        { label: 'empty', value: '' },
        ...WRONG_SHAPES,
      );
      break;
    case 'object':
      out.push({ label: 'a string', value: 'wav' }, { label: 'a number', value: 3 }, { label: 'an array', value: [] });
      break;
    case 'array': {
      out.push({ label: 'a string', value: 'x' }, { label: 'an object', value: { 0: field.sample } });
      if (field.min !== undefined) out.push({ label: `fewer than ${field.min}`, value: Array.from({ length: field.min - 1 }, () => field.sample) });
      if (field.max !== undefined) {
        const many = Array.from({ length: field.max + 1 }, (_, i) => (typeof field.sample === 'number' ? field.sample + i : field.sample));
        out.push({ label: `more than ${field.max}`, value: many });
      }
      if (field.unique) out.push({ label: 'duplicates', value: [field.sample, field.sample] });
      // each element: the element's own bad values, at index 0
      const element = mutationsOf({ ...field.of, required: false, nullable: false }).filter((m) => !m.remove);
      for (const m of element) {
        const count = Math.max(field.min ?? 1, 1);
        const items = Array.from({ length: count }, (_, i) => (typeof field.sample === 'number' ? field.sample + i + 1 : field.sample));
        items[0] = m.value;
        out.push({ label: `element ${m.label}`, value: items, at: [0] });
      }
      break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The endpoints
// ---------------------------------------------------------------------------

type Request = Record<string, unknown>;
interface EndpointSpec {
  name: string;
  /** Every way the client reaches the endpoint with a request object. */
  calls: Record<string, (client: RxVoiceClient, request: Request) => Observable<unknown>>;
  base: Request;
  /** Fields by path (dots for nested objects); the loc is ['body', ...path]. */
  fields: Record<string, Field>;
  /** Issue location prefix (default ['body']). */
  prefix?: (string | number)[];
}

const wav = { data: new Uint8Array([82, 73, 70, 70, 0, 0, 0, 0, 87, 65, 86, 69]), filename: 'sample.wav' };
const txt = { data: new TextEncoder().encode('Once upon a time.'), filename: 'story.txt' };

const language: Field = { kind: 'language', required: true };
const optionalLanguage: Field = { kind: 'language' };
const projectName: Field = { kind: 'string', min: 3, max: 255, nullable: true };
const projectDescription: Field = { kind: 'string', min: 3, max: 5000, nullable: true };
const gender = [0, 1, 2, 9] as const;
const dictionaries: Field = { kind: 'array', of: { kind: 'int' }, min: 1, nullable: true, sample: 4 };
const folderId: Field = { kind: 'int', min: 1, nullable: true };
const targetLanguages: Field = { kind: 'array', of: { kind: 'language' }, min: 1, required: true, sample: 'de-de' };

/** An upload field: a wrong extension, a wrong data type, or missing. */
const uploadMutations = (required: boolean): Mutation[] => [
  ...(required ? [{ label: 'missing', value: undefined, remove: true }] : []),
  { label: 'a wrong extension', value: { data: new Uint8Array([1, 2, 3]), filename: 'sample.exe' } },
  { label: 'no name and no type', value: { data: new Uint8Array([1, 2, 3]) } },
  { label: 'a number', value: { data: 42, filename: 'sample.wav' } },
];

const ENDPOINTS: EndpointSpec[] = [
  {
    name: 'POST /text-to-sound',
    calls: {
      'sound.create': (c, r) => c.sound.create(r as never),
      textToSound: (c, r) => c.textToSound(r as never),
    },
    base: { prompt: 'rain on a tin roof', duration: 4, audio_type: 'sound', project_name: 'Rain', project_description: 'Some rain' },
    fields: {
      prompt: { kind: 'string', min: 1, required: true },
      duration: { kind: 'number', positive: true, max: 10 },
      audio_type: { kind: 'enum', values: ['sound', 'music'] },
      project_name: projectName,
      project_description: projectDescription,
    },
  },
  {
    name: 'POST /tts',
    calls: {
      'speech.create': (c, r) => c.speech.create(r as never),
      'speech.task': (c, r) => c.speech.task(r as never),
    },
    base: { text: 'Hello there.', voice_id: 1, language: 'en-us', gender: 1, project_name: 'Hello', project_description: 'Greeting' },
    fields: {
      text: { kind: 'string', min: 1, required: true },
      voice_id: { kind: 'int', min: 0, required: true },
      language,
      gender: { kind: 'enum', values: gender },
      project_name: projectName,
      project_description: projectDescription,
    },
  },
  {
    name: 'POST /tts-stream',
    calls: { ttsStream: (c, r) => c.ttsStream(r as never) },
    base: {
      text: 'Hello there.',
      voice_id: 1,
      language: 'en-us',
      speech_model: 'beta',
      enhance_named_entities_pronunciation: false,
      output_configuration: { format: 'wav', sample_rate: 16000, apply_enhancement: false },
      voice_settings: { enhance_reference_audio_quality: false, maintain_source_accent: false, speaking_rate: 1 },
    },
    fields: {
      text: { kind: 'string', min: 3, max: 3000, required: true },
      voice_id: { kind: 'int', min: 0, required: true },
      language,
      speech_model: { kind: 'string' },
      enhance_named_entities_pronunciation: { kind: 'bool' },
      output_configuration: { kind: 'object' },
      'output_configuration.format': { kind: 'enum', values: ['wav', 'flac', 'mp3', 'adts', 'pcm_s16le'] },
      'output_configuration.sample_rate': { kind: 'int', min: 8000, max: 48000, nullable: true },
      'output_configuration.apply_enhancement': { kind: 'bool', nullable: true },
      voice_settings: { kind: 'object' },
      'voice_settings.enhance_reference_audio_quality': { kind: 'bool' },
      'voice_settings.maintain_source_accent': { kind: 'bool' },
      'voice_settings.speaking_rate': { kind: 'number', min: 0.25, max: 4, nullable: true },
    },
  },
  {
    name: 'POST /create-custom-voice',
    calls: { 'voices.create': (c, r) => c.voices.create(r as never) },
    base: { voice_name: 'Mine', gender: 2, file: wav, description: 'Calm', age: 30, enhance_audio: false, language: 'en-us' },
    fields: {
      voice_name: { kind: 'string', min: 1, required: true },
      gender: { kind: 'enum', values: gender, required: true },
      description: { kind: 'string', nullable: true },
      age: { kind: 'int', min: 1 },
      enhance_audio: { kind: 'bool' },
      language: optionalLanguage,
    },
  },
  {
    name: 'POST /create-story',
    calls: {
      'stories.create': (c, r) => c.stories.create(r as never),
      story: (c, r) => c.story(r as never),
    },
    base: { file: txt, source_language: 'en-us', title: 'Tale', description: 'A tale', narrator_voice_id: 1, chosen_dictionaries: [1], folder_id: 2 },
    fields: {
      source_language: language,
      title: { kind: 'string', min: 1 },
      description: { kind: 'string' },
      narrator_voice_id: { kind: 'int', min: 0 },
      chosen_dictionaries: dictionaries,
      folder_id: folderId,
    },
  },
  {
    name: 'POST /project-setup',
    calls: {
      'dubbing.projectSetup': (c, r) => c.dubbing.projectSetup(r as never),
      projectSetup: (c, r) => c.projectSetup(r as never),
    },
    base: {
      media_url: 'https://example.com/video.mp4',
      source_language: 'en-us',
      target_languages: ['de-de', 'fr-fr'],
      project_name: 'Dub',
      project_description: 'A dub',
      selected_audio_tracks: [0],
      add_output_as_an_audio_track: true,
      chosen_dictionaries: [1],
      folder_id: 1,
    },
    fields: {
      media_url: { kind: 'url', required: true },
      source_language: language,
      target_languages: targetLanguages,
      project_name: projectName,
      project_description: projectDescription,
      selected_audio_tracks: { kind: 'array', of: { kind: 'int', min: 0 }, min: 1, max: 2, nullable: true, sample: 0 },
      add_output_as_an_audio_track: { kind: 'bool', nullable: true },
      chosen_dictionaries: dictionaries,
      folder_id: folderId,
    },
  },
  {
    name: 'POST /end-to-end-dubbing',
    calls: {
      'dubbing.create': (c, r) => c.dubbing.create(r as never),
      endToEndDubbing: (c, r) => c.endToEndDubbing(r as never),
    },
    base: {
      video_url: 'https://example.com/video.mp4',
      source_language: 'en-us',
      target_languages: ['de-de'],
      project_name: 'Dub',
      project_description: 'A dub',
      chosen_dictionaries: [3],
      folder_id: 7,
    },
    fields: {
      video_url: { kind: 'url', required: true },
      source_language: language,
      target_languages: targetLanguages,
      project_name: projectName,
      project_description: projectDescription,
      chosen_dictionaries: dictionaries,
      folder_id: folderId,
    },
  },
  {
    name: 'POST /translation',
    calls: {
      'translation.create': (c, r) => c.translation.create(r as never),
      translate: (c, r) => c.translate(r as never),
    },
    base: {
      texts: ['Hello', 'World'],
      source_language: 'en-us',
      target_language: 'de-de',
      formality: 1,
      gender: 2,
      age: 40,
      chosen_dictionaries: [2],
      project_name: 'Words',
      project_description: 'Some words',
    },
    fields: {
      texts: { kind: 'array', of: { kind: 'string', min: 1 }, min: 1, required: true, sample: 'Hi' },
      source_language: language,
      target_language: language,
      formality: { kind: 'enum', values: [1, 2], nullable: true },
      gender: { kind: 'enum', values: gender, nullable: true },
      age: { kind: 'int', min: 1, nullable: true },
      chosen_dictionaries: dictionaries,
      project_name: projectName,
      project_description: projectDescription,
    },
  },
  {
    name: 'POST /translation/stream',
    calls: {
      translateStream: (c, r) => c.translateStream(r as never),
      translateStreamEvents: (c, r) => c.translateStreamEvents(r as never),
    },
    base: { text: 'Hello', source_language: 'en-us', target_language: 'de-de', formality: 2, gender: 1 },
    fields: {
      text: { kind: 'string', min: 1, required: true },
      source_language: language,
      target_language: language,
      formality: { kind: 'enum', values: [1, 2], nullable: true },
      gender: { kind: 'enum', values: gender, nullable: true },
    },
  },
  {
    name: 'POST /transcription',
    calls: {
      'transcription.create': (c, r) => c.transcription.create(r as never),
      transcribe: (c, r) => c.transcribe(r as never),
    },
    base: { language: 'en-us', media_url: 'https://example.com/a.mp3' },
    fields: { language, media_url: { kind: 'url' } },
  },
  {
    name: 'POST /sub',
    calls: {
      'subtitles.create': (c, r) => c.subtitles.create(r as never),
      subtitle: (c, r) => c.subtitle(r as never),
    },
    base: { language: 'en-us', media_url: 'https://example.com/a.mp3', target_language: 'de-de', subtitle_format: 'vtt' },
    fields: {
      language,
      media_url: { kind: 'url' },
      target_language: optionalLanguage,
      subtitle_format: { kind: 'enum', values: ['srt', 'vtt'] },
    },
  },
];

/** Upload fields, checked apart from the zod fields (same `loc` rule). */
const UPLOADS: { name: string; call: (c: RxVoiceClient, r: Request) => Observable<unknown>; base: Request; field: string; required: boolean }[] = [
  { name: 'POST /create-custom-voice', call: (c, r) => c.voices.create(r as never), base: { voice_name: 'Mine', gender: 2, file: wav }, field: 'file', required: true },
  { name: 'POST /create-story', call: (c, r) => c.stories.create(r as never), base: { file: txt, source_language: 'en-us' }, field: 'file', required: true },
  { name: 'POST /audio-separation', call: (c, r) => c.separation.create(r as never), base: { media_file: wav }, field: 'media_file', required: true },
  { name: 'POST /audio-separation (task)', call: (c, r) => c.audioSeparation(r as never), base: { media_file: wav }, field: 'media_file', required: true },
  { name: 'POST /transcription', call: (c, r) => c.transcription.create(r as never), base: { language: 'en-us', media_file: wav }, field: 'media_file', required: false },
  { name: 'POST /sub', call: (c, r) => c.subtitles.create(r as never), base: { language: 'en-us', media_file: wav }, field: 'media_file', required: false },
];

/** Path parameters: task ids (status calls) and run ids (result calls). */
const TASK_ID_CALLS: Record<string, (c: RxVoiceClient, id: unknown) => Observable<unknown>> = {
  'sound.status': (c, id) => c.sound.status(id as string),
  'speech.status': (c, id) => c.speech.status(id as string),
  'separation.status': (c, id) => c.separation.status(id as string),
  'stories.status': (c, id) => c.stories.status(id as string),
  'dubbing.status': (c, id) => c.dubbing.status(id as string),
  'dubbing.projectSetupStatus': (c, id) => c.dubbing.projectSetupStatus(id as string),
  'translation.status': (c, id) => c.translation.status(id as string),
  'transcription.status': (c, id) => c.transcription.status(id as string),
  'subtitles.status': (c, id) => c.subtitles.status(id as string),
};
const RUN_ID_CALLS: Record<string, (c: RxVoiceClient, id: unknown) => Observable<unknown>> = {
  'sound.result': (c, id) => c.sound.result(id as number),
  'speech.result': (c, id) => c.speech.result(id as number),
  'separation.result': (c, id) => c.separation.result(id as number),
  'stories.run': (c, id) => c.stories.run(id as number),
  'stories.translatedResult': (c, id) => c.stories.translatedResult(id as number, 'de-de'),
  'dubbing.result': (c, id) => c.dubbing.result(id as number),
  'dubbing.projectSetupResult': (c, id) => c.dubbing.projectSetupResult(id as number),
  'translation.result': (c, id) => c.translation.result(id as number),
  'transcription.result': (c, id) => c.transcription.result(id as number),
  'subtitles.result': (c, id) => c.subtitles.result(id as number),
};
const BAD_TASK_IDS: Mutation[] = [
  { label: 'empty', value: '' },
  { label: 'a number', value: 42 },
  { label: 'null', value: null },
  { label: 'undefined', value: undefined },
  { label: 'an object', value: { id: 'x' } },
];
const BAD_RUN_IDS: Mutation[] = [
  { label: 'zero', value: 0 },
  { label: 'negative', value: -4 },
  { label: 'a fraction', value: 2.5 },
  { label: 'a numeric string', value: '12' },
  { label: 'null', value: null },
  { label: 'undefined', value: undefined },
  { label: 'NaN', value: Number.NaN },
  { label: 'Infinity', value: Number.POSITIVE_INFINITY },
];
const BULK_CALLS: Record<string, (c: RxVoiceClient, ids: unknown) => Observable<unknown>> = {
  'sound.results': (c, ids) => c.sound.results(ids as number[]),
  'speech.fetchResults': (c, ids) => c.speech.fetchResults(ids as number[]),
};
const BAD_RUN_ID_LISTS: (Mutation & { loc: (string | number)[] })[] = [
  { label: 'empty', value: [], loc: ['body', 'run_ids'] },
  { label: 'not an array', value: 'x', loc: ['body', 'run_ids'] },
  { label: 'null', value: null, loc: ['body', 'run_ids'] },
  { label: 'a zero', value: [1, 0], loc: ['body', 'run_ids', 1] },
  { label: 'a negative', value: [-1, 2], loc: ['body', 'run_ids', 0] },
  { label: 'a fraction', value: [1, 2, 3.5], loc: ['body', 'run_ids', 2] },
  { label: 'a string', value: [1, '2'], loc: ['body', 'run_ids', 1] },
  { label: 'a null', value: [null, 2], loc: ['body', 'run_ids', 0] },
];

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

function setPath(target: Request, path: string[], value: unknown, remove: boolean): Request {
  const copy = structuredClone(target);
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object') throw new Error(`no object at ${key}`);
    node = next as Record<string, unknown>;
  }
  const last = path[path.length - 1] as string;
  if (remove) delete node[last];
  else node[last] = value;
  return copy;
}

let emu: Emulator;
let client: RxVoiceClient;
let cases = 0;

beforeAll(async () => {
  emu = await startEmulator({ synth: 'tone' });
  client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, maxRetries: 0, warn: () => undefined });
});
afterAll(async () => {
  await client?.close();
  await emu?.close();
  console.info(`[bad-input] ${cases} cases rejected locally`);
});

/** Make an operator (or sink, or session) with bad options: a local ValidationError with an issue at `loc`, thrown at once. */
function expectThrown(make: () => unknown, loc: (string | number)[]): void {
  cases++;
  let error: unknown;
  try {
    make();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ValidationError);
  const validation = error as ValidationError;
  expect(validation.source).toBe('local');
  expect(validation.issues.map((i) => i.loc)).toContainEqual(loc);
}

/** Call, expect a local ValidationError with an issue at `loc`, and nothing sent. */
async function expectRejected(make: () => Observable<unknown>, loc: (string | number)[]): Promise<void> {
  cases++;
  const before = emu.requests.length;
  let source$: Observable<unknown>;
  try {
    source$ = make();
  } catch (error) {
    throw new Error(`the call threw synchronously instead of erroring the Observable: ${String(error)}`);
  }
  const error = await rejectionOf(lastValueFrom(source$));
  expect(error).toBeInstanceOf(ValidationError);
  const validation = error as ValidationError;
  expect(validation.source).toBe('local');
  expect(validation.issues.map((i) => i.loc)).toContainEqual(loc);
  for (const issue of validation.issues) {
    expect(typeof issue.msg).toBe('string');
    expect(typeof issue.type).toBe('string');
  }
  expect(emu.requests.length).toBe(before);
}

describe('the base requests are valid (the table tests what it claims)', () => {
  for (const spec of ENDPOINTS) {
    for (const [callName, call] of Object.entries(spec.calls)) {
      it(`${spec.name} via ${callName}: the base request is sent`, async () => {
        const before = emu.requests.length;
        // Only the first emission matters (created / first piece / the answer).
        await new Promise<void>((resolve, reject) => {
          const subscription = call(client, spec.base).subscribe({
            next: () => {
              subscription?.unsubscribe();
              resolve();
            },
            error: reject,
            complete: () => resolve(),
          });
        });
        expect(emu.requests.length).toBeGreaterThan(before);
      });
    }
  }
});

for (const spec of ENDPOINTS) {
  describe(`${spec.name}: bad fields rejected locally`, () => {
    for (const [callName, call] of Object.entries(spec.calls)) {
      for (const bad of [null, 'a string', 42, [spec.base]]) {
        it(`${callName}: the whole request as ${JSON.stringify(bad)?.slice(0, 20)}`, async () => {
          await expectRejected(() => call(client, bad as never), spec.prefix ?? ['body']);
        });
      }
      for (const [path, field] of Object.entries(spec.fields)) {
        const segments = path.split('.');
        for (const mutation of mutationsOf(field)) {
          it(`${callName}: ${path} ${mutation.label}`, async () => {
            const request = setPath(spec.base, segments, mutation.value, mutation.remove === true);
            await expectRejected(() => call(client, request), [...(spec.prefix ?? ['body']), ...segments, ...(mutation.at ?? [])]);
          });
        }
      }
    }
  });
}

describe('uploads: bad files rejected locally', () => {
  for (const upload of UPLOADS) {
    for (const mutation of uploadMutations(upload.required)) {
      it(`${upload.name}: ${upload.field} ${mutation.label}`, async () => {
        const request = setPath(upload.base, [upload.field], mutation.value, mutation.remove === true);
        await expectRejected(() => upload.call(client, request), ['body', upload.field]);
      });
    }
  }
  it('transcription and subtitles: media_file and media_url together, or neither', async () => {
    for (const call of [(r: Request) => client.transcription.create(r as never), (r: Request) => client.subtitles.create(r as never)]) {
      await expectRejected(() => call({ language: 'en-us' }), ['body', 'media_file']);
      await expectRejected(() => call({ language: 'en-us', media_file: wav, media_url: 'https://example.com/a.mp3' }), ['body', 'media_file']);
    }
  });
});

describe('path parameters rejected locally', () => {
  for (const [name, call] of Object.entries(TASK_ID_CALLS)) {
    for (const mutation of BAD_TASK_IDS) {
      it(`${name}: task_id ${mutation.label}`, async () => {
        await expectRejected(() => call(client, mutation.value), ['path', 'task_id']);
      });
    }
  }
  for (const [name, call] of Object.entries(RUN_ID_CALLS)) {
    for (const mutation of BAD_RUN_IDS) {
      it(`${name}: run_id ${mutation.label}`, async () => {
        await expectRejected(() => call(client, mutation.value), ['path', 'run_id']);
      });
    }
  }
  for (const mutation of mutationsOf({ kind: 'language', required: true }).filter((m) => !m.remove)) {
    it(`stories.translatedResult: target_language ${mutation.label}`, async () => {
      await expectRejected(() => client.stories.translatedResult(3, mutation.value as string), ['path', 'target_language']);
    });
  }
  for (const [name, call] of Object.entries(BULK_CALLS)) {
    for (const mutation of BAD_RUN_ID_LISTS) {
      it(`${name}: run_ids ${mutation.label}`, async () => {
        await expectRejected(() => call(client, mutation.value), mutation.loc);
      });
    }
  }
});

describe('live speak options rejected before any connection', () => {
  const options: { label: string; options: Record<string, unknown>; loc: (string | number)[] }[] = [
    { label: 'voice_id missing', options: {}, loc: ['session.start', 'voice_id'] },
    ...[-1, 1.5, '1', null, true, Number.NaN].map((v) => ({ label: `voice_id ${String(v)}`, options: { voice_id: v }, loc: ['session.start', 'voice_id'] })),
    ...['EN-US', 'english', '', 2.5, true].map((v) => ({ label: `language ${JSON.stringify(v)}`, options: { voice_id: 1, language: v }, loc: ['session.start', 'language'] })),
    ...['ogg', 'WAV', 1, null].map((v) => ({ label: `output_format ${JSON.stringify(v)}`, options: { voice_id: 1, output_format: v }, loc: ['session.start', 'output_format'] })),
    ...[0, -1, '1', 61, Number.NaN, null].map((v) => ({ label: `idle_timeout ${String(v)}`, options: { voice_id: 1, idle_timeout: v }, loc: ['session.start', 'idle_timeout'] })),
    ...[7999, 48001, 16000.5, '16000'].map((v) => ({ label: `sample_rate ${String(v)}`, options: { voice_id: 1, sample_rate: v }, loc: ['session.start', 'sample_rate'] })),
    ...['yes', 1].map((v) => ({ label: `word_timestamps ${String(v)}`, options: { voice_id: 1, word_timestamps: v }, loc: ['session.start', 'word_timestamps'] })),
    ...[0.1, 5, '1'].map((v) => ({ label: `speaking_rate ${String(v)}`, options: { voice_id: 1, speaking_rate: v }, loc: ['session.start', 'speaking_rate'] })),
    ...['enhance_named_entities_pronunciation', 'enhance_reference_audio_quality', 'maintain_source_accent', 'apply_enhancement'].map((f) => ({
      label: `${f} a string`,
      options: { voice_id: 1, [f]: 'true' },
      loc: ['session.start', f],
    })),
    { label: 'reconnect.maxAttempts -1', options: { voice_id: 1, reconnect: { maxAttempts: -1 } }, loc: ['options', 'reconnect', 'maxAttempts'] },
    { label: 'reconnect.maxAttempts 1.5', options: { voice_id: 1, reconnect: { maxAttempts: 1.5 } }, loc: ['options', 'reconnect', 'maxAttempts'] },
    { label: 'reconnect.baseDelayMs -5', options: { voice_id: 1, reconnect: { maxAttempts: 1, baseDelayMs: -5 } }, loc: ['options', 'reconnect', 'baseDelayMs'] },
    { label: 'readyTimeoutMs 0', options: { voice_id: 1, readyTimeoutMs: 0 }, loc: ['options', 'readyTimeoutMs'] },
    { label: 'maxPayload -1', options: { voice_id: 1, maxPayload: -1 }, loc: ['options', 'maxPayload'] },
  ];
  for (const { label, options: speakOptions, loc } of options) {
    it(`speak: ${label}`, async () => {
      const upgrades = emu.requests.filter((r) => r.method === 'UPGRADE').length;
      // options are checked when the operator is made: a synchronous throw
      expectThrown(() => client.speak(speakOptions as never), loc);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(emu.requests.filter((r) => r.method === 'UPGRADE').length).toBe(upgrades);
    });
  }
  it('a valid speak does connect (the check above is not vacuous)', async () => {
    await lastValueFrom(of('Hi.').pipe(client.speak({ voice_id: 1, idle_timeout: 0.05 })));
    expect(emu.requests.some((r) => r.method === 'UPGRADE')).toBe(true);
  });
});

describe('one policy: bad options throw a ValidationError when the operator, sink or source is made', () => {
  const speakStub = () => of({ type: 'done' as const });
  const cases: { label: string; make: () => unknown; loc: (string | number)[] }[] = [
    ...[-1, Number.NaN, Number.POSITIVE_INFINITY, '5'].map((v) => ({
      label: `segmentSentences idleTimeout ${String(v)}`,
      make: () => segmentSentences({ idleTimeout: v as number }),
      loc: ['options', 'idleTimeout'],
    })),
    { label: 'segmentSentences firstIdleTimeout -5', make: () => segmentSentences({ firstIdleTimeout: -5 }), loc: ['options', 'firstIdleTimeout'] },
    { label: 'segmentSentences scheduler {}', make: () => segmentSentences({ scheduler: {} as never }), loc: ['options', 'scheduler'] },
    { label: 'segmentSentences locale 5', make: () => segmentSentences({ locale: 5 as never }), loc: ['options', 'locale'] },
    // the sentence core no longer clamps a tiny buffer: it refuses it
    ...[1, 15, 16.5].map((v) => ({ label: `segmentSentences maxBufferSize ${v}`, make: () => segmentSentences({ maxBufferSize: v }), loc: ['options', 'maxBufferSize'] })),
    { label: 'createSentenceSegmenter maxBufferSize 8', make: () => createSentenceSegmenter({ maxBufferSize: 8 }), loc: ['options', 'maxBufferSize'] },
    ...[-1, 1.5].map((v) => ({ label: `resubmitSkipped maxAttempts ${v}`, make: () => resubmitSkipped(speakStub, { maxAttempts: v }), loc: ['options', 'maxAttempts'] })),
    { label: 'resubmitSkipped without an operator', make: () => resubmitSkipped(undefined as never), loc: ['options', 'speakOperator'] },
    { label: 'wordTimeline durationOf 3', make: () => wordTimeline({ durationOf: 3 as never }), loc: ['options', 'durationOf'] },
    { label: 'toFile path ""', make: () => toFile(''), loc: ['options', 'path'] },
    { label: 'toFile mode -1', make: () => toFile('x.wav', { mode: -1 }), loc: ['options', 'mode'] },
    { label: 'toFile join "yes"', make: () => toFile('x.wav', { join: 'yes' as never }), loc: ['options', 'join'] },
    { label: 'toWavFile format 8-bit', make: () => toWavFile('x.wav', { format: { sampleRate: 22050, channels: 1, bitsPerSample: 8, audioFormat: 1 } }), loc: ['options', 'format', 'bitsPerSample'] },
    { label: 'toWavFile fsync 1', make: () => toWavFile('x.wav', { fsync: 1 as never }), loc: ['options', 'fsync'] },
    { label: 'toWritable not a stream', make: () => toWritable({} as never), loc: ['options', 'stream'] },
    { label: 'toAudioDevice killGraceMs -1', make: () => toAudioDevice({ killGraceMs: -1 }), loc: ['options', 'killGraceMs'] },
    { label: 'toAudioDevice player without command', make: () => toAudioDevice({ player: { command: '' } }), loc: ['options', 'player', 'command'] },
    { label: 'fromFile chunkSize 0', make: () => fromFile('x.txt', { chunkSize: 0 }), loc: ['options', 'chunkSize'] },
    { label: 'parseSse maxLineLength 0', make: () => parseSse({ maxLineLength: 0 }), loc: ['options', 'maxLineLength'] },
    { label: 'parseSse maxEventSize 1.5', make: () => parseSse({ maxEventSize: 1.5 }), loc: ['options', 'maxEventSize'] },
  ];
  for (const { label, make, loc } of cases) {
    it(label, () => expectThrown(make, loc));
  }

  it('valid options do not throw (the checks above are not vacuous)', () => {
    expect(() => segmentSentences({ idleTimeout: 0, firstIdleTimeout: 250, maxBufferSize: 16, locale: 'de-de' })).not.toThrow();
    expect(() => resubmitSkipped(speakStub, { maxAttempts: 0 })).not.toThrow();
    expect(() => wordTimeline({ durationOf: () => 1 })).not.toThrow();
    expect(() => toFile('x.wav', { mode: 0o600, join: false, fsync: false })).not.toThrow();
    expect(() => toWavFile('x.wav', { format: { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 } })).not.toThrow();
    expect(() => toWritable(new PassThrough(), { end: true })).not.toThrow();
    expect(() => toAudioDevice({ killGraceMs: 0, player: { command: 'aplay', args: ['-q'] } })).not.toThrow();
    expect(() => fromFile('x.txt', { chunkSize: 1 })).not.toThrow();
    expect(() => parseSse({ maxLineLength: 1, maxEventSize: 1 })).not.toThrow();
  });
});
