/** Stories: POST /create-story (multipart `file`), status, run, translated results. */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  CreateStoryFieldsSchema,
  LanguageSchema,
  RunIdSchema,
  STORY_UPLOAD_EXTENSIONS,
  StoryRunSchema,
  TaskCreatedSchema,
  TranslatedStoryResultSchema,
  type CreateStoryFields,
  type Language,
  type StoryRun,
  type TaskCreated,
  type TaskStatus,
  type TranslatedStoryResult,
} from '../core/schemas.js';
import { getResult, getStatus, notAnObject, postMultipart } from './family.js';
import { lazily, warnNumericLanguage } from './shared.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';
import type { UploadInput } from './upload.js';

/** Fields of a story, and its text (.txt or .docx). */
export type CreateStoryRequest = CreateStoryFields & {
  /** A path, a Buffer / Uint8Array (give `filename`), a Blob / File, or a Readable. */
  file: UploadInput;
};

export interface TranslatedResultOptions extends CallOptions {
  /** Include the `transcript` (default false). */
  includeTranscript?: boolean;
}

/** Stories: create (multipart `file`), status, the story run, translated results, and the whole task. */
export class StoriesResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<StoryRun>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'story', statusPath: routes.storyStatus, result: (id, o) => this.run(id, o) };
  }

  /** Create a story task (POST /create-story). Emits `{ task_id }`. */
  create(request: CreateStoryRequest, options: CallOptions = {}): Observable<TaskCreated> {
    const invalid = notAnObject(request, routes.createStory);
    if (invalid) return invalid;
    const { file, ...fields } = request;
    return postMultipart(
      this.#transport,
      routes.createStory,
      CreateStoryFieldsSchema,
      fields,
      [{ field: 'file', input: file, extensions: STORY_UPLOAD_EXTENSIONS }],
      TaskCreatedSchema,
      'creation',
      options,
    );
  }

  /** Status (GET /story/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.storyStatus, 'story', taskId, options);
  }

  /** The story of a run (GET /story-run/{run_id}). */
  run(runId: number, options: CallOptions = {}): Observable<StoryRun> {
    return getResult(this.#transport, routes.storyRun, 'story', StoryRunSchema, runId, options);
  }

  /**
   * The story translated to `targetLanguage` (GET /translated-story-result/{run_id}/{target_language}).
   * `transcript` is present only with `includeTranscript: true`. Numeric language ids are deprecated.
   */
  translatedResult(runId: number, targetLanguage: Language, options: TranslatedResultOptions = {}): Observable<TranslatedStoryResult> {
    const endpoint = 'GET /translated-story-result';
    return lazily(() => {
      const id = this.#transport.validate(RunIdSchema, runId, endpoint, ['path', 'run_id']);
      const language = this.#transport.validate(LanguageSchema, targetLanguage, endpoint, ['path', 'target_language']);
      warnNumericLanguage(this.#transport, { target_language: language });
      return this.#transport.json(
        {
          method: 'GET',
          path: routes.translatedStoryResult(id, language),
          query: { include_transcript: options.includeTranscript ?? false },
          kind: 'idempotent',
          endpoint,
          signal: options.signal,
        },
        TranslatedStoryResultSchema,
      );
    });
  }

  /** The whole story task as events; the last is the result (the story run). */
  task(request: CreateStoryRequest, options: CallOptions = {}): Observable<TaskEvent<StoryRun>> {
    return runTask(this.#transport, this.family, this.create(request, options), options);
  }
}
