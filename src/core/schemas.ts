/**
 * zod schemas for every request and response of the service: the single source
 * of the wire types. The client validates requests with them before sending, the
 * emulator validates the same requests with them on receipt, and both parse
 * responses with them. Types are `z.infer` of these schemas, never hand-written.
 */
import { z } from 'zod';
import { LanguageSchema, VoiceIdSchema } from './primitives.js';

// ---------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------

export {
  LocaleTagSchema,
  NumericLanguageIdSchema,
  LanguageSchema,
  VoiceIdSchema,
  LIVE_OUTPUT_FORMATS,
  LiveOutputFormatSchema,
  type Language,
  type LiveOutputFormat,
} from './primitives.js';

/** Speaker gender. 1 and 2 are documented as male and female; 0 and 9 are allowed, meaning not shown. */
export const GenderSchema = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(9)]);
/** Speaker gender code, as the service's spec gives it: `1` male, `2` female; `0` and `9` are accepted and mean not shown (unknown / not applicable). */
export type Gender = z.infer<typeof GenderSchema>;

/** Translation formality. */
export const FormalitySchema = z.union([z.literal(1), z.literal(2)]);
/** Translation formality: `1` or `2` (the spec leaves the meaning of each open; the translation stream defaults to `2`). */
export type Formality = z.infer<typeof FormalitySchema>;

/** The zod schema of {@link AudioType}. */
export const AudioTypeSchema = z.enum(['sound', 'music']);
/** What text-to-sound makes: `sound` (an effect, at most 10 s) or `music`. */
export type AudioType = z.infer<typeof AudioTypeSchema>;

/** The zod schema of {@link TaskStatusValue}. */
export const TaskStatusValueSchema = z.enum(['SUCCESS', 'PENDING', 'TIMEOUT', 'ERROR', 'PAYMENT_REQUIRED']);
/** A task's status: `PENDING` until it ends in `SUCCESS`, `ERROR`, `TIMEOUT` or `PAYMENT_REQUIRED`. */
export type TaskStatusValue = z.infer<typeof TaskStatusValueSchema>;

/** A project name: 3 to 255 characters, optional, nullable. */
export const ProjectNameSchema = z.string().min(3).max(255).nullable().optional();
/** A project description: 3 to 5000 characters, optional, nullable. */
export const ProjectDescriptionSchema = z.string().min(3).max(5000).nullable().optional();
/** A run id: a positive integer, given by a status call on `SUCCESS`. */
export const RunIdSchema = z.int().positive();
/** A task id: a non-empty string, given by a creation call. */
export const TaskIdSchema = z.string().min(1).refine((id) => id !== '.' && id !== '..', 'cannot be "." or "..": an address cannot name it (a URL resolves it away)');
/** Dictionary ids to apply: at least one integer, optional, nullable. */
export const ChosenDictionariesSchema = z.array(z.int()).min(1).nullable().optional();
/** A folder id: a positive integer, optional, nullable. */
export const FolderIdSchema = z.int().min(1).nullable().optional();

/** Body of a 422: `{ detail: [{ loc, msg, type }] }`. */
export const ValidationIssueSchema = z.object({
  loc: z.array(z.union([z.string(), z.int()])),
  msg: z.string(),
  type: z.string(),
});
/** One problem of a 422 answer (or of a local check before sending): `loc` the path of the bad field (e.g. `['body', 'voice_id']`), `msg` the message, `type` its kind (e.g. `missing`). */
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;
/** The zod schema of {@link ValidationErrorBody}. */
export const ValidationErrorBodySchema = z.object({ detail: z.array(ValidationIssueSchema) });
/** The body of a 422 answer: `{ detail: ValidationIssue[] }`. */
export type ValidationErrorBody = z.infer<typeof ValidationErrorBodySchema>;

/** Body of a 401 (DESIGN): `{ error, status }`. */
export const ErrorBodySchema = z.object({ error: z.string(), status: z.int().optional() });
/** The body of a 401 answer: `{ error, status }`. */
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Answer of every creation call. */
export const TaskCreatedSchema = z.object({ task_id: TaskIdSchema });
/** The answer of every creation call: `{ task_id }`, to poll. */
export type TaskCreated = z.infer<typeof TaskCreatedSchema>;

/** Answer of every status call: `run_id` is null until SUCCESS; `message` may come with ERROR. */
export const TaskStatusSchema = z.object({
  status: TaskStatusValueSchema,
  run_id: RunIdSchema.nullable().optional(),
  message: z.string().nullable().optional(),
  /** A sample client reads this on SUCCESS of text-to-sound. */
  audio_url: z.string().nullable().optional(),
});
/** The answer of every status call: `status`, `run_id` (null until `SUCCESS`), and a `message` that may come with `ERROR`. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Element of a story / transcription transcript. Times in seconds. */
export const DialogueItemSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  speaker: z.string(),
});
/** One line of a transcript (stories, transcription, dubbing): `start` and `end` in seconds, `text`, `speaker`. */
export type DialogueItem = z.infer<typeof DialogueItemSchema>;

/** 2 to 5 unique positive run ids (bulk result calls). */
export const RunIdsSchema = z
  .array(RunIdSchema)
  .min(2)
  .max(5)
  .refine((ids) => new Set(ids).size === ids.length, { message: 'run_ids must be unique' });

/** Extensions accepted for uploaded reference or media audio. */
export const AUDIO_UPLOAD_EXTENSIONS = ['.aac', '.flac', '.mp3', '.wav'] as const;
/** Extensions accepted for story uploads. */
export const STORY_UPLOAD_EXTENSIONS = ['.txt', '.docx'] as const;

// ---------------------------------------------------------------------------
// Sound and music
// ---------------------------------------------------------------------------

/** Longest `duration` of a `sound` (seconds): 10. */
export const MAX_SOUND_DURATION = 10;
/** Default `duration` of text-to-sound (seconds): 8. */
export const DEFAULT_SOUND_DURATION = 8.0;

/**
 * `duration` is at most 10 seconds for `sound`; for `music` the limit is not enforced
 * (the service returns a fixed-length clip), so it is checked only for sound.
 */
export const TextToSoundRequestSchema = z
  .object({
    prompt: z.string().min(1),
    duration: z.number().positive().default(DEFAULT_SOUND_DURATION),
    audio_type: AudioTypeSchema.default('sound'),
    project_name: ProjectNameSchema,
    project_description: ProjectDescriptionSchema,
  })
  .superRefine((value, ctx) => {
    if (value.audio_type === 'sound' && value.duration > MAX_SOUND_DURATION) {
      ctx.addIssue({
        code: 'too_big',
        origin: 'number',
        maximum: MAX_SOUND_DURATION,
        inclusive: true,
        path: ['duration'],
        message: `Too big: expected number to be <=${MAX_SOUND_DURATION}`,
        input: value.duration,
      });
    }
  });
/** The body of `POST /text-to-sound`: `prompt`; `duration` seconds (default 8, at most 10 for `sound`); `audio_type` (`sound` by default, or `music`); optional `project_name` (3-255 characters) and `project_description` (3-5000). */
export type TextToSoundRequest = z.input<typeof TextToSoundRequestSchema>;

/** The zod schema of {@link RunIdsRequest}. */
export const RunIdsRequestSchema = z.object({ run_ids: RunIdsSchema });
/** The body of a bulk result call: `run_ids`, 2 to 5 unique run ids of one kind. */
export type RunIdsRequest = z.infer<typeof RunIdsRequestSchema>;

/** The zod schema of {@link OutputUrlEntry}. */
export const OutputUrlEntrySchema = z.object({ output_url: z.string() });
/** One entry of a bulk result: `output_url`, a temporary pre-signed address (it expires). */
export type OutputUrlEntry = z.infer<typeof OutputUrlEntrySchema>;
/** Keys are run ids (as strings), values result entries. */
export const BulkResultsSchema = z.record(z.string(), OutputUrlEntrySchema);
/** A bulk result: run id (as a string key) to {@link OutputUrlEntry}; runs unknown or not completed are left out. */
export type BulkResults = z.infer<typeof BulkResultsSchema>;

// ---------------------------------------------------------------------------
// Speech
// ---------------------------------------------------------------------------

/** @deprecated POST /tts; use tts-stream or the live session. */
export const TtsRequestSchema = z.object({
  text: z.string().min(1),
  voice_id: VoiceIdSchema,
  language: LanguageSchema,
  project_name: ProjectNameSchema,
  project_description: ProjectDescriptionSchema,
  gender: GenderSchema.default(1),
  age: z.unknown().optional(),
});
/** The body of the deprecated `POST /tts` flow: `text`, `voice_id`, `language`, `gender` (default 1), optional project fields. */
export type TtsRequest = z.input<typeof TtsRequestSchema>;

/** Every {@link TtsStreamFormat}. */
export const TTS_STREAM_FORMATS = [
  'wav', 'flac', 'mp3', 'adts',
  'pcm_s16le', 'pcm_s16be', 'pcm_s32le', 'pcm_s32be', 'pcm_f32le', 'pcm_f32be',
] as const;
/** The zod schema of {@link TtsStreamFormat}. */
export const TtsStreamFormatSchema = z.enum(TTS_STREAM_FORMATS);
/** An output format of `POST /tts-stream`: `wav`, `flac`, `mp3`, `adts`, or raw PCM `pcm_s16le`, `pcm_s16be`, `pcm_s32le`, `pcm_s32be`, `pcm_f32le`, `pcm_f32be`. */
export type TtsStreamFormat = z.infer<typeof TtsStreamFormatSchema>;


/** The zod schema of {@link TtsStreamRequest}. */
export const TtsStreamRequestSchema = z.object({
  text: z.string().min(3).max(3000),
  voice_id: VoiceIdSchema,
  language: LanguageSchema,
  speech_model: z.string().optional(),
  enhance_named_entities_pronunciation: z.boolean().default(false),
  output_configuration: z
    .object({
      format: TtsStreamFormatSchema.default('wav'),
      sample_rate: z.int().min(8000).max(48000).nullable().optional(),
      apply_enhancement: z.boolean().nullable().optional(),
    })
    .default({ format: 'wav' }),
  voice_settings: z
    .object({
      enhance_reference_audio_quality: z.boolean().default(false),
      maintain_source_accent: z.boolean().default(false),
      speaking_rate: z.number().min(0.25).max(4).nullable().optional(),
    })
    .optional(),
});
/** The body of `POST /tts-stream`: `text` (3 to 3000 characters), `voice_id`, `language`, `output_configuration` (`format` default `wav`, `sample_rate` 8000-48000 or null, `apply_enhancement`), `voice_settings` (`speaking_rate` 0.25-4, accent and reference-quality flags, default false), `enhance_named_entities_pronunciation` (default false). */
export type TtsStreamRequest = z.input<typeof TtsStreamRequestSchema>;

// ---------------------------------------------------------------------------
// Voices
// ---------------------------------------------------------------------------

/** Fields of POST /create-custom-voice (multipart). `file` travels as a file part. */
export const CreateCustomVoiceFieldsSchema = z.object({
  /** The name the voice gets in the voice lists (not empty). */
  voice_name: z.string().min(1),
  /** Gender code: 1 male, 2 female; 0 and 9 not shown. */
  gender: GenderSchema,
  description: z.string().nullable().optional(),
  age: z.int().min(1).default(30),
  enhance_audio: z.boolean().default(false),
  language: z.optional(LanguageSchema),
});
/** The form fields of a custom voice: `voice_name` (the name shown in voice lists), `gender` ({@link Gender} code), optional `description`, `age` (years, default 30), `enhance_audio` (default false), `language`. */
export type CreateCustomVoiceFields = z.input<typeof CreateCustomVoiceFieldsSchema>;

/** The zod schema of {@link CreateCustomVoiceResponse}. */
export const CreateCustomVoiceResponseSchema = z.object({ voice_id: VoiceIdSchema });
/** The answer of a custom voice creation: the new `voice_id`. */
export type CreateCustomVoiceResponse = z.infer<typeof CreateCustomVoiceResponseSchema>;

/** The zod schema of {@link Voice}. */
export const VoiceSchema = z.object({
  /** The voice id: what `voice_id` takes. */
  id: VoiceIdSchema,
  /** The voice's display name. */
  voice_name: z.string(),
  /** Gender code: 1 male, 2 female; 0 and 9 not shown. */
  gender: GenderSchema,
  /** Age in years, or null when not given. */
  age: z.int().nullable(),
  /** A free description, or null. */
  description: z.string().nullable(),
  /** The voice's language (a locale tag), or null. */
  language: z.string().nullable(),
  /** True for the service's published library voices; false for your own voices. */
  is_published: z.boolean(),
});
/** A voice record of the voice lists: `id` (the `voice_id` to speak with), `voice_name` (its display name), `gender` ({@link Gender}: 1 male, 2 female, 0/9 not shown), `age` (years, or null), `description`, `language` (a locale tag, or null), `is_published` (true for the service's library voices, false for your own unpublished ones). */
export type Voice = z.infer<typeof VoiceSchema>;
/** The answer of a voice list: an array of {@link Voice}. */
export const VoiceListSchema = z.array(VoiceSchema);

// ---------------------------------------------------------------------------
// Audio separation (DESIGN)
// ---------------------------------------------------------------------------

/** The zod schema of {@link AudioSeparationResult}. */
export const AudioSeparationResultSchema = z.object({
  foreground_audio_url: z.string(),
  background_audio_url: z.string(),
});
/** The result of an audio separation run: `foreground_audio_url` (voice) and `background_audio_url` (the rest), temporary addresses. */
export type AudioSeparationResult = z.infer<typeof AudioSeparationResultSchema>;

// ---------------------------------------------------------------------------
// Stories
// ---------------------------------------------------------------------------

/** Fields of POST /create-story (multipart, DESIGN). `file` (.txt or .docx) travels as a file part. */
export const CreateStoryFieldsSchema = z.object({
  source_language: LanguageSchema,
  title: z.string().min(1).optional(),
  description: z.string().optional(),
  narrator_voice_id: z.optional(VoiceIdSchema),
  chosen_dictionaries: ChosenDictionariesSchema,
  folder_id: FolderIdSchema,
});
/** The form fields of a story (besides the `.txt` / `.docx` file): `source_language`, optional `title`, `description`, `narrator_voice_id`, `chosen_dictionaries`, `folder_id`. */
export type CreateStoryFields = z.input<typeof CreateStoryFieldsSchema>;

/** The zod schema of {@link StoryRun}. */
export const StoryRunSchema = z.object({
  audio_url: z.string(),
  dialogue_url: z.string(),
  transcript: z.array(DialogueItemSchema),
});
/** The result of a story run: `audio_url`, `dialogue_url` (temporary addresses) and the `transcript`. */
export type StoryRun = z.infer<typeof StoryRunSchema>;

/** The zod schema of {@link TranslatedStoryResult}. */
export const TranslatedStoryResultSchema = z.object({
  audio_url: z.string(),
  dialogue_url: z.string(),
  transcript: z.array(DialogueItemSchema).optional(),
});
/** A story's translated result: `audio_url`, `dialogue_url` and, when asked for, the `transcript`. */
export type TranslatedStoryResult = z.infer<typeof TranslatedStoryResultSchema>;

/** The zod schema of {@link TranslatedStoryQuery}. */
export const TranslatedStoryQuerySchema = z.object({
  run_id: RunIdSchema,
  target_language: LanguageSchema,
  include_transcript: z.boolean().default(false),
});
/** The query of a translated story result: `run_id`, `target_language`, `include_transcript` (default false). */
export type TranslatedStoryQuery = z.input<typeof TranslatedStoryQuerySchema>;

// ---------------------------------------------------------------------------
// Dubbing project setup (path DESIGN)
// ---------------------------------------------------------------------------

/** The zod schema of {@link ProjectSetupRequest}. */
export const ProjectSetupRequestSchema = z.object({
  media_url: z.url(),
  source_language: LanguageSchema,
  target_languages: z.array(LanguageSchema).min(1),
  project_name: ProjectNameSchema,
  project_description: ProjectDescriptionSchema,
  selected_audio_tracks: z.array(z.int().nonnegative()).min(1).max(2).nullable().optional(),
  add_output_as_an_audio_track: z.boolean().nullable().optional(),
  chosen_dictionaries: ChosenDictionariesSchema,
  folder_id: FolderIdSchema,
});
/** The body of a dubbing project setup: `media_url`, `source_language`, `target_languages` (at least one), optional project fields, `selected_audio_tracks` (1 or 2 track indexes), `add_output_as_an_audio_track`, `chosen_dictionaries`, `folder_id`. */
export type ProjectSetupRequest = z.input<typeof ProjectSetupRequestSchema>;

/** The zod schema of {@link ProjectSetupResult}. */
export const ProjectSetupResultSchema = z.object({
  run_id: RunIdSchema,
  project_details: z.object({
    project_name: z.string().nullable(),
    project_description: z.string().nullable(),
    created_at: z.string(),
    source_language: z.string(),
    target_languages: z.array(z.string()),
    folder_id: z.int().nullable(),
    studio_url: z.string(),
  }),
});
/** The result of a dubbing project setup: `run_id` and `project_details` (name, description, creation time, languages, folder, `studio_url`). */
export type ProjectSetupResult = z.infer<typeof ProjectSetupResultSchema>;

// ---------------------------------------------------------------------------
// Translation
// ---------------------------------------------------------------------------

/** @deprecated POST /translation/stream; use POST /translation with polling. */
export const TranslationStreamRequestSchema = z.object({
  text: z.string().min(1),
  source_language: LanguageSchema,
  target_language: LanguageSchema,
  formality: FormalitySchema.nullable().default(2),
  gender: GenderSchema.nullable().default(1),
});
/** The body of the deprecated `POST /translation/stream`: `text`, `source_language`, `target_language`, `formality` (default 2), `gender` (default 1). */
export type TranslationStreamRequest = z.input<typeof TranslationStreamRequestSchema>;

/** The zod schema of {@link TranslationRequest}. */
export const TranslationRequestSchema = z.object({
  texts: z.array(z.string().min(1)).min(1),
  source_language: LanguageSchema,
  target_language: LanguageSchema,
  formality: FormalitySchema.nullable().optional(),
  gender: GenderSchema.nullable().optional(),
  age: z.int().min(1).nullable().optional(),
  chosen_dictionaries: ChosenDictionariesSchema,
  project_name: ProjectNameSchema,
  project_description: ProjectDescriptionSchema,
});
/** The body of `POST /translation`: `texts` (at least one, none empty), `source_language`, `target_language`, optional `formality`, `gender`, `age`, `chosen_dictionaries` and project fields. */
export type TranslationRequest = z.input<typeof TranslationRequestSchema>;

/** The zod schema of {@link TranslationResult}. */
export const TranslationResultSchema = z.object({ texts: z.array(z.string()) });
/** The result of a translation run: `texts`, in the order of the request's texts. */
export type TranslationResult = z.infer<typeof TranslationResultSchema>;

// ---------------------------------------------------------------------------
// Transcription and subtitles
// ---------------------------------------------------------------------------

/** Fields of POST /transcription (multipart): `language`, and a `media_file` part or `media_url`. */
export const TranscriptionFieldsSchema = z.object({
  language: LanguageSchema,
  media_url: z.url().optional(),
});
/** The form fields of a transcription: `language`, and `media_url` (or a `media_file` upload instead). */
export type TranscriptionFields = z.input<typeof TranscriptionFieldsSchema>;

/** The zod schema of {@link TranscriptionResult}. */
export const TranscriptionResultSchema = z.object({ transcript: z.array(DialogueItemSchema) });
/** The result of a transcription run: the `transcript`. */
export type TranscriptionResult = z.infer<typeof TranscriptionResultSchema>;

/**
 * POST /sub: the contract shows no shape; we follow the nearest documented sibling,
 * transcription (multipart `language`, `media_file` or `media_url`), plus an optional
 * `target_language` for translated subtitles and a `subtitle_format`.
 */
export const SubtitlesFieldsSchema = z.object({
  language: LanguageSchema,
  media_url: z.url().optional(),
  target_language: z.optional(LanguageSchema),
  subtitle_format: z.enum(['srt', 'vtt']).default('srt'),
});
/** The form fields of a subtitles task (see {@link SubtitlesResult} for its answer). */
export type SubtitlesFields = z.input<typeof SubtitlesFieldsSchema>;

/** GET /sub-result/{run_id}: the subtitle file as text, and the transcript it was made from. */
export const SubtitlesResultSchema = z.object({
  subtitle_format: z.enum(['srt', 'vtt']),
  subtitles: z.string(),
  transcript: z.array(DialogueItemSchema),
});
/** The result of a subtitles run (its shape is fixed by DESIGN.md, after the nearest documented sibling). */
export type SubtitlesResult = z.infer<typeof SubtitlesResultSchema>;

// ---------------------------------------------------------------------------
// End-to-end dubbing
// ---------------------------------------------------------------------------

/** The zod schema of {@link EndToEndDubbingRequest}. */
export const EndToEndDubbingRequestSchema = z.object({
  video_url: z.url(),
  source_language: LanguageSchema,
  target_languages: z.array(LanguageSchema).min(1),
  project_name: ProjectNameSchema,
  project_description: ProjectDescriptionSchema,
  chosen_dictionaries: ChosenDictionariesSchema,
  folder_id: FolderIdSchema,
});
/** The body of `POST /end-to-end-dubbing`: `video_url`, `source_language`, `target_languages` and options. */
export type EndToEndDubbingRequest = z.input<typeof EndToEndDubbingRequestSchema>;

/** The zod schema of {@link DubbedRunInfo}. */
export const DubbedRunInfoSchema = z.object({
  video_url: z.string(),
  audio_url: z.string(),
  transcript: z.array(DialogueItemSchema),
});
/** The result of a dubbing run: `video_url`, `audio_url` (temporary addresses) and the `transcript`. */
export type DubbedRunInfo = z.infer<typeof DubbedRunInfoSchema>;

// ---------------------------------------------------------------------------
// Run kinds (bulk calls require one kind)
// ---------------------------------------------------------------------------

/** The zod schema of {@link RunKind}. */
export const RunKindSchema = z.enum([
  'text-to-sound', 'text-to-speech', 'audio-separation', 'story', 'project-setup',
  'translation', 'transcription', 'subtitles', 'dubbing',
]);
/** The kind of a run: bulk result calls take run ids of one kind only. */
export type RunKind = z.infer<typeof RunKindSchema>;
