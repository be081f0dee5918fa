/**
 * The task pattern as Observables. Subscribing creates the task; the Observable emits
 * typed progress events and completes after the `result` event, which is always the
 * last one:
 *
 * ```
 * created ── pending ── pending ── … ── result|
 * ```
 *
 * so `lastValueFrom(client.textToSound({ prompt }))` is the one-line way to the result
 * event, and `.pipe(taskResult())` maps the stream to the result value alone.
 *
 * Polling calls every second (by default; `initialDelayMs`, `multiplier`, `maxDelayMs`)
 * until the client has seen 3 tasks of the family; then it polls where the durations it has seen
 * (against request size) say completion is likely (`polling.ts`; jitter then only
 * shortens a wait). Always under an overall deadline (a `TaskDeadlineError`, a
 * `TimeoutError` carrying the task id). Timers
 * run on the client's scheduler, so tests drive them in virtual time. Unsubscribing
 * stops polling at once and aborts the request in flight. Terminal statuses become
 * `TaskFailedError` (ERROR), `TaskTimeoutError` (TIMEOUT) and `PaymentRequiredError`
 * (PAYMENT_REQUIRED), each carrying the task id.
 */
import { Observable, concat, defer, filter, map, of, switchMap, throwError, timer, type OperatorFunction } from 'rxjs';
import { z } from 'zod';
import { PaymentRequiredError, ProtocolError, TaskFailedError, TaskTimeoutError, TimeoutError } from '../core/errors.js';
import { createTaskDurationModel, nextPollDelay, type TaskDurationModel } from './polling.js';
import { withSignal, type CallOptions, type HttpTransport } from './request.js';
import { TaskStatusSchema, TaskStatusValueSchema, type TaskCreated, type TaskStatus } from '../core/schemas.js';

/** Emitted once the creation call answered. */
export interface TaskCreatedEvent {
  type: 'created';
  task_id: string;
}

/** Emitted after each status call that answered PENDING. */
export interface TaskPendingEvent {
  type: 'pending';
  task_id: string;
  /** Status calls made so far. */
  polls: number;
  /** Time since polling started, ms (on the client's scheduler). */
  elapsedMs: number;
}

/**
 * Timings of a task, ms on the client's scheduler: how long it waited in the service
 * (queue and processing, as polling saw it) and what polling cost.
 */
export interface TaskTiming {
  /** Subscription to the creation answer (0 for `client.tasks.resume`). */
  createMs: number;
  /** Creation answer to the answer of the status call that found the task done: its time in the service, as seen (an upper bound). */
  pendingMs: number;
  /** When the last status call that still answered PENDING was sent, after the creation answer (a lower bound of the time in the service; 0 if none). */
  lastPendingMs: number;
  /** Status calls made. */
  polls: number;
  /** Download of the result. */
  resultMs: number;
}

/** The last event: the task succeeded and its result was fetched. */
export interface TaskResultEvent<R> {
  type: 'result';
  task_id: string;
  run_id: number;
  result: R;
  /** Queue and poll timings of the task. */
  timing: TaskTiming;
}

/** Progress of a task, ending with its result. */
export type TaskEvent<R> = TaskCreatedEvent | TaskPendingEvent | TaskResultEvent<R>;

/** The polling deadline passed while the task was still PENDING. */
export class TaskDeadlineError extends TimeoutError {
  override name = 'TaskDeadlineError';
  readonly taskId: string;
  constructor(taskId: string, deadlineMs: number) {
    super(`Task ${taskId} was still pending after ${deadlineMs} ms of polling; resume it with client.tasks.resume().`);
    this.taskId = taskId;
  }
}

/**
 * Maps task events to the result value alone (progress events are dropped).
 *
 * ```
 * created ── pending ── result(r)|
 * taskResult()
 * ────────────────────── r|
 * ```
 *
 * Errors pass through unchanged.
 *
 * ## Example
 * ```ts
 * const audio = await lastValueFrom(client.textToSound({ prompt: 'rain' }).pipe(taskResult()));
 * ```
 * @return An operator emitting the `result` of the `result` event.
 */
export function taskResult<R>(): OperatorFunction<TaskEvent<R>, R> {
  return (source) =>
    source.pipe(
      filter((event): event is TaskResultEvent<R> => event.type === 'result'),
      map((event) => event.result),
    );
}

export { pollDelay } from './polling.js';

/** Status answers: the object of the contract, or a bare status string; `FAILED` read as ERROR. */
export const TaskStatusAnswerSchema = z.union([
  TaskStatusSchema,
  TaskStatusValueSchema.transform((status) => ({ status }) as TaskStatus),
  TaskStatusSchema.extend({ status: z.literal('FAILED').transform(() => 'ERROR' as const) }),
]);

/** How to poll and fetch one family of tasks. */
export interface TaskFamilyDefinition<R> {
  /** e.g. `text-to-sound`, for messages. */
  name: string;
  statusPath: (taskId: string) => string;
  result: (runId: number, options?: CallOptions) => Observable<R>;
}

const durationModels = new WeakMap<HttpTransport, TaskDurationModel>();

/** The task durations one client (its transport) has seen. */
function durationModelOf(transport: HttpTransport): TaskDurationModel {
  let model = durationModels.get(transport);
  if (!model) {
    model = createTaskDurationModel();
    durationModels.set(transport, model);
  }
  return model;
}

/**
 * Poll an existing task until it ends; emits pending events then the result event.
 * `size` (e.g. characters of text, seconds of audio asked for) lets the learned policy
 * tell small requests from large ones.
 */
export function pollTask<R>(
  transport: HttpTransport,
  family: TaskFamilyDefinition<R>,
  taskId: string,
  options: CallOptions = {},
  size?: number,
): Observable<TaskPendingEvent | TaskResultEvent<R>> {
  const { scheduler, polling, random } = transport.config;
  const model = durationModelOf(transport);
  const polled$ = defer(() => {
    const started = scheduler.now();
    const prediction = polling.adaptive ? model.predict(family.name, size) : undefined;
    const statusOnce = (): Observable<TaskStatus> =>
      transport.json(
        // the task named in errors (an unknown status...), so that `tasks.resume` can take it up
        { method: 'GET', path: family.statusPath(taskId), kind: 'idempotent', endpoint: `GET ${family.name} status of task ${taskId}`, signal: options.signal },
        TaskStatusAnswerSchema,
      );
    const poll = (n: number, lastSentMs: number): Observable<TaskPendingEvent | TaskResultEvent<R>> => {
      const elapsedBefore = scheduler.now() - started;
      const remaining = polling.deadlineMs - elapsedBefore;
      if (remaining <= 0) return throwError(() => new TaskDeadlineError(taskId, polling.deadlineMs));
      const delay = Math.min(nextPollDelay(prediction, n, lastSentMs, elapsedBefore, polling, random), remaining);
      let sentMs = 0;
      return timer(delay, scheduler).pipe(
        switchMap(() => {
          sentMs = scheduler.now() - started;
          return statusOnce();
        }),
        switchMap((status) => {
          if (status.status === 'SUCCESS') model.record(family.name, size, lastSentMs, sentMs);
          switch (status.status) {
            case 'PENDING': {
              const pending: TaskPendingEvent = { type: 'pending', task_id: taskId, polls: n + 1, elapsedMs: scheduler.now() - started };
              return concat(of(pending), poll(n + 1, sentMs));
            }
            case 'SUCCESS': {
              const runId = status.run_id;
              if (runId === null || runId === undefined) {
                return throwError(() => new ProtocolError(`${family.name} task ${taskId} is SUCCESS but carries no run_id`));
              }
              transport.rememberRun(runId, family.name);
              const pendingMs = scheduler.now() - started;
              return family.result(runId, options).pipe(
                map((result): TaskResultEvent<R> => ({
                  type: 'result',
                  task_id: taskId,
                  run_id: runId,
                  result,
                  timing: { createMs: 0, pendingMs, lastPendingMs: lastSentMs, polls: n + 1, resultMs: scheduler.now() - started - pendingMs },
                })),
              );
            }
            case 'ERROR':
              return throwError(() => new TaskFailedError(taskId, status.message == null ? undefined : transport.redact(status.message)));
            case 'TIMEOUT':
              return throwError(() => new TaskTimeoutError(taskId));
            case 'PAYMENT_REQUIRED':
              return throwError(() => new PaymentRequiredError(taskId));
          }
        }),
      );
    };
    return poll(0, 0);
  });
  // The signal also ends the wait between two status calls, not only a request in flight.
  return withSignal(polled$, options.signal);
}

/** Create a task with `create$`, then poll it: the full event sequence (`size`: see {@link pollTask}). */
export function runTask<R>(
  transport: HttpTransport,
  family: TaskFamilyDefinition<R>,
  create$: Observable<TaskCreated>,
  options: CallOptions = {},
  size?: number,
): Observable<TaskEvent<R>> {
  const { scheduler } = transport.config;
  return withSignal(
    defer(() => {
      const subscribed = scheduler.now();
      return create$.pipe(
        switchMap(({ task_id }) => {
          const createMs = scheduler.now() - subscribed;
          return concat(
            of<TaskEvent<R>>({ type: 'created', task_id }),
            pollTask(transport, family, task_id, options, size).pipe(
              map((event) => (event.type === 'result' ? { ...event, timing: { ...event.timing, createMs } } : event)),
            ),
          );
        }),
      );
    }),
    options.signal,
  );
}
