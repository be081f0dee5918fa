/**
 * How the batch commands (`rxvoice batch`, `rxvoice worker`) show batch events: a bar or
 * one line per job on stderr, or JSON lines; a summary table; the exit code.
 */
import { tap, type Observable } from 'rxjs';
import type { BatchEvent, BatchProgressEvent } from '../batch/events.js';
import { redact, type RxVoiceError } from '../core/errors.js';
import type { CommandContext } from './context.js';
import { ExitCode, exitCodeOf, type ExitCodeValue } from './exit-codes.js';
import { writeJson, writeLine, type CliIo } from './io.js';
import { startProgress, type Progress } from './progress.js';
import { runToEnd } from './run.js';

/** Render batch events (bar / lines / JSON), print the summary, and map the outcome to an exit code. */
export async function runWithReport(
  events$: Observable<BatchEvent>,
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
    case 'journal-repaired':
      return (
        `journal ${event.path}: repaired (the damaged bytes are in ${event.damagedCopy}); ${event.keptRecords} record(s) kept, ` +
        `${event.lostLines} damaged line(s)${event.missingBytes > 0 ? ` and ${event.missingBytes} missing byte(s)` : ''} lost; ` +
        `${event.lostJobs.length} job(s) may have been sent and are not created again${event.lostJobs.length > 0 ? ' without --allow-repay' : ''}`
      );
    case 'outputs-untrusted':
      return `not trusted, run again: ${event.outputs.map((o) => `${o.output} ${o.problem}`).join('; ')}`;
    case 'journal-tail':
      return `journal ${event.path}: the last run died while writing it; ${event.droppedBytes} uncommitted byte(s) dropped${event.torn ? ' (a torn record)' : ''}, nothing it relied on`;
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
