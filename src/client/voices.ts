/** Voices: the listing (GET /list-voices) and custom voice creation (multipart). */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  AUDIO_UPLOAD_EXTENSIONS,
  CreateCustomVoiceFieldsSchema,
  CreateCustomVoiceResponseSchema,
  VoiceListSchema,
  type CreateCustomVoiceFields,
  type CreateCustomVoiceResponse,
  type Voice,
} from '../core/schemas.js';
import { notAnObject, postMultipart } from './family.js';
import type { UploadInput } from './upload.js';

/** Fields of a custom voice, and its reference audio (.aac, .flac, .mp3 or .wav). */
export type CreateCustomVoiceRequest = CreateCustomVoiceFields & {
  /** A path, a Buffer / Uint8Array (give `filename`), a Blob / File, or a Readable. */
  file: UploadInput;
};

/** The voice library (GET /list-voices) and custom voices (multipart POST /create-custom-voice). */
export class VoicesResource {
  readonly #transport: HttpTransport;
  constructor(transport: HttpTransport) {
    this.#transport = transport;
  }

  /** Every voice the key may use (GET /list-voices). */
  list(options: CallOptions = {}): Observable<Voice[]> {
    return this.#transport.json(
      { method: 'GET', path: routes.listVoices, kind: 'idempotent', endpoint: `GET ${routes.listVoices}`, signal: options.signal },
      VoiceListSchema,
    );
  }

  /**
   * Clone a voice from a reference sample (POST /create-custom-voice, multipart).
   * The file's extension is checked locally. Emits `{ voice_id }`.
   */
  create(request: CreateCustomVoiceRequest, options: CallOptions = {}): Observable<CreateCustomVoiceResponse> {
    const invalid = notAnObject(request, routes.createCustomVoice);
    if (invalid) return invalid;
    const { file, ...fields } = request;
    return postMultipart(
      this.#transport,
      routes.createCustomVoice,
      CreateCustomVoiceFieldsSchema,
      fields,
      [{ field: 'file', input: file, extensions: AUDIO_UPLOAD_EXTENSIONS }],
      CreateCustomVoiceResponseSchema,
      'creation',
      options,
    );
  }
}
