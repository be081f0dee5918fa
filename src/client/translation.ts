/** Text translation: POST /translation, status, result. (The deprecated stream lives in translation-stream.ts.) */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  TranslationRequestSchema,
  TranslationResultSchema,
  type TaskCreated,
  type TaskStatus,
  type TranslationRequest,
  type TranslationResult,
} from '../core/schemas.js';
import { createJson, getResult, getStatus } from './family.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';

/** Text translation (POST /translation): create, status, result, and the whole task. */
export class TranslationResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<TranslationResult>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'translation', statusPath: routes.translationStatus, result: (id, o) => this.result(id, o) };
  }

  /** Create a translation task. Emits `{ task_id }`. */
  create(request: TranslationRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return createJson(this.#transport, routes.translation, TranslationRequestSchema, request, options);
  }

  /** Status (GET /translation/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.translationStatus, 'translation', taskId, options);
  }

  /** The translated texts (GET /translation-result/{run_id}). */
  result(runId: number, options: CallOptions = {}): Observable<TranslationResult> {
    return getResult(this.#transport, routes.translationResult, 'translation', TranslationResultSchema, runId, options);
  }

  /** The whole translation task as events. */
  task(request: TranslationRequest, options: CallOptions = {}): Observable<TaskEvent<TranslationResult>> {
    // Characters to translate (an invalid request fails validation in create()).
    const size = Array.isArray(request?.texts) ? request.texts.reduce((sum, text) => sum + String(text).length, 0) : undefined;
    return runTask(this.#transport, this.family, this.create(request, options), options, size);
  }
}
