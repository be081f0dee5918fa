/**
 * The plain checks of the browser path (`src/live/checks.ts`) decide exactly as the zod
 * schemas they stand in for: the same frames and options accepted (with the same output,
 * key order included), the same rejected, with the same `{ loc, msg, type }` issues.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ValidationIssue } from '../../src/core/schemas.js';
import { toValidationIssues } from '../../src/core/validation.js';
import { checkClientOptions, checkServerFrame, checkSessionConfig } from '../../src/live/checks.js';
import { ClientOptionsSchema } from '../../src/live/option-schemas.js';
import { ServerFrameSchema, SessionConfigSchema } from '../../src/live/protocol.js';

const RUNS = 3000;

/** Values near every edge the schemas draw, and junk. */
const anyValue = fc.oneof(
  fc.constantFrom(undefined, null, true, false, 0, -0, 1, -1, 0.25, 0.2, 4, 4.5, 7999, 8000, 48000, 48001, 60, 60.5, 1000, 1001, 60000, 60001, 1.5, NaN, Infinity, -Infinity, 1e20, -1e20, 2 ** 53, 'en-us', 'EN-US', 'pt-br', 'zh-cn', '12', '0', '', 'x', 'wav', 'mp3', 'flac', 'aac', 'ogg', [], {}, () => 0, Math.random),
  fc.integer({ min: -10, max: 70000 }),
  fc.double(),
  fc.string({ maxLength: 8 }),
);

/** An object with some of `keys`, each any value, plus maybe an unknown key. */
const objectOf = (keys: readonly string[], value: fc.Arbitrary<unknown> = anyValue) =>
  fc.tuple(fc.subarray([...keys]), fc.array(value, { minLength: keys.length, maxLength: keys.length }), fc.boolean()).map(([present, values, extra]) => {
    const o: Record<string, unknown> = {};
    present.forEach((k, i) => (o[k] = values[i]));
    if (extra) o['unknown_key'] = 1;
    return o;
  });

/** Either the schema's result or the check's, in one shape. */
function viaZod(schema: { safeParse(v: unknown): { success: boolean; data?: unknown; error?: unknown } }, input: Record<string, unknown>, prefix: string[]) {
  const r = schema.safeParse(input);
  return r.success
    ? { data: r.data, issues: [] as ValidationIssue[] }
    : { data: undefined, issues: toValidationIssues(r.error as Parameters<typeof toValidationIssues>[0], input, prefix) };
}

describe('checks.ts against the zod schemas', () => {
  it('server frames: the same accepted (same output) and rejected', () => {
    const frame = fc.oneof(
      objectOf(['type', 'session_id', 'run_id', 'config'], fc.oneof(anyValue, fc.constantFrom('session.ready', 's1', { a: 1 }))).map((o) => ({ type: 'session.ready', ...o })),
      objectOf(['segment_id', 'text', 'word_timestamps'], fc.oneof(anyValue, fc.array(objectOf(['word', 'start', 'end']), { maxLength: 3 }))).map((o) => ({ type: 'segment.start', ...o })),
      objectOf(['segment_id', 'text']).map((o) => ({ type: 'segment.skipped', ...o })),
      objectOf(['segment_id']).map((o) => ({ type: 'segment.done', ...o })),
      objectOf(['error']).map((o) => ({ type: 'session.error', ...o })),
      objectOf(['type']).map((o) => ({ ...o, type: 'session.done' })),
      objectOf(['type', 'segment_id', 'text']),
      anyValue,
      fc.json().map((j) => JSON.parse(j) as unknown),
    );
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(frame, (json) => {
        const zod = ServerFrameSchema.safeParse(json);
        const ours = checkServerFrame(json);
        expect(ours !== undefined).toBe(zod.success);
        if (zod.success) expect(ours).toStrictEqual(zod.data);
        if (zod.success) accepted++;
        else rejected++;
      }),
      { numRuns: RUNS },
    );
    // both outcomes were exercised (the property compared something either way)
    expect(accepted).toBeGreaterThan(RUNS / 20);
    expect(rejected).toBeGreaterThan(RUNS / 20);
  });

  it('session.start configuration: the same output, or the same issues', () => {
    const keys = ['voice_id', 'language', 'output_format', 'sample_rate', 'word_timestamps', 'idle_timeout', 'enhance_named_entities_pronunciation', 'enhance_reference_audio_quality', 'maintain_source_accent', 'apply_enhancement', 'speaking_rate'];
    let accepted = 0;
    fc.assert(
      fc.property(objectOf(keys), (input) => {
        const zod = viaZod(SessionConfigSchema, input, ['session.start']);
        const issues: ValidationIssue[] = [];
        const ours = checkSessionConfig(input, issues, ['session.start']);
        expect(issues).toStrictEqual(zod.issues);
        expect(ours).toStrictEqual(zod.data);
        expect(JSON.stringify(ours)).toBe(JSON.stringify(zod.data)); // the session.start frame, byte for byte
        if (ours) accepted++;
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('client options: the same output, or the same issues', () => {
    const keys = ['reconnect', 'readyTimeoutMs', 'maxPayload', 'clientBoundaries', 'boundaryHoldMs', 'responseTimeoutMs', 'closeGraceMs', 'stall', 'fallbackSpeech'];
    const reconnect = fc.oneof(objectOf(['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'random']), objectOf(['afterMs', 'fallback'], fc.oneof(anyValue, fc.constantFrom('tts-stream', 'error'))));
    // mostly valid values, so that one bad one at a time is seen too
    const value = fc.oneof({ arbitrary: fc.constantFrom(undefined, 1, 250, 5000, true), weight: 3 }, { arbitrary: anyValue, weight: 1 }, { arbitrary: reconnect, weight: 1 });
    let accepted = 0;
    fc.assert(
      fc.property(objectOf(keys, value), (input) => {
        const zod = viaZod(ClientOptionsSchema, input, ['options']);
        const issues: ValidationIssue[] = [];
        const ours = checkClientOptions(input, issues, ['options']);
        // zod's message for "not an object" is its locale's (or "Invalid input" in zod/mini alone); ours is fixed
        const norm = (list: ValidationIssue[]) => list.map((i) => (i.type === 'object_type' ? { ...i, msg: '' } : i));
        expect(norm(issues)).toStrictEqual(norm(zod.issues));
        expect(ours).toStrictEqual(zod.data);
        if (ours) accepted++;
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('client options, the nested objects (reconnect, stall) with mostly valid fields: the same output, or the same issues', () => {
    // each field valid three times in four (undefined included), else any value; keys maybe absent
    const mostly = (...valid: unknown[]) => fc.oneof({ arbitrary: fc.constantFrom(...valid), weight: 3 }, { arbitrary: anyValue, weight: 1 });
    const reconnect = fc.record(
      { maxAttempts: mostly(0, 3, 1000), baseDelayMs: mostly(undefined, 0, 100), maxDelayMs: mostly(undefined, 5, 9000), random: mostly(undefined, () => 0.5) },
      { requiredKeys: [] },
    );
    const stall = fc.record({ afterMs: mostly(1, 0.5, 300), fallback: mostly('tts-stream', 'error') }, { requiredKeys: [] });
    const options = fc.oneof(reconnect.map((r) => ({ reconnect: r })), stall.map((s) => ({ stall: s })));
    const accepted = { reconnect: 0, stall: 0 };
    fc.assert(
      fc.property(options, (input) => {
        const zod = viaZod(ClientOptionsSchema, input, ['options']);
        const issues: ValidationIssue[] = [];
        const ours = checkClientOptions(input, issues, ['options']);
        expect(issues).toStrictEqual(zod.issues);
        expect(ours).toStrictEqual(zod.data);
        if (ours) accepted['reconnect' in input ? 'reconnect' : 'stall']++;
      }),
      { numRuns: RUNS },
    );
    // defaults filled in and fields kept were compared, not only rejections
    expect(accepted.reconnect).toBeGreaterThan(RUNS / 20);
    expect(accepted.stall).toBeGreaterThan(RUNS / 20);
  });
});
