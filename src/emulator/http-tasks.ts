/**
 * The task pattern in the emulator: creation calls for every family (here, in the order of
 * the route table at the end), their status and result calls (`http-task-results.ts`), and
 * the run data each kind keeps (`http-task-runs.ts`).
 */

import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  CreateStoryFieldsSchema,
  EndToEndDubbingRequestSchema,
  ProjectSetupRequestSchema,
  STORY_UPLOAD_EXTENSIONS,
  SubtitlesFieldsSchema,
  TextToSoundRequestSchema,
  TranscriptionFieldsSchema,
  TranslationRequestSchema,
  TtsRequestSchema,
  type RunKind,
  type TaskCreated,
} from '../core/schemas.js';

import {
  compileRoute,
  formFields,
  formFile,
  invalidAt,
  parseFormBody,
  parseJsonBody,
  sendJson,
  validate,
  type CompiledRoute,
  type Handler,
  type HandlerContext,
} from './http-util.js';
import { MUSIC_CLIP_SECONDS, mediaDurationSeconds } from './http-media.js';
import {
  audioSeparationResult,
  bulkHandler,
  dubbedRunInfo,
  isRecord,
  projectSetupResult,
  statusHandler,
  storyRun,
  subResult,
  textToSoundResult,
  transcriptionResult,
  translatedStoryResult,
  translationResult,
  ttsResult,
} from './http-task-results.js';
import type {
  DubbingRunData,
  ProjectSetupRunData,
  SeparationRunData,
  SoundRunData,
  SpeechRunData,
  StoryRunData,
  SubtitlesRunData,
  TranscriptionRunData,
  TranslationRunData,
} from './http-task-runs.js';

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
  // returned), so the emulator ignores a `duration` for music before validating, when it is
  // a number of seconds (the field's type holds: `'abc'` or -5 is a 422 still).
  let checked = input;
  if (isRecord(input) && input['audio_type'] === 'music' && isSeconds(input['duration'])) {
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

/** A finite number of seconds above 0. */
function isSeconds(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
