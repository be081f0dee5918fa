/**
 * The journal's records and lines (see ./journal.ts for the format): the schemas, the
 * line codec (`<json> <sum>\n`, the sum the first 8 hex digits of the SHA-256 of the
 * JSON), and what a list of records says of each job. Shared by the journal and its repair.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
/** Version of the journal format written. */
export const JOURNAL_VERSION = 2;

const JobIdField = z.string().min(1);
const TaskIdField = z.string().min(1);

/** One record of the journal (the header aside), checked with this schema when read. */
export const JournalRecordSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('intent'), id: JobIdField }),
  z.strictObject({ type: z.literal('sent'), id: JobIdField }),
  z.strictObject({ type: z.literal('answered'), id: JobIdField, code: z.string() }),
  z.strictObject({ type: z.literal('task'), id: JobIdField, task_id: TaskIdField }),
  z.strictObject({ type: z.literal('abandoned'), id: JobIdField, task_id: TaskIdField, code: z.string() }),
  z.strictObject({ type: z.literal('done'), id: JobIdField, task_id: TaskIdField.optional(), output: z.string().min(1) }),
  z.strictObject({ type: z.literal('lost'), id: JobIdField }),
]);
/** One record of the journal. */
export type JournalRecord = z.infer<typeof JournalRecordSchema>;

/** The journal's first line. */
export const JournalHeaderSchema = z.strictObject({
  type: z.literal('batch'),
  version: z.literal(JOURNAL_VERSION),
  jobs_hash: z.string().regex(/^[0-9a-f]{64}$/),
  committed: z.string().regex(/^\d{16}$/),
});

/** What earlier runs recorded of one job. */
export interface RecordedJob {
  /** The live task to resume (none when never created, or abandoned). */
  taskId?: string;
  /** The output written, when the job finished. */
  output?: string;
  /**
   * The creation call's request was complete on the wire but its answer never recorded
   * (the process died in between): the task may exist on the service, and nothing can tell.
   */
  unconfirmed: boolean;
  /**
   * A repair of the damaged journal could not account for the job (its records may be
   * among those lost): it may have been sent and paid; created again only with `allowRepay`.
   */
  lost?: boolean;
  /** Whether the journal holds any record of the job. */
  known: boolean;
}

/** The checksum of a record's JSON text. */
function sumOf(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 8);
}

/** A record (or the header) as its journal line: `<json> <sum>\n`. */
export function lineOf(record: JournalRecord | z.infer<typeof JournalHeaderSchema>): string {
  const json = JSON.stringify(record);
  return `${json} ${sumOf(json)}\n`;
}

/** The header line of a journal of the jobs `jobsHash`, committed up to `committed`. */
export function headerLine(jobsHash: string, committed: number): Buffer {
  return Buffer.from(lineOf({ type: 'batch', version: JOURNAL_VERSION, jobs_hash: jobsHash, committed: String(committed).padStart(16, '0') }));
}

/** The JSON of one line (without its newline) when its checksum holds, else undefined. */
export function verified(line: string): unknown {
  const space = line.lastIndexOf(' ');
  if (space < 0) return undefined;
  const json = line.slice(0, space);
  if (sumOf(json) !== line.slice(space + 1)) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** Record `record` into `jobs` (what the journal says of its job from now on). */
export function applyRecord(jobs: Map<string, RecordedJob>, record: JournalRecord): void {
  switch (record.type) {
    case 'intent':
      // Not sent yet: as if nothing had been tried (a new creation call pays nothing twice).
      jobs.set(record.id, { unconfirmed: false, known: true });
      break;
    case 'sent':
      jobs.set(record.id, { unconfirmed: true, known: true });
      break;
    case 'task':
      jobs.set(record.id, { taskId: record.task_id, unconfirmed: false, known: true });
      break;
    case 'answered':
    case 'abandoned':
      jobs.set(record.id, { unconfirmed: false, known: true });
      break;
    case 'done':
      jobs.set(record.id, { ...(record.task_id !== undefined ? { taskId: record.task_id } : {}), output: record.output, unconfirmed: false, known: true });
      break;
    case 'lost':
      jobs.set(record.id, { unconfirmed: true, lost: true, known: true });
      break;
  }
}

/** What the records say of each job, in order (the last record of a job decides). */
export function recordedJobs(records: readonly JournalRecord[]): Map<string, RecordedJob> {
  const jobs = new Map<string, RecordedJob>();
  for (const record of records) applyRecord(jobs, record);
  return jobs;
}
