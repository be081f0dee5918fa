/**
 * The service contract as plain literals, written by hand from the service interface
 * (spec/service-interface.md) and the design notes (DESIGN.md), where the design fixes
 * what the interface leaves open. Nothing here is generated from, or imported from, the
 * project's code: the contract tests check the emulator (over raw HTTP and WebSocket) and
 * the client (what it sends to a raw server) against this table, so a path, a field name,
 * a limit or a close code changed in the shared code (routes, schemas, protocol) fails them.
 *
 * Paths are templates: `{task_id}`, `{run_id}` and `{target_language}` are filled in by
 * the tests.
 */

/** HTTP authentication: the header every endpoint takes, and the answer without a valid key (DESIGN). */
export const AUTH = {
  header: 'x-api-key',
  missingOrInvalid: { status: 401, fields: ['error', 'status'] },
} as const;

/** A request body that fails validation: 422 with `detail` = list of {loc, msg, type}. */
export const VALIDATION = { status: 422, field: 'detail', itemFields: ['loc', 'msg', 'type'] } as const;

/** The values of every task status field. */
export const TASK_STATUSES = ['SUCCESS', 'PENDING', 'TIMEOUT', 'ERROR', 'PAYMENT_REQUIRED'] as const;

/** Creation calls answer `{ task_id }` (a string); status calls `{ status, run_id }` (run_id an integer on SUCCESS). */
export const TASK_CREATED_FIELD = 'task_id';
export const TASK_STATUS_FIELDS = ['status', 'run_id'] as const;

/** A request body: JSON, or multipart form fields (a `file` entry is sent as a file). */
export type Body =
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'multipart'; fields: Record<string, string>; files: Record<string, { name: string; type: string; content: 'wav' | 'text' }> };

export interface TaskFamily {
  name: string;
  create: { method: 'POST'; path: string; body: Body; required: readonly string[] };
  status: { method: 'GET'; path: string };
  /** The result: audio bytes, or a JSON object with these fields. */
  result: { method: 'GET'; path: string; answer: 'bytes' | { fields: readonly string[] } };
}

const wavFile = { name: 'sample.wav', type: 'audio/wav', content: 'wav' } as const;

/** A family created from multipart `language` and `media_url` (transcription and subtitles). */
function mediaFamily(name: string, path: string, resultPath: string, resultFields: readonly string[]): TaskFamily {
  return {
    name,
    create: { method: 'POST', path, body: { kind: 'multipart', fields: { language: 'en-us', media_url: 'https://example.com/talk.mp3' }, files: {} }, required: ['language'] },
    status: { method: 'GET', path: `${path}/{task_id}` },
    result: { method: 'GET', path: resultPath, answer: { fields: resultFields } },
  };
}

/** Every task-pattern family: creation, status and result, each path and method as the contract fixes it. */
export const TASK_FAMILIES: readonly TaskFamily[] = [
  {
    name: 'text-to-sound',
    create: { method: 'POST', path: '/text-to-sound', body: { kind: 'json', value: { prompt: 'rain on a tin roof', duration: 2 } }, required: ['prompt'] },
    status: { method: 'GET', path: '/text-to-sound/{task_id}' },
    result: { method: 'GET', path: '/text-to-sound-result/{run_id}', answer: 'bytes' },
  },
  {
    name: 'tts',
    create: {
      method: 'POST',
      path: '/tts',
      body: { kind: 'json', value: { text: 'Hello there.', voice_id: 1, language: 'en-us' } },
      required: ['text', 'voice_id', 'language'],
    },
    status: { method: 'GET', path: '/tts/{task_id}' },
    result: { method: 'GET', path: '/tts-result/{run_id}', answer: 'bytes' },
  },
  {
    name: 'translation',
    create: {
      method: 'POST',
      path: '/translation',
      body: { kind: 'json', value: { texts: ['Good morning.', 'See you soon.'], source_language: 'en-us', target_language: 'de-de' } },
      required: ['texts', 'source_language', 'target_language'],
    },
    status: { method: 'GET', path: '/translation/{task_id}' },
    result: { method: 'GET', path: '/translation-result/{run_id}', answer: { fields: ['texts'] } },
  },
  mediaFamily('transcription', '/transcription', '/transcription-result/{run_id}', ['transcript']),
  // The contract leaves /sub's shapes open: its result fields are not part of the table.
  mediaFamily('sub', '/sub', '/sub-result/{run_id}', []),
  {
    name: 'end-to-end-dubbing',
    create: {
      method: 'POST',
      path: '/end-to-end-dubbing',
      body: { kind: 'json', value: { video_url: 'https://example.com/film.mp4', source_language: 'en-us', target_languages: ['de-de'] } },
      required: ['video_url', 'source_language', 'target_languages'],
    },
    status: { method: 'GET', path: '/end-to-end-dubbing/{task_id}' },
    result: { method: 'GET', path: '/dubbed-run-info/{run_id}', answer: { fields: ['video_url', 'audio_url', 'transcript'] } },
  },
  {
    name: 'project-setup',
    create: {
      method: 'POST',
      path: '/project-setup',
      body: { kind: 'json', value: { media_url: 'https://example.com/film.mp4', source_language: 'en-us', target_languages: ['de-de', 'fr-fr'] } },
      required: ['media_url', 'source_language', 'target_languages'],
    },
    status: { method: 'GET', path: '/project-setup/{task_id}' },
    result: { method: 'GET', path: '/project-setup-result/{run_id}', answer: { fields: ['run_id', 'project_details'] } },
  },
  {
    name: 'audio-separation',
    create: { method: 'POST', path: '/audio-separation', body: { kind: 'multipart', fields: {}, files: { media_file: wavFile } }, required: ['media_file'] },
    status: { method: 'GET', path: '/audio-separation/{task_id}' },
    result: { method: 'GET', path: '/audio-separation-result/{run_id}', answer: { fields: ['foreground_audio_url', 'background_audio_url'] } },
  },
  {
    name: 'story',
    create: {
      method: 'POST',
      path: '/create-story',
      body: { kind: 'multipart', fields: { source_language: 'en-us' }, files: { file: { name: 'story.txt', type: 'text/plain', content: 'text' } } },
      required: ['file', 'source_language'],
    },
    status: { method: 'GET', path: '/story/{task_id}' },
    result: { method: 'GET', path: '/story-run/{run_id}', answer: { fields: ['audio_url', 'dialogue_url', 'transcript'] } },
  },
];

/** The fields of project-setup's `project_details` (DESIGN). */
export const PROJECT_DETAILS_FIELDS = ['project_name', 'project_description', 'created_at', 'source_language', 'target_languages', 'folder_id', 'studio_url'] as const;
/** A dialogue item of a transcript. */
export const DIALOGUE_ITEM_FIELDS = ['start', 'end', 'text', 'speaker'] as const;

/** Endpoints outside the task pattern. */
export const ENDPOINTS = {
  listVoices: { method: 'GET', path: '/list-voices', recordFields: ['id', 'voice_name', 'gender', 'age', 'description', 'language', 'is_published'] },
  createCustomVoice: {
    method: 'POST',
    path: '/create-custom-voice',
    fields: { voice_name: 'Contract voice', gender: '2' },
    files: { file: wavFile },
    required: ['voice_name', 'gender', 'file'],
    answerField: 'voice_id',
  },
  /** Bulk results: 2 to 5 unique run ids of one kind; the answer maps run id -> { output_url }. */
  textToSoundResults: { method: 'POST', path: '/text-to-sound-results', family: 'text-to-sound', entryField: 'output_url' },
  fetchTtsResults: { method: 'POST', path: '/fetch-tts-results', family: 'tts', entryField: 'output_url' },
  ttsStream: {
    method: 'POST',
    path: '/tts-stream',
    body: { text: 'Streaming speech, please.', voice_id: 1, language: 'en-us', output_configuration: { format: 'wav' } },
    creditsHeader: 'x-credits-required',
  },
  translationStream: {
    method: 'POST',
    path: '/translation/stream',
    body: { text: 'Good morning. See you soon.', source_language: 'en-us', target_language: 'de-de' },
    contentType: 'text/event-stream',
    creditsHeader: 'x-credits-required',
  },
  translatedStoryResult: {
    method: 'GET',
    path: '/translated-story-result/{run_id}/{target_language}',
    query: 'include_transcript',
    fields: ['audio_url', 'dialogue_url'],
    transcriptField: 'transcript',
  },
} as const;

/** One limit: a body on an endpoint and the status it must get (200 inside the limit, 422 outside). */
export interface LimitCase {
  name: string;
  path: string;
  body: Record<string, unknown>;
  status: 200 | 422;
}

const sound = { prompt: 'wind' };
const tts = { text: 'Hello there.', voice_id: 1, language: 'en-us' };
const setup = { media_url: 'https://example.com/film.mp4', source_language: 'en-us', target_languages: ['de-de'] };
const stream = { voice_id: 1, language: 'en-us' };

/** The limits of the contract (Limits table, field rules, enumerations), each at and past its edge. */
export const LIMITS: readonly LimitCase[] = [
  { name: 'duration 10 (the maximum)', path: '/text-to-sound', body: { ...sound, duration: 10 }, status: 200 },
  { name: 'duration 10.5', path: '/text-to-sound', body: { ...sound, duration: 10.5 }, status: 422 },
  { name: 'audio_type music', path: '/text-to-sound', body: { ...sound, audio_type: 'music' }, status: 200 },
  { name: 'audio_type noise', path: '/text-to-sound', body: { ...sound, audio_type: 'noise' }, status: 422 },
  { name: 'project_name of 3', path: '/text-to-sound', body: { ...sound, project_name: 'abc' }, status: 200 },
  { name: 'project_name of 2', path: '/text-to-sound', body: { ...sound, project_name: 'ab' }, status: 422 },
  { name: 'project_name of 255', path: '/text-to-sound', body: { ...sound, project_name: 'p'.repeat(255) }, status: 200 },
  { name: 'project_name of 256', path: '/text-to-sound', body: { ...sound, project_name: 'p'.repeat(256) }, status: 422 },
  { name: 'project_name null', path: '/text-to-sound', body: { ...sound, project_name: null }, status: 200 },
  { name: 'project_description of 5000', path: '/text-to-sound', body: { ...sound, project_description: 'd'.repeat(5000) }, status: 200 },
  { name: 'project_description of 5001', path: '/text-to-sound', body: { ...sound, project_description: 'd'.repeat(5001) }, status: 422 },
  { name: 'project_description of 3', path: '/text-to-sound', body: { ...sound, project_description: 'ddd' }, status: 200 },
  { name: 'project_description of 2', path: '/text-to-sound', body: { ...sound, project_description: 'dd' }, status: 422 },
  { name: 'gender 0', path: '/tts', body: { ...tts, gender: 0 }, status: 200 },
  { name: 'gender 9', path: '/tts', body: { ...tts, gender: 9 }, status: 200 },
  { name: 'gender 3', path: '/tts', body: { ...tts, gender: 3 }, status: 422 },
  { name: 'run_ids of 1', path: '/text-to-sound-results', body: { run_ids: [1] }, status: 422 },
  { name: 'run_ids of 6', path: '/text-to-sound-results', body: { run_ids: [1, 2, 3, 4, 5, 6] }, status: 422 },
  { name: 'run_ids not unique', path: '/text-to-sound-results', body: { run_ids: [1, 1] }, status: 422 },
  { name: 'run_ids not positive', path: '/text-to-sound-results', body: { run_ids: [0, 1] }, status: 422 },
  { name: 'selected_audio_tracks of 1', path: '/project-setup', body: { ...setup, selected_audio_tracks: [0] }, status: 200 },
  { name: 'selected_audio_tracks of 2', path: '/project-setup', body: { ...setup, selected_audio_tracks: [0, 1] }, status: 200 },
  { name: 'selected_audio_tracks of 3', path: '/project-setup', body: { ...setup, selected_audio_tracks: [0, 1, 2] }, status: 422 },
  { name: 'selected_audio_tracks empty', path: '/project-setup', body: { ...setup, selected_audio_tracks: [] }, status: 422 },
  { name: 'chosen_dictionaries of 1', path: '/project-setup', body: { ...setup, chosen_dictionaries: [7] }, status: 200 },
  { name: 'chosen_dictionaries empty', path: '/project-setup', body: { ...setup, chosen_dictionaries: [] }, status: 422 },
  { name: 'folder_id 1', path: '/project-setup', body: { ...setup, folder_id: 1 }, status: 200 },
  { name: 'folder_id 0', path: '/project-setup', body: { ...setup, folder_id: 0 }, status: 422 },
  { name: 'formality 1', path: '/translation/stream', body: { text: 'Hi.', source_language: 'en-us', target_language: 'de-de', formality: 1 }, status: 200 },
  { name: 'formality 3', path: '/translation/stream', body: { text: 'Hi.', source_language: 'en-us', target_language: 'de-de', formality: 3 }, status: 422 },
  { name: 'tts-stream text of 3', path: '/tts-stream', body: { ...stream, text: 'abc' }, status: 200 },
  { name: 'tts-stream text of 2', path: '/tts-stream', body: { ...stream, text: 'ab' }, status: 422 },
  { name: 'tts-stream text of 3000 (the maximum)', path: '/tts-stream', body: { ...stream, text: 'a'.repeat(3000) }, status: 200 },
  { name: 'tts-stream text of 3001', path: '/tts-stream', body: { ...stream, text: 'a'.repeat(3001) }, status: 422 },
];

/** The custom voice's `age`: at least 1; 30 when not given. */
export const CUSTOM_VOICE_AGE = { ok: '1', tooLow: '0', default: 30 } as const;

/** POST /text-to-sound without `duration`: 8 seconds of sound (Limits: default duration 8.0). */
export const DEFAULT_SOUND_SECONDS = 8;

/** Bulk result calls take 2 to 5 run ids: the largest request that must be answered. */
export const MAX_BULK_RUN_IDS = 5;

/** The live speech WebSocket (DESIGN fixes the path). */
export const LIVE = {
  path: '/live-tts/ws',
  authHeader: 'x-api-key',
  authQuery: 'api_key',
  close: { normal: 1000, rejected: 4400, invalidKey: 4401, creditsExhausted: 4402 },
  /** Largest binary frame, bytes. */
  maxBinaryFrame: 64 * 1024,
  clientFrames: { start: 'session.start', chunk: 'text.chunk', done: 'text.done' },
  /** The only required field of session.start. */
  startRequired: ['voice_id'],
  chunkTextField: 'text',
  serverFrames: {
    ready: { type: 'session.ready', fields: ['session_id', 'run_id'] },
    segmentStart: { type: 'segment.start', fields: ['segment_id', 'text'] },
    segmentDone: { type: 'segment.done', fields: ['segment_id'] },
    segmentSkipped: { type: 'segment.skipped', fields: ['segment_id', 'text'] },
    error: { type: 'session.error', fields: ['error'] },
    done: { type: 'session.done', fields: [] },
  },
  wordTimestampFields: ['word', 'start', 'end'],
  /**
   * Live session rule 1: a complete sentence is flushed at once, never waiting for
   * idle_timeout, also when it ends a `text.chunk` (terminal punctuation, optionally closing
   * quotes/brackets and whitespace; a paragraph break; a CJK stop). Each chunk alone must get
   * its `segment.start` with `idle_timeout` at `longIdleTimeout` seconds.
   */
  sentenceEndChunks: ['Hello there.', 'How are you? ', 'Great news! ', 'It costs 3.5 dollars. ', '你好。', 'Hello there.\n\n', '"Stop!" '],
  /** Words that cannot end a sentence (DESIGN: titles such as `Dr.`): the chunk waits and joins the next. */
  heldChunks: ['See Dr.', 'Ask Mr.'],
  /** Rule 2: trailing text without a boundary waits for idle_timeout (or joins the next chunk). */
  trailingChunks: ['Hello there'],
  longIdleTimeout: 30,
} as const;
