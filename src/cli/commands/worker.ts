/**
 * `rxvoice worker --queue redis://… --out DIR`: process batch jobs from a BullMQ queue
 * until SIGINT/SIGTERM, on any number of machines. The API key is this process's own
 * (`CAMB_API_KEY` or `RXVOICE_API_KEY`); the queue never holds it. Also `rxvoice batch --queue`: put a
 * jobs file on the queue and follow it to the end.
 */
import { resolve } from 'node:path';
import { tap } from 'rxjs';
import { enqueueBatch, runWorker } from '../../batch/queue.js';
import type { BatchJob } from '../../batch/jobs.js';
import { parseCommand, noPositionals, readNumber, requireString } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson, writeLine } from '../io.js';
import { runToEnd } from '../run.js';
import { jobLine, runWithReport } from '../batch-report.js';
import { redact } from '../../core/errors.js';

/** `rxvoice worker`: run jobs from the queue until interrupted. Resolves with the exit code. */
export async function workerCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('worker', argv, {
    queue: { type: 'string' },
    'queue-name': { type: 'string' },
    out: { type: 'string', short: 'o' },
    concurrency: { type: 'string' },
    rate: { type: 'string' },
    retries: { type: 'string' },
    unconfirmed: { type: 'string' },
    'lock-ms': { type: 'string' },
    'connect-timeout-ms': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['worker'] as string);
    return ExitCode.ok;
  }
  noPositionals('worker', positionals);
  const queue = requireString('worker', values.queue, 'queue');
  const out = resolve(io.cwd ?? process.cwd(), requireString('worker', values.out, 'out'));
  const concurrency = readNumber('worker', values.concurrency, 'concurrency', { min: 1, integer: true });
  const ratePerSecond = readNumber('worker', values.rate, 'rate', { min: Number.MIN_VALUE });
  const retries = readNumber('worker', values.retries, 'retries', { min: 0, integer: true });
  const lockDurationMs = readNumber('worker', values['lock-ms'], 'lock-ms', { min: 100, integer: true });
  const connectTimeoutMs = readNumber('worker', values['connect-timeout-ms'], 'connect-timeout-ms', { min: 1 });
  const unconfirmed = values.unconfirmed;
  if (unconfirmed !== undefined && unconfirmed !== 'recreate' && unconfirmed !== 'fail') {
    throw new UsageError(`--unconfirmed must be recreate or fail, not ${JSON.stringify(unconfirmed)}`, 'worker');
  }
  return withConnection(context, async ({ client }) => {
    const events$ = runWorker({
      queue,
      client,
      out,
      ...(values['queue-name'] !== undefined ? { name: values['queue-name'] } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(ratePerSecond !== undefined ? { ratePerSecond } : {}),
      ...(retries !== undefined ? { retries } : {}),
      ...(lockDurationMs !== undefined ? { lockDurationMs } : {}),
      ...(connectTimeoutMs !== undefined ? { connectTimeoutMs } : {}),
      ...(unconfirmed !== undefined ? { unconfirmed } : {}),
    }).pipe(
      tap((event) => {
        if (values.json) writeJson(io.stdout, 'error' in event ? { ...event, error: { name: event.error.name, code: event.error.code, message: redact(event.error.message, context.secrets) } } : event);
        else {
          const line = jobLine(event, context.secrets);
          if (line !== undefined) writeLine(io.stderr, line);
        }
      }),
    );
    if (!values.json) writeLine(io.stderr, `rxvoice: worker on queue ${values['queue-name'] ?? 'rxvoice-batch'}, writing to ${out}; Ctrl-C stops it`);
    // Runs until interrupted (then the worker closes; its jobs in flight go to other workers).
    await runToEnd(events$, context.signal).catch((error: unknown) => {
      if (!context.signal.aborted) throw error;
    });
    return ExitCode.ok;
  });
}

/** `rxvoice batch --queue URL`: enqueue the jobs and follow them until all ended. */
export async function queueBatchCommand(
  jobs: BatchJob[],
  options: { url: string; name: string | undefined; json: boolean; connectTimeoutMs: number | undefined },
  context: CommandContext,
): Promise<number> {
  const events$ = enqueueBatch(jobs, {
    queue: options.url,
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
  });
  return runWithReport(events$, context.io, context, options.json, 'batch (queue)');
}
