/**
 * The zod schema of the client options of `speak` (`SpeakOptions` minus the
 * `session.start` configuration, `scheduler` and `metrics`): the reference that the plain
 * checks of `checks.ts` (what `speak` runs, so a page loads no schema library) are proven
 * to agree with in `test/live/checks.test.ts`.
 *
 * @internal
 */
import * as z from 'zod/mini';
import { flag, func, integerAtLeast, milliseconds, positiveMilliseconds } from '../core/options.js';
import type { FallbackSpeech } from './stall-fallback.js';
import { DEFAULT_CLOSE_GRACE_MS, DEFAULT_LIVE_MAX_PAYLOAD, DEFAULT_RESPONSE_TIMEOUT_MS } from './options.js';

/** The client options of {@link SpeakOptions} (everything but the `session.start` configuration and `scheduler`). */
export const ClientOptionsSchema = z.object({
  reconnect: z.optional(
    z.object({
      maxAttempts: integerAtLeast(0).check(z.maximum(1000, { error: 'must be at most 1000' })),
      baseDelayMs: z._default(milliseconds(), 250),
      maxDelayMs: z._default(milliseconds(), 5000),
      random: z._default(func<() => number>(), () => Math.random),
    }),
  ),
  readyTimeoutMs: z._default(positiveMilliseconds(), 10_000),
  maxPayload: z._default(integerAtLeast(1), DEFAULT_LIVE_MAX_PAYLOAD),
  clientBoundaries: z._default(flag(), true),
  boundaryHoldMs: z._default(milliseconds().check(z.maximum(60_000, { error: 'must be at most 60000 ms' })), 250),
  responseTimeoutMs: z._default(positiveMilliseconds(), DEFAULT_RESPONSE_TIMEOUT_MS),
  closeGraceMs: z._default(milliseconds(), DEFAULT_CLOSE_GRACE_MS),
  stall: z.optional(
    z.object({
      afterMs: positiveMilliseconds(),
      fallback: z.enum(['tts-stream', 'error'], { error: "must be 'tts-stream' or 'error'" }),
    }),
  ),
  fallbackSpeech: z.optional(func<FallbackSpeech>()),
});

