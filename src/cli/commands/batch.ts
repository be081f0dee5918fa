/**
 * `rxvoice batch jobs.jsonl --out DIR`: many task jobs, resumable (the same command
 * again picks up where it stopped), with a progress bar on a terminal, plain lines
 * otherwise, JSON lines with `--json`, and a summary table at the end. With
 * `--queue redis://…` the jobs go to a BullMQ queue for `rxvoice worker` instead.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { batch } from '../../batch/batch.js';
import { parseJobLines, type BatchJob } from '../../batch/jobs.js';
import { ValidationError } from '../../core/errors.js';
import { onePositional, parseCommand, readNumber, requireString } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeLine, type CliIo } from '../io.js';
import { runWithReport } from '../batch-report.js';

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
    'trust-outputs': { type: 'boolean' },
    repair: { type: 'boolean' },
    'allow-repay': { type: 'boolean' },
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
      ...(values['trust-outputs'] === true ? { trustOutputs: true } : {}),
      ...(values.repair === true ? { repair: true } : {}),
      ...(values['allow-repay'] === true ? { allowRepay: true } : {}),
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
