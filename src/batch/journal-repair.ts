/**
 * Repair of a damaged batch journal (`repair: true`, `rxvoice batch --repair`): keep every
 * record that verifies, and mark `lost` every job the kept records cannot account for, so
 * that nothing the damaged journal may have sent is created (and paid) again unless the
 * user allows it (`allowRepay`).
 *
 * Which job a garbled or missing record belonged to cannot be known, so when anything was
 * lost, a job is accounted for only by a kept record that settles it: `done` (its output
 * was written) or `task` as its last record (the task is resumed, never created again).
 * Every other job (no record, `intent`, `sent`, `answered`, `abandoned`) may have had a
 * creation call among the lost records, and is marked `lost`.
 *
 * The repaired journal is written beside the damaged one, fsynced, and renamed over it (the
 * directory fsynced too); the damaged bytes are kept in `<journal>.damaged` for inspection.
 * A cut in the middle leaves either the damaged journal (repair again) or the repaired one.
 */
import { copyFile, open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { JournalError } from './errors.js';
import { JournalHeaderSchema, JournalRecordSchema, headerLine, lineOf, recordedJobs, verified, type JournalRecord } from './journal-records.js';

/** What a repair of a damaged journal kept and lost (`repair: true`; see `Journal.repaired`). */
export interface JournalRepair {
  /** Where the damaged journal's bytes were kept. */
  damagedCopy: string;
  /** Records that verified and were kept. */
  keptRecords: number;
  /** Lines up to the committed length that failed their checksum or schema (lost records). */
  lostLines: number;
  /** Bytes the header counted that the file did not hold (lost records of unknown number). */
  missingBytes: number;
  /** Jobs marked `lost`: they may have been sent, and are not created again without `allowRepay`. */
  lostJobs: string[];
}

/** What the damaged file still says: the records that verify, and how much was lost. */
interface Salvage {
  records: JournalRecord[];
  lostLines: number;
  missingBytes: number;
}

/**
 * Repair the damaged journal at `path` (its lock held by the caller) for the jobs
 * `jobIds`, whose hash is `jobsHash`. Rejects with `JournalError` when its header does not
 * verify (nothing ties it to these jobs: `'unreadable'`) or belongs to other jobs.
 */
export async function repairJournal(path: string, jobsHash: string, jobIds: readonly string[]): Promise<JournalRepair> {
  const bytes = await readFile(path);
  const { records, lostLines, missingBytes } = salvage(path, bytes, jobsHash);
  const lostJobs: string[] = [];
  if (lostLines > 0 || missingBytes > 0) {
    const jobs = recordedJobs(records);
    for (const id of jobIds) {
      const recorded = jobs.get(id);
      if (recorded?.output !== undefined || recorded?.taskId !== undefined) continue;
      lostJobs.push(id);
    }
  }
  const lines = [...records, ...lostJobs.map((id): JournalRecord => ({ type: 'lost', id }))].map(lineOf).join('');
  const header = headerLine(jobsHash, 0);
  const content = Buffer.concat([headerLine(jobsHash, header.byteLength + Buffer.byteLength(lines)), Buffer.from(lines)]);
  const damagedCopy = `${path}.damaged`;
  await copyFile(path, damagedCopy);
  await writeDurably(`${path}.repair`, content);
  await rename(`${path}.repair`, path);
  await syncDirectory(dirname(path));
  return { damagedCopy, keptRecords: records.length, lostLines, missingBytes, lostJobs };
}

/** Read what verifies from a damaged journal: the uncommitted tail is handled as when opened. */
function salvage(path: string, bytes: Buffer, jobsHash: string): Salvage {
  const firstEnd = bytes.indexOf(0x0a);
  const header = JournalHeaderSchema.safeParse(firstEnd < 0 ? undefined : verified(bytes.subarray(0, firstEnd).toString('utf8')));
  if (!header.success) {
    throw new JournalError(path, 'unreadable', `The batch journal ${path} cannot be repaired: its header (first line) does not verify, so nothing ties it to these jobs`);
  }
  if (header.data.jobs_hash !== jobsHash) {
    throw new JournalError(path, 'mismatch', `The batch journal ${path} belongs to a different jobs file; repair it with the jobs file it was made for`);
  }
  const committed = Number(header.data.committed);
  const records: JournalRecord[] = [];
  let lostLines = 0;
  let position = firstEnd + 1;
  while (position < bytes.byteLength) {
    const newline = bytes.indexOf(0x0a, position);
    const end = newline < 0 ? bytes.byteLength : newline;
    const parsed = JournalRecordSchema.safeParse(verified(bytes.subarray(position, end).toString('utf8')));
    const uncommitted = position >= committed;
    if (parsed.success) {
      // past the committed length a `sent` record's last byte never went (as when opened)
      if (!(uncommitted && (parsed.data.type === 'intent' || parsed.data.type === 'sent'))) records.push(parsed.data);
    } else if (!uncommitted) lostLines++;
    position = end + 1;
  }
  return { records, lostLines, missingBytes: Math.max(0, committed - bytes.byteLength) };
}

async function writeDurably(path: string, content: Buffer): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.writeFile(content);
    await file.datasync();
  } finally {
    await file.close();
  }
}

/** Make a rename in `directory` durable (where the platform allows it). */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
