/**
 * The task pattern in the emulator, after creation: the status call of every family and
 * its result calls (single results, bulk results with temporary addresses).
 */
import { z } from 'zod';
import {
  LanguageSchema,
  RunIdsRequestSchema,
  type AudioSeparationResult,
  type BulkResults,
  type DialogueItem,
  type DubbedRunInfo,
  type ProjectSetupResult,
  type RunKind,
  type StoryRun,
  type SubtitlesResult,
  type TaskStatus,
  type TranscriptionResult,
  type TranslatedStoryResult,
  type TranslationResult,
} from '../core/schemas.js';
import { encodeWav16 } from '../audio/wav.js';
import {
  fileUrl,
  invalidAt,
  parseJsonBody,
  pathRunId,
  problem,
  sendBytes,
  sendJson,
  validate,
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
  translateTranscript,
  voiceOrDefault,
} from './http-media.js';
import { pseudoLocalize } from './pseudo.js';
import { resolveLanguage } from './state.js';
import type { RunRecord } from './types.js';
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
// ---------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------

export function statusHandler(kind: RunKind): Handler {
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

export function isRecord(value: unknown): value is Record<string, unknown> {
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

export const ttsResult: Handler = async (ctx) => {
  const run = runOf(ctx, pathRunId(ctx.params), 'text-to-speech');
  sendBytes(ctx.res, 'audio/wav', await speechBytes(ctx, run));
};

export const textToSoundResult: Handler = async (ctx) => {
  const run = runOf(ctx, pathRunId(ctx.params), 'text-to-sound');
  sendBytes(ctx.res, 'audio/wav', await soundBytes(run.data as SoundRunData));
};

/**
 * Bulk results: 2 to 5 unique run ids, all of `kind`. Unknown run ids (or runs of
 * another key) are a 422 at `['body', 'run_ids', index]`; runs of mixed kinds, or of
 * another kind than this endpoint's, a 422 at `['body', 'run_ids']`.
 */
export function bulkHandler(kind: 'text-to-sound' | 'text-to-speech'): Handler {
  return async (ctx) => {
    const body = validate(RunIdsRequestSchema, parseJsonBody(await ctx.body()));
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

export const translationResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'translation').data as TranslationRunData;
  const answer: TranslationResult = { texts: data.texts.map((t) => pseudoLocalize(t, data.target_language)) };
  sendJson(ctx.res, 200, answer);
};

export const transcriptionResult: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'transcription').data as TranscriptionRunData;
  const answer: TranscriptionResult = { transcript: heardTranscript(data.language, data.durationSeconds) };
  sendJson(ctx.res, 200, answer);
};

export const subResult: Handler = async (ctx) => {
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

export const dubbedRunInfo: Handler = async (ctx) => {
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

export const projectSetupResult: Handler = async (ctx) => {
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

export const storyRun: Handler = async (ctx) => {
  const data = runOf(ctx, pathRunId(ctx.params), 'story').data as StoryRunData;
  sendJson(ctx.res, 200, storyAnswer(ctx, data, transcriptOf(data.text, data.source_language), data.source_language));
};

const IncludeTranscriptSchema = z.enum(['true', 'false', '1', '0']).optional();

export const translatedStoryResult: Handler = async (ctx) => {
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

export const audioSeparationResult: Handler = async (ctx) => {
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
