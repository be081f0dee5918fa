/** Transcription: POST /transcription (multipart `language` and `media_file` or `media_url`), status, result. */
import type { Observable } from 'rxjs';
import { ValidationError } from '../core/errors.js';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  TaskCreatedSchema,
  TranscriptionFieldsSchema,
  TranscriptionResultSchema,
  type TaskCreated,
  type TaskStatus,
  type TranscriptionFields,
  type TranscriptionResult,
} from '../core/schemas.js';
import { getResult, getStatus, notAnObject, postMultipart } from './family.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';
import type { UploadInput } from './upload.js';

/** `language`, and exactly one of `media_file` (.aac, .flac, .mp3, .wav) or `media_url`. */
export type TranscriptionRequest = TranscriptionFields & {
  /** A path, a Buffer / Uint8Array (give `filename`), a Blob / File, or a Readable. */
  media_file?: UploadInput;
};

/** Exactly one media source: a file part or a `media_url`. */
export function checkOneMedia(endpoint: string) {
  return (fields: Record<string, unknown>, present: Record<string, boolean>): void => {
    const hasUrl = typeof fields['media_url'] === 'string';
    if (hasUrl === Boolean(present['media_file'])) {
      throw new ValidationError(
        [{ loc: ['body', 'media_file'], msg: hasUrl ? 'give media_file or media_url, not both' : 'needs media_file or media_url', type: hasUrl ? 'value_error' : 'missing' }],
        { source: 'local', endpoint },
      );
    }
  };
}

/** Transcription: create (multipart `media_file` or `media_url`), status, result, and the whole task. */
export class TranscriptionResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<TranscriptionResult>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'transcription', statusPath: routes.transcriptionStatus, result: (id, o) => this.result(id, o) };
  }

  /** Create a transcription task. Emits `{ task_id }`. */
  create(request: TranscriptionRequest, options: CallOptions = {}): Observable<TaskCreated> {
    const invalid = notAnObject(request, routes.transcription);
    if (invalid) return invalid;
    const { media_file, ...fields } = request;
    return postMultipart(
      this.#transport,
      routes.transcription,
      TranscriptionFieldsSchema,
      fields,
      [{ field: 'media_file', input: media_file, extensions: AUDIO_UPLOAD_EXTENSIONS, required: false }],
      TaskCreatedSchema,
      'creation',
      options,
      checkOneMedia(`POST ${routes.transcription}`),
    );
  }

  /** Status (GET /transcription/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.transcriptionStatus, 'transcription', taskId, options);
  }

  /** The transcript (GET /transcription-result/{run_id}). */
  result(runId: number, options: CallOptions = {}): Observable<TranscriptionResult> {
    return getResult(this.#transport, routes.transcriptionResult, 'transcription', TranscriptionResultSchema, runId, options);
  }

  /** The whole transcription task as events. */
  task(request: TranscriptionRequest, options: CallOptions = {}): Observable<TaskEvent<TranscriptionResult>> {
    return runTask(this.#transport, this.family, this.create(request, options), options);
  }
}
