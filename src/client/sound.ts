/** Sound and music generation: POST /text-to-sound, its status, single and bulk results. */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import { TextToSoundRequestSchema, type TaskCreated, type TaskStatus, type TextToSoundRequest } from '../core/schemas.js';
import { createJson, getBytes, getStatus } from './family.js';
import { bulkResults, type BulkResultMap } from './shared.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';

/** Sound and music generation: create, status, one result (WAV bytes), bulk results (`output_url` per run), and the whole task. */
export class SoundResource {
  readonly #transport: HttpTransport;
  /** @internal How the task pattern polls and fetches this family. */
  readonly family: TaskFamilyDefinition<Uint8Array>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'text-to-sound', statusPath: routes.textToSoundStatus, result: (runId, options) => this.result(runId, options) };
  }

  /** Create a sound or music task (POST /text-to-sound). Emits `{ task_id }`. */
  create(request: TextToSoundRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return createJson(this.#transport, routes.textToSound, TextToSoundRequestSchema, request, options);
  }

  /** Status of a task (GET /text-to-sound/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.textToSoundStatus, 'text-to-sound', taskId, options);
  }

  /** The audio of one run (GET /text-to-sound-result/{run_id}), WAV bytes. */
  result(runId: number, options: CallOptions = {}): Observable<Uint8Array> {
    return getBytes(this.#transport, routes.textToSoundResult, 'text-to-sound', runId, options);
  }

  /**
   * The audio of one run (GET /text-to-sound-result/{run_id}) as chunks, as they arrive,
   * for a sink: nothing is held in memory, so the client's `maxResponseBytes` does not
   * apply. A failure before the first chunk is retried like any idempotent call; after
   * it the Observable errors (a sink such as `toFile` then removes its partial file).
   *
   * ## Example
   * ```ts
   * await lastValueFrom(client.sound.resultStream(runId).pipe(toFile('rain.wav', { join: false })));
   * ```
   * @param runId The run id of a finished task.
   * @param options `signal` aborts the download.
   * @returns An Observable of byte chunks that completes when the download ends.
   */
  resultStream(runId: number, options: CallOptions = {}): Observable<Uint8Array> {
    return getBytes(this.#transport, routes.textToSoundResult, 'text-to-sound', runId, options, true);
  }

  /**
   * Results of any number of runs, keyed by run id. Duplicates are removed; 1 id is
   * fetched by the single-result path (entry `{ audio }`); 2+ ids go to
   * POST /text-to-sound-results in concurrent batches of 2 to 5 (entries `{ output_url }`).
   * Runs this client's task Observables made of another kind are rejected locally.
   */
  results(runIds: readonly number[], options: CallOptions = {}): Observable<BulkResultMap> {
    return bulkResults(this.#transport, runIds, routes.textToSoundResults, this.family.name, (id, o) => this.result(id, o), options);
  }

  /** The whole task: create, poll, fetch the audio bytes. The last event is the result. */
  task(request: TextToSoundRequest, options: CallOptions = {}): Observable<TaskEvent<Uint8Array>> {
    // Seconds of audio asked for (music clips have a fixed length: no size).
    const size = request?.audio_type === 'music' ? undefined : typeof request?.duration === 'number' ? request.duration : 8;
    return runTask(this.#transport, this.family, this.create(request, options), options, size);
  }
}
