/** Dubbing: end-to-end dubbing (POST /end-to-end-dubbing) and project setup (POST /project-setup). */
import type { Observable } from 'rxjs';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import {
  DubbedRunInfoSchema,
  EndToEndDubbingRequestSchema,
  ProjectSetupRequestSchema,
  ProjectSetupResultSchema,
  type DubbedRunInfo,
  type EndToEndDubbingRequest,
  type ProjectSetupRequest,
  type ProjectSetupResult,
  type TaskCreated,
  type TaskStatus,
} from '../core/schemas.js';
import { createJson, getResult, getStatus } from './family.js';
import { runTask, type TaskEvent, type TaskFamilyDefinition } from './tasks.js';

/** End-to-end dubbing (POST /end-to-end-dubbing) and dubbing project setup (POST /project-setup). */
export class DubbingResource {
  readonly #transport: HttpTransport;
  /** @internal */
  readonly family: TaskFamilyDefinition<DubbedRunInfo>;
  /** @internal */
  readonly projectSetupFamily: TaskFamilyDefinition<ProjectSetupResult>;

  constructor(transport: HttpTransport) {
    this.#transport = transport;
    this.family = { name: 'end-to-end-dubbing', statusPath: routes.endToEndDubbingStatus, result: (id, o) => this.result(id, o) };
    this.projectSetupFamily = {
      name: 'project-setup',
      statusPath: routes.projectSetupStatus,
      result: (id, o) => this.projectSetupResult(id, o),
    };
  }

  /** Create an end-to-end dubbing task. Emits `{ task_id }`. */
  create(request: EndToEndDubbingRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return createJson(this.#transport, routes.endToEndDubbing, EndToEndDubbingRequestSchema, request, options);
  }

  /** Status (GET /end-to-end-dubbing/{task_id}). */
  status(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.endToEndDubbingStatus, 'end-to-end-dubbing', taskId, options);
  }

  /** The dubbed run (GET /dubbed-run-info/{run_id}). */
  result(runId: number, options: CallOptions = {}): Observable<DubbedRunInfo> {
    return getResult(this.#transport, routes.dubbedRunInfo, 'dubbed-run-info', DubbedRunInfoSchema, runId, options);
  }

  /** The whole end-to-end dubbing task as events. */
  task(request: EndToEndDubbingRequest, options: CallOptions = {}): Observable<TaskEvent<DubbedRunInfo>> {
    return runTask(this.#transport, this.family, this.create(request, options), options);
  }

  /** Create a dubbing project setup task (POST /project-setup). Emits `{ task_id }`. */
  projectSetup(request: ProjectSetupRequest, options: CallOptions = {}): Observable<TaskCreated> {
    return createJson(this.#transport, routes.projectSetup, ProjectSetupRequestSchema, request, options);
  }

  /** Status (GET /project-setup/{task_id}). */
  projectSetupStatus(taskId: string, options: CallOptions = {}): Observable<TaskStatus> {
    return getStatus(this.#transport, routes.projectSetupStatus, 'project-setup', taskId, options);
  }

  /** The project (GET /project-setup-result/{run_id}). */
  projectSetupResult(runId: number, options: CallOptions = {}): Observable<ProjectSetupResult> {
    return getResult(this.#transport, routes.projectSetupResult, 'project-setup', ProjectSetupResultSchema, runId, options);
  }

  /** The whole project setup task as events. */
  projectSetupTask(request: ProjectSetupRequest, options: CallOptions = {}): Observable<TaskEvent<ProjectSetupResult>> {
    return runTask(this.#transport, this.projectSetupFamily, this.projectSetup(request, options), options);
  }
}
