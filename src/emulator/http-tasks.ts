/**
 * The task pattern in the emulator: creation calls for every family, their status calls
 * and their result calls (single results, bulk results with temporary addresses).
 */
import { z } from 'zod';
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  CreateStoryFieldsSchema,
  EndToEndDubbingRequestSchema,
  LanguageSchema,
  ProjectSetupRequestSchema,
  RunIdsRequestSchema,
  STORY_UPLOAD_EXTENSIONS,
  SubtitlesFieldsSchema,
  TextToSoundRequestSchema,
  TranscriptionFieldsSchema,
  TranslationRequestSchema,
  TtsRequestSchema,
  type AudioSeparationResult,
  type BulkResults,
  type DialogueItem,
  type DubbedRunInfo,
  type ProjectSetupResult,
  type RunKind,
  type StoryRun,
  type SubtitlesResult,
  type TaskCreated,
  type TaskStatus,
  type TranscriptionResult,
  type TranslatedStoryResult,
  type TranslationResult,
} from '../core/schemas.js';
import { encodeWav16 } from '../audio/wav.js';
import {
  compileRoute,
  fileUrl,
  formFields,
  formFile,
  invalidAt,
  parseFormBody,
  parseJsonBody,
  pathRunId,
  problem,
  sendBytes,
  sendJson,
  validate,
  type CompiledRoute,
  type Handler,
  type HandlerContext,
} from './http-util.js';
import {
  GENERATED_AUDIO_SAMPLE_RATE,
  MUSIC_CLIP_SECONDS,
  generateMusic,
  generateSound,
  heardTranscript,
  subtitlesOf,
  synthesizeText,
  transcriptOf,
  mediaDurationSeconds,
  translateTranscript,
  voiceOrDefault,
} from './http-media.js';
import { pseudoLocalize } from './pseudo.js';
import { resolveLanguage } from './state.js';
import type { RunRecord } from './types.js';

// ---------------------------------------------------------------------------
// Run data, per kind
// ---------------------------------------------------------------------------

interface SoundRunData {
  prompt: string;
  duration: number;
  audio_type: 'sound' | 'music';
}
interface SpeechRunData {
  text: string;
  voice_id: number;
  language: string;
}
interface TranslationRunData {
  texts: string[];
  target_language: string;
}
interface TranscriptionRunData {
  language: string;
  /** Duration of the uploaded media (a WAV's), so the transcript fits it. */
  durationSeconds: number | undefined;
}
interface SubtitlesRunData {
  language: string;
  target_language?: string;
  subtitle_format: 'srt' | 'vtt';
}
interface DubbingRunData {
  video_url: string;
  source_language: string;
  target_languages: string[];
}
interface ProjectSetupRunData {
  project_name: string | null;
  project_description: string | null;
  created_at: string;
  source_language: string;
  target_languages: string[];
  folder_id: number | null;
}
interface StoryRunData {
  text: string;
  source_language: string;
  narrator_voice_id?: number;
}
interface SeparationRunData {
  file_name: string;
  content_type: string;
  bytes: Uint8Array;
}

/** A sample story used when an uploaded .docx cannot be read as text. */
const SAMPLE_STORY =
  'The lighthouse keeper woke before dawn. The sea was calm and grey.\n' +
  'Mara: Is the lamp still burning?\n' +
  'Tom: It has not gone out in forty years.\n' +
  'They climbed the stairs together and watched the sun rise.';

// ---------------------------------------------------------------------------
// Creation
// ---------------------------------------------------------------------------

async function jsonBody(ctx: HandlerContext): Promise<unknown> {
  return parseJsonBody(await ctx.body());
}

function created(ctx: HandlerContext, kind: RunKind, data: unknown): void {
  const task = ctx.state.createTask(kind, ctx.apiKey, data);
  const answer: TaskCreated = { task_id: task.task_id };
  sendJson(ctx.res, 200, answer);
}

const createTextToSound: Handler = async (ctx) => {
  const input = await jsonBody(ctx);
  // The contract: for music the duration limit is not enforced (a fixed-length clip is
  // returned), so the emulator ignores `duration` for music before validating.
  let checked = input;
  if (isRecord(input) && input['audio_type'] === 'music' && 'duration' in input) {
    const { duration: _ignored, ...rest } = input;
    checked = rest;
  }
  const body = validate(TextToSoundRequestSchema, checked);
  const data: SoundRunData = {
    prompt: body.prompt,
    audio_type: body.audio_type,
    duration: body.audio_type === 'music' ? MUSIC_CLIP_SECONDS : body.duration,
  };
  created(ctx, 'text-to-sound', data);
};

const createTts: Handler = async (ctx) => {
  const body = validate(TtsRequestSchema, await jsonBody(ctx));
  if (!ctx.state.voice(body.voice_id)) throw invalidAt(['body', 'voice_id'], `unknown voice_id ${body.voice_id}`);
  const data: SpeechRunData = { text: body.text, voice_id: body.voice_id, language: String(body.language) };
  created(ctx, 'text-to-speech', data);
};

const createTranslation: Handler = async (ctx) => {
  const body = validate(TranslationRequestSchema, await jsonBody(ctx));
  const data: TranslationRunData = { texts: body.texts, target_language: String(body.target_language) };
  created(ctx, 'translation', data);
};

/** A transcription-like multipart body needs `media_file` or `media_url`. */
async function requireMedia(form: FormData, hasUrl: boolean): Promise<UploadedMedia> {
  const file = await formFile(form, 'media_file', undefined, false);
  if (!file && !hasUrl) throw invalidAt(['body', 'media_file'], 'either media_file or media_url is required', 'missing');
  return { durationSeconds: file ? mediaDurationSeconds(file.bytes) : undefined };
}

/** What the emulator knows of an uploaded media. */
interface UploadedMedia {
  durationSeconds: number | undefined;
}

const createTranscription: Handler = async (ctx) => {
  const form = await parseFormBody(ctx.req, await ctx.body());
  const fields = validate(TranscriptionFieldsSchema, formFields(form, { language: 'string', media_url: 'string' }));
  const media = await requireMedia(form, fields.media_url !== undefined);
  const data: TranscriptionRunData = { language: String(fields.language), durationSeconds: media.durationSeconds };
  created(ctx, 'transcription', data);
};

const createSub: Handler = async (ctx) => {
  const form = await parseFormBody(ctx.req, await ctx.body());
  const fields = validate(
    SubtitlesFieldsSchema,
    formFields(form, { language: 'string', media_url: 'string', target_language: 'string', subtitle_format: 'string' }),
  );
  await requireMedia(form, fields.media_url !== undefined);
  const data: SubtitlesRunData = { language: String(fields.language), subtitle_format: fields.subtitle_format };
  if (fields.target_language !== undefined) data.target_language = String(fields.target_language);
  created(ctx, 'subtitles', data);
};

const createDubbing: Handler = async (ctx) => {
  const body = validate(EndToEndDubbingRequestSchema, await jsonBody(ctx));
  const data: DubbingRunData = {
    video_url: body.video_url,
    source_language: String(body.source_language),
    target_languages: body.target_languages.map(String),
  };
  created(ctx, 'dubbing', data);
};

const createProjectSetup: Handler = async (ctx) => {
  const body = validate(ProjectSetupRequestSchema, await jsonBody(ctx));
  const data: ProjectSetupRunData = {
    project_name: body.project_name ?? null,
    project_description: body.project_description ?? null,
    created_at: new Date().toISOString(),
    source_language: String(body.source_language),
    target_languages: body.target_languages.map(String),
    folder_id: body.folder_id ?? null,
  };
  created(ctx, 'project-setup', data);
};

const createStory: Handler = async (ctx) => {
  const form = await parseFormBody(ctx.req, await ctx.body());
  const fields = validate(
    CreateStoryFieldsSchema,
    formFields(form, {
      source_language: 'string',
      title: 'string',
      description: 'string',
      narrator_voice_id: 'int',
      chosen_dictionaries: 'intArray',
      folder_id: 'int',
    }),
  );
  const file = await formFile(form, 'file', STORY_UPLOAD_EXTENSIONS);
  if (!file) throw invalidAt(['body', 'file'], 'Field required: a file part', 'missing');
  if (fields.narrator_voice_id !== undefined && !ctx.state.voice(fields.narrator_voice_id)) {
    throw invalidAt(['body', 'narrator_voice_id'], `unknown voice_id ${fields.narrator_voice_id}`);
  }
  const text = file.name.toLowerCase().endsWith('.txt') ? new TextDecoder().decode(file.bytes) : SAMPLE_STORY;
  const data: StoryRunData = { text: text.trim() || SAMPLE_STORY, source_language: String(fields.source_language) };
  if (fields.narrator_voice_id !== undefined) data.narrator_voice_id = fields.narrator_voice_id;
  created(ctx, 'story', data);
};

const createAudioSeparation: Handler = async (ctx) => {
  const form = await parseFormBody(ctx.req, await ctx.body());
  const file = await formFile(form, 'media_file', AUDIO_UPLOAD_EXTENSIONS);
  if (!file) throw invalidAt(['body', 'media_file'], 'Field required: a file part', 'missing');
  const data: SeparationRunData = { file_name: file.name, content_type: file.type || 'application/octet-stream', bytes: file.bytes };
  created(ctx, 'audio-separation', data);
};

// ---------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------

function statusHandler(kind: RunKind): Handler {
  return async (ctx) => {
    const taskId = ctx.params['task_id'] ?? '';
    const task = ctx.state.tasks.get(taskId);
    if (!task || task.kind !== kind || task.apiKey !== ctx.apiKey) throw problem(404, `task not found: ${taskId}`);
    const status = ctx.state.taskStatus(task);
    const answer: TaskStatus = { status: status.status, run_id: status.run_id };
    if (status.message !== undefined) answer.message = status.message;
    if (kind === 'text-to-sound' && status.status === 'SUCCESS' && task.run) {
      // A sample client reads `audio_url` on SUCCESS of text-to-sound.
      task.extra ??= { audio_url: fileUrl(ctx, soundFile(ctx, task.run)) };
      Object.assign(answer, task.extra);
    }
    sendJson(ctx.res, 200, answer);
  };
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

const KIND_NAMES: Record<RunKind, string> = {
  'text-to-sound': 'text-to-sound',
  'text-to-speech': 'text-to-speech',
  'audio-separation': 'audio separation',
  story: 'story',
  'project-setup': 'project setup',
  translation: 'translation',
  transcription: 'transcription',
  subtitles: 'subtitles',
  dubbing: 'dubbing',
};

/** The caller's run `runId` of `kind`; 404 otherwise. */
function runOf(ctx: HandlerContext, runId: number, kind: RunKind): RunRecord {
  const run = ctx.state.runs.get(runId);
  if (!run || run.apiKey !== ctx.apiKey) throw problem(404, `run not found: ${runId}`);
  if (run.kind !== kind) throw problem(404, `run ${runId} is not a ${KIND_NAMES[kind]} run`);
  return run;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function soundBytes(data: SoundRunData): Promise<Uint8Array> {
  const pcm =
    data.audio_type === 'music'
      ? generateMusic(data.prompt, MUSIC_CLIP_SECONDS)
      : generateSound(data.prompt, data.duration);
  return Promise.resolve(encodeWav16(pcm, GENERATED_AUDIO_SAMPLE_RATE));
}

/**
 * Text, voice and language of a speech run: `/tts` runs carry them directly; live
 * session runs (`LiveRunData` of live.ts) carry `config` and the delivered `segments`.
 */
function speechOf(run: RunRecord): SpeechRunData {
  const data = isRecord(run.data) ? run.data : {};
  const config = isRecord(data['config']) ? data['config'] : data;
  let text = typeof data['text'] === 'string' ? data['text'] : '';
  if (Array.isArray(data['segments'])) {
    text = data['segments']
      .filter((s): s is Record<string, unknown> => isRecord(s) && s['status'] !== 'skipped' && typeof s['text'] === 'string')
      .map((s) => String(s['text']))
      .join(' ');
  }
  const voiceId = typeof config['voice_id'] === 'number' ? config['voice_id'] : -1;
  const language = typeof config['language'] === 'string' || typeof config['language'] === 'number' ? String(config['language']) : 'en-us';
  return { text, voice_id: voiceId, language };
}

async function speechBytes(ctx: HandlerContext, run: RunRecord): Promise<Uint8Array> {
  const speech = speechOf(run);
  const voice = voiceOrDefault(ctx.state, speech.voice_id >= 0 ? speech.voice_id : undefined);
  const { pcm, sampleRate } = await synthesizeText(ctx.state, speech.text, speech.language, voice);
  return encodeWav16(pcm, sampleRate);
}

function soundFile(ctx: HandlerContext, run: RunRecord): string {
  return ctx.state.addFile('wav', 'audio/wav', () => soundBytes(run.data as SoundRunData));
}

function speechFile(ctx: HandlerContext, text: string, language: string, voiceId?: number): string {
  const state = ctx.state;
  return state.addFile('wav', 'audio/wav', async () => {
    const { pcm, sampleRate } = await synthesizeText(state, text, language, voiceOrDefault(state, voiceId));
    return encodeWav16(pcm, sampleRate);
  });
}

const ttsResult: Handler = async (ctx) => {
  const run = runOf(ctx, pathRunId(ctx.params), 'text-to-speech');
  sendBytes(ctx.res, 'audio/wav', await speechBytes(ctx, run));
};

const textToSoundResult: Handler = async (ctx) => {
  const run = runOf(ctx, pathRunId(ctx.params), 'text-to-sound');
  sendBytes(ctx.res, 'audio/wav', await soundBytes(run.data as SoundRunData));
};

/**
 * Bulk results: 2 to 5 unique run ids, all of `kind`. Unknown run ids (or runs of
 * another key) are a 422 at `['body', 'run_ids', index]`; runs of mixed kinds, or of
 * another kind than this endpoint's, a 422 at `['body', 'run_ids']`.
 */
function bulkHandler(kind: 'text-to-sound' | 'text-to-speech'): Handler {
  return async (ctx) => {
    const body = validate(RunIdsRequestSchema, await jsonBody(ctx));
    const runs = body.run_ids.map((runId, index) => {
      const run = ctx.state.runs.get(runId);
      if (!run || run.apiKey !== ctx.apiKey) throw invalidAt(['body', 'run_ids', index], `unknown run id ${runId}`, 'value_error');
      return run;
    });
    const kinds = new Set(runs.map((r) => r.kind));
    if (kinds.size > 1) throw invalidAt(['body', 'run_ids'], 'all run_ids must be runs of one kind', 'value_error');
    if (!kinds.has(kind)) throw invalidAt(['body', 'run_ids'], `run_ids must be ${KIND_NAMES[kind]} runs`, 'value_error');
    const answer: BulkResults = {};
    for (const run of runs) {
      const name =
        kind === 'text-to-sound'
          ? soundFile(ctx, run)
          : ctx.state.addFile('wav', 'audio/wav', () => speechBytes(ctx, run));
      answer[String(run.run_id)] = { output_url: fileUrl(ctx, name) };
    }
    sendJson(ctx.res, 200, answer);
  };
}

const translationResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'translation').data as TranslationRunData;
  const answer: TranslationResult = { texts: data.texts.map((t) => pseudoLocalize(t, data.target_language)) };
  sendJson(ctx.res, 200, answer);
};

const transcriptionResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'transcription').data as TranscriptionRunData;
  const answer: TranscriptionResult = { transcript: heardTranscript(data.language, data.durationSeconds) };
  sendJson(ctx.res, 200, answer);
};

const subResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'subtitles').data as SubtitlesRunData;
  let transcript = heardTranscript(data.language);
  if (data.target_language !== undefined) transcript = translateTranscript(heardTranscript('en-us'), data.target_language);
  const answer: SubtitlesResult = {
    subtitle_format: data.subtitle_format,
    subtitles: subtitlesOf(transcript, data.subtitle_format),
    transcript,
  };
  sendJson(ctx.res, 200, answer);
};

const dubbedRunInfo: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'dubbing').data as DubbingRunData;
  const target = data.target_languages[0] ?? data.source_language;
  const transcript = translateTranscript(heardTranscript('en-us'), target);
  const spoken = transcript.map((t) => t.text).join(' ');
  // The dubbed video is a placeholder file; the dubbed audio is real synthesized speech.
  const videoName = ctx.state.addFile('mp4', 'application/octet-stream', () =>
    Promise.resolve(new TextEncoder().encode(`rxvoice emulator: dubbed video placeholder for ${data.video_url}\n`)),
  );
  const answer: DubbedRunInfo = {
    video_url: fileUrl(ctx, videoName),
    audio_url: fileUrl(ctx, speechFile(ctx, spoken, target)),
    transcript,
  };
  sendJson(ctx.res, 200, answer);
};

const projectSetupResult: Handler = async (ctx) => {
  const run = runOf(ctx, pathRunId(ctx.params), 'project-setup');
  const data = run.data as ProjectSetupRunData;
  const answer: ProjectSetupResult = {
    run_id: run.run_id,
    project_details: { ...data, studio_url: `${ctx.baseUrl}/studio/projects/${run.run_id}` },
  };
  sendJson(ctx.res, 200, answer);
};

function storyAnswer(ctx: HandlerContext, data: StoryRunData, transcript: DialogueItem[], language: string): StoryRun {
  const all = transcript.map((t) => t.text).join(' ');
  const dialogue = transcript.filter((t) => t.speaker !== 'Narrator').map((t) => t.text).join(' ');
  return {
    audio_url: fileUrl(ctx, speechFile(ctx, all, language, data.narrator_voice_id)),
    dialogue_url: fileUrl(ctx, speechFile(ctx, dialogue || all, language, data.narrator_voice_id)),
    transcript,
  };
}

const storyRun: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'story').data as StoryRunData;
  sendJson(ctx.res, 200, storyAnswer(ctx, data, transcriptOf(data.text, data.source_language), data.source_language));
};

const IncludeTranscriptSchema = z.enum(['true', 'false', '1', '0']).optional();

const translatedStoryResult: Handler = async (ctx) => {
  const runId = pathRunId(ctx.params);
  const target = validate(LanguageSchema, ctx.params['target_language'] ?? '', ['path', 'target_language']);
  const flag = ctx.url.searchParams.get('include_transcript') ?? undefined;
  const include = validate(IncludeTranscriptSchema, flag, ['query', 'include_transcript']);
  const data = runOf(ctx, runId, 'story').data as StoryRunData;
  const language = resolveLanguage(target);
  const transcript = translateTranscript(transcriptOf(data.text, data.source_language), language);
  const full = storyAnswer(ctx, data, transcript, language);
  const answer: TranslatedStoryResult = { audio_url: full.audio_url, dialogue_url: full.dialogue_url };
  if (include === 'true' || include === '1') answer.transcript = transcript;
  sendJson(ctx.res, 200, answer);
};

const audioSeparationResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'audio-separation').data as SeparationRunData;
  const ext = data.file_name.toLowerCase().split('.').pop() ?? 'wav';
  // Foreground: the uploaded audio as it came; background: a generated ambience.
  const foreground = ctx.state.addFile(ext, data.content_type, () => Promise.resolve(data.bytes));
  const background = ctx.state.addFile('wav', 'audio/wav', () =>
    Promise.resolve(encodeWav16(generateSound(`background:${data.file_name}`, 3), GENERATED_AUDIO_SAMPLE_RATE)),
  );
  const answer: AudioSeparationResult = {
    foreground_audio_url: fileUrl(ctx, foreground),
    background_audio_url: fileUrl(ctx, background),
  };
  sendJson(ctx.res, 200, answer);
};

// ---------------------------------------------------------------------------
// Route table of the task pattern
// ---------------------------------------------------------------------------

/** Every task-pattern route (creation, status, results). */
export function taskRoutes(): Array<CompiledRoute<Handler>> {
  const task = ['task_id'];
  const run = ['run_id'];
  return [
    compileRoute('POST', routes.textToSound, [], createTextToSound),
    compileRoute('GET', routes.textToSoundStatus, task, statusHandler('text-to-sound')),
    compileRoute('POST', routes.textToSoundResults, [], bulkHandler('text-to-sound')),
    compileRoute('GET', routes.textToSoundResult, run, textToSoundResult),

    compileRoute('POST', routes.tts, [], createTts),
    compileRoute('GET', routes.ttsStatus, task, statusHandler('text-to-speech')),
    compileRoute('GET', routes.ttsResult, run, ttsResult),
    compileRoute('POST', routes.fetchTtsResults, [], bulkHandler('text-to-speech')),

    compileRoute('POST', routes.audioSeparation, [], createAudioSeparation),
    compileRoute('GET', routes.audioSeparationStatus, task, statusHandler('audio-separation')),
    compileRoute('GET', routes.audioSeparationResult, run, audioSeparationResult),

    compileRoute('POST', routes.createStory, [], createStory),
    compileRoute('GET', routes.storyStatus, task, statusHandler('story')),
    compileRoute('GET', routes.storyRun, run, storyRun),
    compileRoute('GET', routes.translatedStoryResult, ['run_id', 'target_language'], translatedStoryResult),

    compileRoute('POST', routes.projectSetup, [], createProjectSetup),
    compileRoute('GET', routes.projectSetupStatus, task, statusHandler('project-setup')),
    compileRoute('GET', routes.projectSetupResult, run, projectSetupResult),

    compileRoute('POST', routes.translation, [], createTranslation),
    compileRoute('GET', routes.translationStatus, task, statusHandler('translation')),
    compileRoute('GET', routes.translationResult, run, translationResult),

    compileRoute('POST', routes.transcription, [], createTranscription),
    compileRoute('GET', routes.transcriptionStatus, task, statusHandler('transcription')),
    compileRoute('GET', routes.transcriptionResult, run, transcriptionResult),

    compileRoute('POST', routes.sub, [], createSub),
    compileRoute('GET', routes.subStatus, task, statusHandler('subtitles')),
    compileRoute('GET', routes.subResult, run, subResult),

    compileRoute('POST', routes.endToEndDubbing, [], createDubbing),
    compileRoute('GET', routes.endToEndDubbingStatus, task, statusHandler('dubbing')),
    compileRoute('GET', routes.dubbedRunInfo, run, dubbedRunInfo),
  ];
}
