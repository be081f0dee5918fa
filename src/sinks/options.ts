/**
 * Option schemas of the sinks, checked with `checkOptions` when a sink is created (bad
 * options throw a `ValidationError` at once, nothing is opened or written).
 */
import type { Writable } from 'node:stream';
import * as z from 'zod/mini';
import { flag, func, integerAtLeast, milliseconds, scheduler } from '../core/options.js';

/** A path to write: a non-empty string. */
const path = () => z.string({ error: 'must be a path' }).check(z.minLength(1, { error: 'must not be empty' }));

/** A file mode (permission bits, 0 to 0o7777). */
const mode = () => integerAtLeast(0).check(z.maximum(0o7777, { error: 'must be a file mode (0 to 0o7777)' }));

export const FileOptionsSchema = z.object({
  path: path(),
  fsync: z.optional(flag()),
  mode: z.optional(mode()),
  join: z.optional(flag()),
});

export const PcmFormatSchema = z.object({
  sampleRate: integerAtLeast(1),
  channels: integerAtLeast(1),
  bitsPerSample: z.union([z.literal(16), z.literal(24), z.literal(32)], { error: 'must be 16, 24 or 32' }),
  audioFormat: z.union([z.literal(1), z.literal(3)], { error: 'must be 1 (integer PCM) or 3 (float)' }),
});

export const WavFileOptionsSchema = z.object({
  path: path(),
  format: z.optional(PcmFormatSchema),
  fsync: z.optional(flag()),
  mode: z.optional(mode()),
});

export const WritableOptionsSchema = z.object({
  stream: z.custom<Writable>(
    (value) => value !== null && typeof value === 'object' && typeof (value as Writable).write === 'function' && typeof (value as Writable).on === 'function',
    { error: 'must be a Node Writable' },
  ),
  unwrapWav: z.optional(flag()),
  end: z.optional(flag()),
  destroyOnUnsubscribe: z.optional(flag()),
});

export const AudioDeviceOptionsSchema = z.object({
  player: z.optional(
    z.object({
      command: z.string({ error: 'must be a command' }).check(z.minLength(1, { error: 'must not be empty' })),
      args: z.optional(z.array(z.string())),
      file: z.optional(flag()),
    }),
  ),
  players: z.optional(z.array(z.object({ name: z.string(), args: func(), file: z.optional(flag()) }))),
  env: z.optional(z.record(z.string(), z.optional(z.string()))),
  spawn: z.optional(func()),
  killGraceMs: z.optional(milliseconds()),
  scheduler: z.optional(scheduler()),
  onHeard: z.optional(func()),
});
