/**
 * zod schemas for every request and response of the service: the single source
 * of the wire types. The client validates requests with them before sending, the
 * emulator validates the same requests with them on receipt, and both parse
 * responses with them. Types are `z.infer` of these schemas, never hand-written.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------
// Shared pieces
// ---------------------------------------------------------------------------

/** A locale tag: lower-case `<language>-<region>`, e.g. `en-us`, `pt-br`, `zh-cn`. */
export const LocaleTagSchema = z
  .string()
  .regex(/^[a-z]{2,3}-[a-z0-9]{2,4}$/, 'must be a lower-case locale tag like "en-us"');

/**
 * A numeric language id (integer or numeric string). Accepted by the service but deprecated.
 *
 * @deprecated Use a locale tag such as `"en-us"` ({@link LocaleTagSchema}); the client warns once when it sends one.
 */
export const NumericLanguageIdSchema = z.union([
  z.int().positive(),
  z.string().regex(/^[0-9]+$/, 'must be a numeric language id'),
]);

/** Language parameter: a locale tag, or (deprecated: warns once) a numeric id. */
export const LanguageSchema = z.union([LocaleTagSchema, NumericLanguageIdSchema]);
export type Language = z.infer<typeof LanguageSchema>;

/** Speaker gender. 1 and 2 are documented as male and female; 0 and 9 are allowed, meaning not shown. */
export const GenderSchema = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(9)]);
export type Gender = z.infer<typeof GenderSchema>;

/** Translation formality. */
export const FormalitySchema = z.union([z.literal(1), z.literal(2)]);
export type Formality = z.infer<typeof FormalitySchema>;

export const AudioTypeSchema = z.enum(['sound', 'music']);
export type AudioType = z.infer<typeof AudioTypeSchema>;

export const TaskStatusValueSchema = z.enum(['SUCCESS', 'PENDING', 'TIMEOUT', 'ERROR', 'PAYMENT_REQUIRED']);
export type TaskStatusValue = z.infer<typeof TaskStatusValueSchema>;

export const ProjectNameSchema = z.string().min(3).max(255).nullable().optional();
export const ProjectDescriptionSchema = z.string().min(3).max(5000).nullable().optional();
export const RunIdSchema = z.int().positive();
export const TaskIdSchema = z.string().min(1);
export const VoiceIdSchema = z.int().nonnegative();
export const ChosenDictionariesSchema = z.array(z.int()).min(1).nullable().optional();
export const FolderIdSchema = z.int().min(1).nullable().optional();

/** Body of a 422: `{ detail: [{ loc, msg, type }] }`. */
export const ValidationIssueSchema = z.object({
  loc: z.array(z.union([z.string(), z.int()])),
  msg: z.string(),
  type: z.string(),
});
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;
export const ValidationErrorBodySchema = z.object({ detail: z.array(ValidationIssueSchema) });
export type ValidationErrorBody = z.infer<typeof ValidationErrorBodySchema>;

/** Body of a 401 (DESIGN): `{ error, status }`. */
export const ErrorBodySchema = z.object({ error: z.string(), status: z.int().optional() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Answer of every creation call. */
export const TaskCreatedSchema = z.object({ task_id: TaskIdSchema });
export type TaskCreated = z.infer<typeof TaskCreatedSchema>;

/** Answer of every status call: `run_id` is null until SUCCESS; `message` may come with ERROR. */
export const TaskStatusSchema = z.object({
  status: TaskStatusValueSchema,
  run_id: RunIdSchema.nullable().optional(),
  message: z.string().nullable().optional(),
  /** A sample client reads this on SUCCESS of text-to-sound. */
  audio_url: z.string().nullable().optional(),
});
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Element of a story / transcription transcript. Times in seconds. */
export const DialogueItemSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  speaker: z.string(),
});
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

export const MAX_SOUND_DURATION = 10;
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
export type TextToSoundRequest = z.input<typeof TextToSoundRequestSchema>;

export const RunIdsRequestSchema = z.object({ run_ids: RunIdsSchema });
export type RunIdsRequest = z.infer<typeof RunIdsRequestSchema>;

export const OutputUrlEntrySchema = z.object({ output_url: z.string() });
export type OutputUrlEntry = z.infer<typeof OutputUrlEntrySchema>;
/** Keys are run ids (as strings), values result entries. */
export const BulkResultsSchema = z.record(z.string(), OutputUrlEntrySchema);
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
export type TtsRequest = z.input<typeof TtsRequestSchema>;

export const TTS_STREAM_FORMATS = [
  'wav', 'flac', 'mp3', 'adts',
  'pcm_s16le', 'pcm_s16be', 'pcm_s32le', 'pcm_s32be', 'pcm_f32le', 'pcm_f32be',
] as const;
export const TtsStreamFormatSchema = z.enum(TTS_STREAM_FORMATS);
export type TtsStreamFormat = z.infer<typeof TtsStreamFormatSchema>;

/** Output formats of the live speech session (`session.start` `output_format`). */
export const LIVE_OUTPUT_FORMATS = ['wav', 'mp3', 'flac', 'aac'] as const;
export const LiveOutputFormatSchema = z.enum(LIVE_OUTPUT_FORMATS);
/** One of {@link LIVE_OUTPUT_FORMATS}. */
export type LiveOutputFormat = z.infer<typeof LiveOutputFormatSchema>;

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
export type TtsStreamRequest = z.input<typeof TtsStreamRequestSchema>;

// ---------------------------------------------------------------------------
// Voices
// ---------------------------------------------------------------------------

/** Fields of POST /create-custom-voice (multipart). `file` travels as a file part. */
export const CreateCustomVoiceFieldsSchema = z.object({
  voice_name: z.string().min(1),
  gender: GenderSchema,
  description: z.string().nullable().optional(),
  age: z.int().min(1).default(30),
  enhance_audio: z.boolean().default(false),
  language: LanguageSchema.optional(),
});
export type CreateCustomVoiceFields = z.input<typeof CreateCustomVoiceFieldsSchema>;

export const CreateCustomVoiceResponseSchema = z.object({ voice_id: VoiceIdSchema });
export type CreateCustomVoiceResponse = z.infer<typeof CreateCustomVoiceResponseSchema>;

export const VoiceSchema = z.object({
  id: VoiceIdSchema,
  voice_name: z.string(),
  gender: GenderSchema,
  age: z.int().nullable(),
  description: z.string().nullable(),
  language: z.string().nullable(),
  is_published: z.boolean(),
});
export type Voice = z.infer<typeof VoiceSchema>;
export const VoiceListSchema = z.array(VoiceSchema);

// ---------------------------------------------------------------------------
// Audio separation (DESIGN)
// ---------------------------------------------------------------------------

export const AudioSeparationResultSchema = z.object({
  foreground_audio_url: z.string(),
  background_audio_url: z.string(),
});
export type AudioSeparationResult = z.infer<typeof AudioSeparationResultSchema>;

// ---------------------------------------------------------------------------
// Stories
// ---------------------------------------------------------------------------

/** Fields of POST /create-story (multipart, DESIGN). `file` (.txt or .docx) travels as a file part. */
export const CreateStoryFieldsSchema = z.object({
  source_language: LanguageSchema,
  title: z.string().min(1).optional(),
  description: z.string().optional(),
  narrator_voice_id: VoiceIdSchema.optional(),
  chosen_dictionaries: ChosenDictionariesSchema,
  folder_id: FolderIdSchema,
});
export type CreateStoryFields = z.input<typeof CreateStoryFieldsSchema>;

export const StoryRunSchema = z.object({
  audio_url: z.string(),
  dialogue_url: z.string(),
  transcript: z.array(DialogueItemSchema),
});
export type StoryRun = z.infer<typeof StoryRunSchema>;

export const TranslatedStoryResultSchema = z.object({
  audio_url: z.string(),
  dialogue_url: z.string(),
  transcript: z.array(DialogueItemSchema).optional(),
});
export type TranslatedStoryResult = z.infer<typeof TranslatedStoryResultSchema>;

export const TranslatedStoryQuerySchema = z.object({
  run_id: RunIdSchema,
  target_language: LanguageSchema,
  include_transcript: z.boolean().default(false),
});
export type TranslatedStoryQuery = z.input<typeof TranslatedStoryQuerySchema>;

// ---------------------------------------------------------------------------
// Dubbing project setup (path DESIGN)
// ---------------------------------------------------------------------------

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
export type ProjectSetupRequest = z.input<typeof ProjectSetupRequestSchema>;

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
export type TranslationStreamRequest = z.input<typeof TranslationStreamRequestSchema>;

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
export type TranslationRequest = z.input<typeof TranslationRequestSchema>;

export const TranslationResultSchema = z.object({ texts: z.array(z.string()) });
export type TranslationResult = z.infer<typeof TranslationResultSchema>;

// ---------------------------------------------------------------------------
// Transcription and subtitles
// ---------------------------------------------------------------------------

/** Fields of POST /transcription (multipart): `language`, and a `media_file` part or `media_url`. */
export const TranscriptionFieldsSchema = z.object({
  language: LanguageSchema,
  media_url: z.url().optional(),
});
export type TranscriptionFields = z.input<typeof TranscriptionFieldsSchema>;

export const TranscriptionResultSchema = z.object({ transcript: z.array(DialogueItemSchema) });
export type TranscriptionResult = z.infer<typeof TranscriptionResultSchema>;

/**
 * POST /sub: the contract shows no shape; we follow the nearest documented sibling,
 * transcription (multipart `language`, `media_file` or `media_url`), plus an optional
 * `target_language` for translated subtitles and a `subtitle_format`.
 */
export const SubtitlesFieldsSchema = z.object({
  language: LanguageSchema,
  media_url: z.url().optional(),
  target_language: LanguageSchema.optional(),
  subtitle_format: z.enum(['srt', 'vtt']).default('srt'),
});
export type SubtitlesFields = z.input<typeof SubtitlesFieldsSchema>;

/** GET /sub-result/{run_id}: the subtitle file as text, and the transcript it was made from. */
export const SubtitlesResultSchema = z.object({
  subtitle_format: z.enum(['srt', 'vtt']),
  subtitles: z.string(),
  transcript: z.array(DialogueItemSchema),
});
export type SubtitlesResult = z.infer<typeof SubtitlesResultSchema>;

// ---------------------------------------------------------------------------
// End-to-end dubbing
// ---------------------------------------------------------------------------

export const EndToEndDubbingRequestSchema = z.object({
  video_url: z.url(),
  source_language: LanguageSchema,
  target_languages: z.array(LanguageSchema).min(1),
  project_name: ProjectNameSchema,
  project_description: ProjectDescriptionSchema,
  chosen_dictionaries: ChosenDictionariesSchema,
  folder_id: FolderIdSchema,
});
export type EndToEndDubbingRequest = z.input<typeof EndToEndDubbingRequestSchema>;

export const DubbedRunInfoSchema = z.object({
  video_url: z.string(),
  audio_url: z.string(),
  transcript: z.array(DialogueItemSchema),
});
export type DubbedRunInfo = z.infer<typeof DubbedRunInfoSchema>;

// ---------------------------------------------------------------------------
// Run kinds (bulk calls require one kind)
// ---------------------------------------------------------------------------

export const RunKindSchema = z.enum([
  'text-to-sound', 'text-to-speech', 'audio-separation', 'story', 'project-setup',
  'translation', 'transcription', 'subtitles', 'dubbing',
]);
export type RunKind = z.infer<typeof RunKindSchema>;
