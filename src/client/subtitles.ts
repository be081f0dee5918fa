/** Subtitles: POST /sub (shape of the transcription sibling), status, result. */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  SubtitlesFieldsSchema,
  SubtitlesResultSchema,
  TaskCreatedSchema,
  type SubtitlesFields,
  type SubtitlesResult,
  type TaskCreated,
  type TaskStatus,
} from '../core/schemas.js';
import { getResult, getStatus, notAnObject, postMultipart } from './family.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';
import { checkOneMedia } from './transcription.js';
import type { UploadInput } from './upload.js';

/** Fields of POST /sub, and exactly one of `media_file` (.aac, .flac, .mp3, .wav) or `media_url`. */
export type SubtitlesRequest = SubtitlesFields & {
  /** A path, a Buffer / Uint8Array (give `filename`), a Blob / File, or a Readable. */
  media_file?: UploadInput;
};

/** Subtitles (POST /sub): create, status, result, and the whole task. */
export class SubtitlesResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<SubtitlesResult>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'sub', statusPath: routes.subStatus, result: (id, o) => this.result(id, o) };
  }

  /** Create a subtitles task (POST /sub). Emits `{ task_id }`. */
  create(request: SubtitlesRequest, options: CallOptions = {}): Observable<TaskCreated> {
    const invalid = notAnObject(request, routes.sub);
    if (invalid) return invalid;
    const { media_file, ...fields } = request;
    return postMultipart(
      this.#transport,
      routes.sub,
      SubtitlesFieldsSchema,
      fields,
      [{ field: 'media_file', input: media_file, extensions: AUDIO_UPLOAD_EXTENSIONS, required: false }],
      TaskCreatedSchema,
      'creation',
      options,
      checkOneMedia(`POST ${routes.sub}`),
    );
  }

  /** Status (GET /sub/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.subStatus, 'sub', taskId, options);
  }

  /** The subtitles (GET /sub-result/{run_id}). */
  result(runId: number, options: CallOptions = {}): Observable<SubtitlesResult> {
    return getResult(this.#transport, routes.subResult, 'sub', SubtitlesResultSchema, runId, options);
  }

  /** The whole subtitles task as events. */
  task(request: SubtitlesRequest, options: CallOptions = {}): Observable<TaskEvent<SubtitlesResult>> {
    return runTask(this.#transport, this.family, this.create(request, options), options);
  }
}
