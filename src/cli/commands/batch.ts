/**
 * `rxvoice batch jobs.jsonl --out DIR`: many task jobs, resumable (the same command
 * again picks up where it stopped), with a progress bar on a terminal, plain lines
 * otherwise, JSON lines with `--json`, and a summary table at the end. With
 * `--queue redis://…` the jobs go to a BullMQ queue for `rxvoice worker` instead.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { tap } from 'rxjs';
import { batch } from '../../batch/batch.js';
import type { BatchEvent, BatchProgressEvent } from '../../batch/events.js';
import { parseJobLines, type BatchJob } from '../../batch/jobs.js';
import { ValidationError, redact, type RxVoiceError } from '../../core/errors.js';
import { onePositional, parseCommand, readNumber, requireString } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError, exitCodeOf, type ExitCodeValue } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson, writeLine, type CliIo } from '../io.js';
import { startProgress, type Progress } from '../progress.js';
import { runToEnd } from '../run.js';

/** `rxvoice batch`: run (or enqueue) a jobs file. Resolves with the exit code. */
export async function batchCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('batch', argv, {
    out: { type: 'string', short: 'o' },
    concurrency: { type: 'string' },
    rate: { type: 'string' },
    retries: { type: 'string' },
    journal: { type: 'string' },
    unconfirmed: { type: 'string' },
    'skip-invalid': { type: 'boolean' },
    queue: { type: 'string' },
    'queue-name': { type: 'string' },
    'connect-timeout-ms': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['batch'] as string);
    return ExitCode.ok;
  }
  const file = resolve(io.cwd ?? process.cwd(), onePositional('batch', positionals, 'jobs file (JSON Lines)'));
  const concurrency = readNumber('batch', values.concurrency, 'concurrency', { min: 1, integer: true });
  const ratePerSecond = readNumber('batch', values.rate, 'rate', { min: Number.MIN_VALUE });
  const retries = readNumber('batch', values.retries, 'retries', { min: 0, integer: true });
  const unconfirmed = values.unconfirmed;
  if (unconfirmed !== undefined && unconfirmed !== 'recreate' && unconfirmed !== 'fail') {
    throw new UsageError(`--unconfirmed must be recreate or fail, not ${JSON.stringify(unconfirmed)}`, 'batch');
  }
  const connectTimeoutMs = readNumber('batch', values['connect-timeout-ms'], 'connect-timeout-ms', { min: 1 });
  const jobs = await readJobs(io, file, values['skip-invalid'] === true);
  if (values.queue !== undefined) {
    // Enqueue only: the workers hold the key and write the outputs.
    const { queueBatchCommand } = await import('./worker.js');
    return queueBatchCommand(jobs, { url: values.queue, name: values['queue-name'], json: values.json === true, connectTimeoutMs }, context);
  }

  const out = resolve(io.cwd ?? process.cwd(), requireString('batch', values.out, 'out'));
  return withConnection(context, async ({ client }) => {
    const events$ = batch(jobs, {
      client,
      out,
      ...(values.journal !== undefined ? { journal: resolve(io.cwd ?? process.cwd(), values.journal) } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(ratePerSecond !== undefined ? { ratePerSecond } : {}),
      ...(retries !== undefined ? { retries } : {}),
      ...(unconfirmed !== undefined ? { unconfirmed } : {}),
    });
    return runWithReport(events$, io, context, values.json === true, 'batch');
  });
}

/**
 * Read and check a jobs file: every bad line is reported with its number; unless
 * `skipInvalid`, any bad line stops the command before anything runs (exit 4).
 */
export async function readJobs(io: CliIo, file: string, skipInvalid: boolean): Promise<BatchJob[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the jobs file ${file}: ${(error as Error).message}`, 'batch');
  }
  const { jobs, errors } = parseJobLines(text);
  for (const error of errors) writeLine(io.stderr, `rxvoice: ${file}:${error.line}: ${error.message}${skipInvalid ? ' (skipped)' : ''}`);
  if (errors.length > 0 && !skipInvalid) {
    throw new ValidationError(
      [{ loc: ['jobs', errors[0]?.line ?? 0], msg: `${errors.length} bad line(s) in ${file}; nothing was run (--skip-invalid runs the valid ones)`, type: 'value_error' }],
      { source: 'local', endpoint: 'rxvoice batch' },
    );
  }
  if (jobs.length === 0) throw new UsageError(`no jobs in ${file}`, 'batch');
  return jobs;
}

/** Render batch events (bar / lines / JSON), print the summary, and map the outcome to an exit code. */
export async function runWithReport(
  events$: import('rxjs').Observable<BatchEvent>,
  io: CliIo,
  context: CommandContext,
  json: boolean,
  label: string,
): Promise<number> {
  const progress = startProgress(io.stderr, label, { silent: json });
  let summary: BatchProgressEvent | undefined;
  let firstFailure: RxVoiceError | undefined;
  try {
    await runToEnd(
      events$.pipe(
        tap((event) => {
          if (event.type === 'progress') summary = event;
          if (event.type === 'failed') firstFailure ??= event.error;
          report(event, io, progress, json, context.secrets);
        }),
      ),
      context.signal,
    );
  } finally {
    progress.stop();
  }
  if (summary && !json) io.stdout.write(summaryTable(summary));
  if (firstFailure === undefined) return ExitCode.ok;
  const code: ExitCodeValue = exitCodeOf(firstFailure);
  return code === ExitCode.ok ? ExitCode.failure : code;
}

function report(event: BatchEvent, io: CliIo, progress: Progress, json: boolean, secrets: ReadonlyArray<string | undefined>): void {
  if (json) {
    writeJson(io.stdout, 'error' in event ? { ...event, error: errorJson(event.error, secrets) } : event);
    return;
  }
  if (event.type === 'progress') {
    progress.update('running', bar(event));
    return;
  }
  const line = jobLine(event, secrets);
  if (line === undefined) return;
  // On a terminal the bar carries the progress; only failures and retries get lines there.
  if (io.stderr.isTTY !== true || event.type === 'failed' || event.type === 'retrying') progress.above(() => writeLine(io.stderr, line));
}

/** One plain line for a job event (none for `pending`). */
export function jobLine(event: Exclude<BatchEvent, BatchProgressEvent>, secrets: ReadonlyArray<string | undefined>): string | undefined {
  switch (event.type) {
    case 'created':
      return `${event.id}: created task ${event.task_id}${event.recreated ? ' (an earlier creation was unconfirmed)' : ''}`;
    case 'resumed':
      return `${event.id}: resuming task ${event.task_id}`;
    case 'done':
      return `${event.id}: ${event.skipped ? 'already done' : 'done'}: ${event.output}`;
    case 'retrying':
      return `${event.id}: ${redact(event.error.message, secrets)}; retrying in ${(event.delayMs / 1000).toFixed(1)} s`;
    case 'failed':
      return `${event.id}: failed: ${event.error.name}: ${redact(event.error.message, secrets)}`;
    case 'pending':
      return undefined;
  }
}

function errorJson(error: RxVoiceError, secrets: ReadonlyArray<string | undefined>): { name: string; code: string; message: string } {
  return { name: error.name, code: error.code, message: redact(error.message, secrets) };
}

/** `[#####-----] 120/200 done, 3 failed, 12.3 jobs/s, ETA 7 s`. */
export function bar(progress: BatchProgressEvent, width = 20): string {
  const finished = progress.done + progress.skipped + progress.failed;
  const filled = progress.total === 0 ? width : Math.round((finished / progress.total) * width);
  const eta = progress.etaMs === undefined ? '' : `, ETA ${Math.ceil(progress.etaMs / 1000)} s`;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${finished}/${progress.total}, ${progress.failed} failed, ${progress.jobsPerSecond.toFixed(1)} jobs/s${eta}`;
}

/** The summary table: one row per kind, then the totals. */
export function summaryTable(progress: BatchProgressEvent): string {
  const rows = [['kind', 'jobs', 'done', 'skipped', 'failed']];
  for (const [kind, counts] of Object.entries(progress.byKind)) {
    rows.push([kind, String(counts.total), String(counts.done), String(counts.skipped), String(counts.failed)]);
  }
  rows.push(['total', String(progress.total), String(progress.done), String(progress.skipped), String(progress.failed)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
  const notes = [
    `tasks created ${progress.created}, resumed ${progress.resumed}; ${(progress.elapsedMs / 1000).toFixed(1)} s, ${progress.jobsPerSecond.toFixed(1)} jobs/s`,
  ];
  if (progress.recreated > 0) notes.push(`${progress.recreated} job(s) created again after an unconfirmed creation (that task may be paid too)`);
  return `${lines.join('\n')}\n${notes.join('\n')}\n`;
}
