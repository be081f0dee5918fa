/**
 * Speech synthesis over HTTP: the deprecated task flow (POST /tts, its status, result
 * and bulk results) and the streaming variant (POST /tts-stream, see `tts-stream.ts`).
 */
import { defer, type Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import { TtsRequestSchema, type TaskCreated, type TaskStatus, type TtsRequest } from '../core/schemas.js';
import { createJson, getBytes, getStatus } from './family.js';
import { bulkResults, type BulkResultMap } from './shared.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';

const HINT = 'use client.ttsStream() (POST /tts-stream) or the live session instead.';

/**
 * The `/tts` task flow (`client.ttsTask`, formerly `client.speech`): every method is
 * deprecated by the service and warns once.
 *
 * @example
 * ```ts
 * const audio = await lastValueFrom(client.ttsTask.result(runId));
 * ```
 */
export class SpeechResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<Uint8Array>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'tts', statusPath: routes.ttsStatus, result: (runId, options) => this.#result(runId, options ?? {}) };
  }

  #deprecated(method: string): void {
    this.#transport.warnOnce(`speech.${method}`, `rxvoice: client.ttsTask.${method}() (POST /tts flow) is deprecated by the service; ${HINT}`);
  }

  #result(runId: number, options: CallOptions): Observable<Uint8Array> {
    return getBytes(this.#transport, routes.ttsResult, 'tts', runId, options);
  }

  /** @deprecated POST /tts is deprecated by the service; use `client.ttsStream()` or the live session. */
  create(request: TtsRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return defer(() => {
      this.#deprecated('create');
      return createJson(this.#transport, routes.tts, TtsRequestSchema, request, options);
    });
  }

  /** @deprecated Part of the POST /tts flow. */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return defer(() => {
      this.#deprecated('status');
      return getStatus(this.#transport, routes.ttsStatus, 'tts', taskId, options);
    });
  }

  /** @deprecated Part of the POST /tts flow. The audio of one run (GET /tts-result/{run_id}). */
  result(runId: number, options: CallOptions = {}): Observable<Uint8Array> {
    return defer(() => {
      this.#deprecated('result');
      return this.#result(runId, options);
    });
  }

  /**
   * @deprecated Part of the POST /tts flow. Results of any number of runs (see
   * `client.sound.results` for the batching and the shape).
   */
  fetchResults(runIds: readonly number[], options: CallOptions = {}): Observable<BulkResultMap> {
    return defer(() => {
      this.#deprecated('fetchResults');
      return bulkResults(this.#transport, runIds, routes.fetchTtsResults, this.family.name, (id, o) => this.#result(id, o), options);
    });
  }

  /** @deprecated The whole POST /tts task as events; the result is the audio bytes. */
  task(request: TtsRequest, options: CallOptions = {}): Observable<TaskEvent<Uint8Array>> {
    return defer(() => {
      this.#deprecated('task');
      const size = typeof request?.text === 'string' ? request.text.length : undefined;
      return runTask(this.#transport, this.family, createJson(this.#transport, routes.tts, TtsRequestSchema, request, options), options, size);
    });
  }
}
