/**
 * Job descriptions of a batch: one zod schema per kind, discriminated by `kind`, the
 * jobs file reader (JSON Lines, errors by line number) and the hash that ties a journal
 * to its jobs.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  EndToEndDubbingRequestSchema,
  SubtitlesFieldsSchema,
  TextToSoundRequestSchema,
  TranscriptionFieldsSchema,
  TranslationRequestSchema,
  TtsRequestSchema,
} from '../core/schemas.js';

/** A job id: it names the output file, so letters, digits, `.`, `_` and `-` only (at most 200). */
export const JobIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-"');

/** An output path relative to the output directory (no absolute path, no `..`). */
export const OutputPathSchema = z
  .string()
  .min(1)
  .refine((path) => !/^([/\\]|[A-Za-z]:)/.test(path) && !path.split(/[/\\]/).includes('..'), 'must be a relative path inside the output directory');

const common = {
  /** Unique within the batch; the journal and the queue know the job by it. */
  id: JobIdSchema,
  /** Where the result goes, relative to the output directory (default `<id>` plus the kind's extension). */
  output: OutputPathSchema.optional(),
};

/** A media source of transcription and subtitles: a `media_url`, or `media_file` as a path. */
const mediaFile = { media_file: z.string().min(1).optional() };

/** Translate texts (POST /translation); the output is `{ "texts": [...] }` as JSON. */
export const TranslationJobSchema = z.object({ kind: z.literal('translation'), ...common, request: TranslationRequestSchema });
/** Speech through the task flow (POST /tts); the output is the audio. */
export const SpeechJobSchema = z.object({ kind: z.literal('speech'), ...common, request: TtsRequestSchema });
/** A sound effect or music clip (POST /text-to-sound); the output is WAV audio. */
export const SoundJobSchema = z.object({ kind: z.literal('sound'), ...common, request: TextToSoundRequestSchema });
/** Transcription (POST /transcription); the output is `{ "transcript": [...] }` as JSON. */
export const TranscriptionJobSchema = z.object({ kind: z.literal('transcription'), ...common, request: TranscriptionFieldsSchema.extend(mediaFile) });
/** Subtitles (POST /sub); the output is the subtitle file (`.srt` or `.vtt`). */
export const SubtitlesJobSchema = z.object({ kind: z.literal('subtitles'), ...common, request: SubtitlesFieldsSchema.extend(mediaFile) });
/** End-to-end dubbing (POST /end-to-end-dubbing); the output is the dubbed run info as JSON. */
export const DubbingJobSchema = z.object({ kind: z.literal('dubbing'), ...common, request: EndToEndDubbingRequestSchema });

/** One job of a batch, by `kind`. */
export const BatchJobSchema = z.discriminatedUnion('kind', [
  TranslationJobSchema,
  SpeechJobSchema,
  SoundJobSchema,
  TranscriptionJobSchema,
  SubtitlesJobSchema,
  DubbingJobSchema,
]);
/** One job as written by the caller (defaults not yet applied). */
export type BatchJobInput = z.input<typeof BatchJobSchema>;
/** One job after validation (defaults applied). */
export type BatchJob = z.infer<typeof BatchJobSchema>;
/** The kinds of job: also the task family names of `client.tasks.resume`. */
export type BatchJobKind = BatchJob['kind'];

/** The output path of `job`, relative to the output directory. */
export function outputPathOf(job: BatchJob): string {
  if (job.output !== undefined) return job.output;
  switch (job.kind) {
    case 'speech':
    case 'sound':
      return `${job.id}.wav`;
    case 'subtitles':
      return `${job.id}.${job.request.subtitle_format}`;
    default:
      return `${job.id}.json`;
  }
}

/** A line of a jobs file that is not a valid job. */
export interface JobLineError {
  /** 1-based line number. */
  line: number;
  message: string;
}

/** A jobs file read: the valid jobs in order, and the bad lines. */
export interface ParsedJobs {
  jobs: BatchJob[];
  errors: JobLineError[];
}

/**
 * Read a jobs file (JSON Lines: one job object a line; blank lines and lines starting
 * with `#` are ignored). Never throws: bad lines (not JSON, not a valid job, a repeated
 * id) come back in `errors` with their line numbers.
 *
 * @param text The content of the file.
 * @returns The valid jobs and the errors.
 */
export function parseJobLines(text: string): ParsedJobs {
  const jobs: BatchJob[] = [];
  const errors: JobLineError[] = [];
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      errors.push({ line, message: `not JSON (${(error as Error).message})` });
      return;
    }
    const parsed = BatchJobSchema.safeParse(value);
    if (!parsed.success) {
      errors.push({ line, message: parsed.error.issues.map((i) => `${i.path.join('.') || '(job)'}: ${i.message}`).join('; ') });
      return;
    }
    const first = seen.get(parsed.data.id);
    if (first !== undefined) {
      errors.push({ line, message: `id ${JSON.stringify(parsed.data.id)} repeats line ${first}` });
      return;
    }
    seen.set(parsed.data.id, line);
    jobs.push(parsed.data);
  });
  return { jobs, errors };
}

/**
 * A hash of the jobs (SHA-256 of their validated JSON, in order): a journal or a queue
 * records it, so that a journal is never applied to a different jobs file.
 */
export function jobsHash(jobs: readonly BatchJob[]): string {
  const hash = createHash('sha256');
  for (const job of jobs) hash.update(JSON.stringify(job)).update('\n');
  return hash.digest('hex');
}
