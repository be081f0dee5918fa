/**
 * `rxvoice/otel`: OpenTelemetry spans for live speech sessions (`traceSpeech`) and for the
 * client's HTTP requests (`tracedFetch`). `@opentelemetry/api` is an optional peer
 * dependency, loaded on first use; without it both pass everything through.
 *
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { traceSpeech, tracedFetch } from 'rxvoice/otel';
 *
 * const client = createClient({ fetch: tracedFetch() });
 * const speech$ = text$.pipe(client.speak({ voice_id: 1 }), traceSpeech({ serverAddress: client.baseUrl }));
 * ```
 */
export { traceSpeech, type TraceSpeechOptions } from './traceSpeech.js';
export { tracedFetch, type TracedFetchOptions } from './tracedFetch.js';
export type { OtelAttributes, OtelAttributeValue, TracerProviderLike } from './types.js';
