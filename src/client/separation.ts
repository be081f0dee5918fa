/** Audio separation: POST /audio-separation (multipart `media_file`), status, result. */
import { z } from 'zod';
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  AudioSeparationResultSchema,
  TaskCreatedSchema,
  type AudioSeparationResult,
  type TaskCreated,
  type TaskStatus,
} from '../core/schemas.js';
import { getResult, getStatus, postMultipart } from './family.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';
import type { UploadInput } from './upload.js';

/** The media to separate (.aac, .flac, .mp3 or .wav). */
export interface AudioSeparationRequest {
  /** A path, a Buffer / Uint8Array (give `filename`), a Blob / File, or a Readable. */
  media_file: UploadInput;
}

/** Audio separation: create (multipart `media_file`), status, result (foreground and background addresses), and the whole task. */
export class SeparationResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<AudioSeparationResult>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'audio-separation', statusPath: routes.audioSeparationStatus, result: (id, o) => this.result(id, o) };
  }

  /** Create a separation task. Emits `{ task_id }`. */
  create(request: AudioSeparationRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return postMultipart(
      this.#transport,
      routes.audioSeparation,
      z.object({}),
      {},
      [{ field: 'media_file', input: request?.media_file, extensions: AUDIO_UPLOAD_EXTENSIONS }],
      TaskCreatedSchema,
      'creation',
      options,
    );
  }

  /** Status (GET /audio-separation/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.audioSeparationStatus, 'audio-separation', taskId, options);
  }

  /** Result: `{ foreground_audio_url, background_audio_url }`. */
  result(runId: number, options: CallOptions = {}): Observable<AudioSeparationResult> {
    return getResult(this.#transport, routes.audioSeparationResult, 'audio-separation', AudioSeparationResultSchema, runId, options);
  }

  /** The whole task as events; the last is the result. */
  task(request: AudioSeparationRequest, options: CallOptions = {}): Observable<TaskEvent<AudioSeparationResult>> {
    return runTask(this.#transport, this.family, this.create(request, options), options);
  }
}
