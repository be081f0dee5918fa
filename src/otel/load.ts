/**
 * `@opentelemetry/api`, an optional peer dependency, loaded on first use only: importing
 * `rxvoice/otel` loads nothing of OpenTelemetry, and where the package is not installed
 * every tracing helper passes its stream (or request) through untouched. Loaded once per
 * process; after that the module is at hand synchronously.
 */
import type * as OtelApi from '@opentelemetry/api';

/** The OpenTelemetry API module, as `rxvoice/otel` uses it. */
export type OpenTelemetryApi = typeof OtelApi;

let loaded: OpenTelemetryApi | null | undefined;
let loading: Promise<OpenTelemetryApi | null> | undefined;

/** The module if it was loaded already (null: it cannot be loaded; undefined: not tried yet). */
export function loadedApi(): OpenTelemetryApi | null | undefined {
  return loaded;
}

/** Loads the module once; resolves null when it cannot be resolved (not installed). */
export function loadApi(): Promise<OpenTelemetryApi | null> {
  loading ??= (async () => {
    const specifier = '@opentelemetry/api';
    try {
      const module = (await import(specifier)) as OpenTelemetryApi & { default?: OpenTelemetryApi };
      loaded = typeof module.trace?.getTracerProvider === 'function' ? module : (module.default ?? null);
    } catch {
      loaded = null;
    }
    return loaded;
  })();
  return loading;
}

/** Name and version of the tracer rxvoice's spans come from. */
export const TRACER_NAME = 'rxvoice';
export const TRACER_VERSION = '0.1.0';
