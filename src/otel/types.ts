/**
 * The OpenTelemetry shapes `rxvoice/otel`'s options name, declared here structurally so
 * that its types compile where `@opentelemetry/api` (an optional peer) is not installed.
 * The API's own `TracerProvider` and `Attributes` fit them.
 */

/** A span attribute value, as OpenTelemetry defines it. */
export type OtelAttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;

/** Span attributes (OpenTelemetry's `Attributes`). */
export interface OtelAttributes {
  [key: string]: OtelAttributeValue | undefined;
}

/** What `rxvoice/otel` needs of a tracer provider: OpenTelemetry's `TracerProvider` (an SDK's `BasicTracerProvider`, `NodeTracerProvider`, ...). */
export interface TracerProviderLike {
  /** The tracer of an instrumentation scope (`name`, `version`), as `TracerProvider.getTracer`. */
  getTracer(name: string, version?: string): unknown;
}
