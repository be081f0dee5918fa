/**
 * Wire primitives shared by the HTTP schemas (`schemas.ts`) and the live protocol
 * (`live/protocol.ts`): languages, voice ids, live output formats. Written with
 * `zod/mini`, like everything a browser loads, so that a page using `rxvoice/live` does
 * not carry the full `zod`; messages are given here, so they read the same in a page
 * and in Node. `zod` and `zod/mini` schemas compose: the HTTP schemas use these as they are.
 */
import * as z from 'zod/mini';
import { LIVE_OUTPUT_FORMATS } from './live-formats.js';

/** A locale tag: lower-case `<language>-<region>`, e.g. `en-us`, `pt-br`, `zh-cn`. */
export const LocaleTagSchema = z
  .string({ error: 'must be a string' })
  .check(z.regex(/^[a-z]{2,3}-[a-z0-9]{2,4}$/, { error: 'must be a lower-case locale tag like "en-us"' }));

/**
 * A numeric language id (integer or numeric string). Accepted by the service but deprecated.
 *
 * @deprecated Use a locale tag such as `"en-us"` ({@link LocaleTagSchema}); the client warns once when it sends one.
 */
export const NumericLanguageIdSchema = z.union([
  z.int({ error: 'must be an integer' }).check(z.positive({ error: 'must be a positive integer' })),
  z.string({ error: 'must be a string' }).check(z.regex(/^[0-9]+$/, { error: 'must be a numeric language id' })),
]);

/** Language parameter: a locale tag, or (deprecated: warns once) a numeric id. */
export const LanguageSchema = z.union([LocaleTagSchema, NumericLanguageIdSchema], {
  error: 'must be a lower-case locale tag like "en-us"',
});
/** A language parameter: a lower-case locale tag such as `en-us` (a numeric id is accepted but deprecated: the client warns once). */
export type Language = z.infer<typeof LanguageSchema>;

/** A voice id: a non-negative integer (see the voice lists). */
export const VoiceIdSchema = z
  .int({ error: 'must be an integer voice id' })
  .check(z.nonnegative({ error: 'must be a non-negative integer voice id' }));

export { LIVE_OUTPUT_FORMATS } from './live-formats.js';
/** The zod schema of {@link LiveOutputFormat}. */
export const LiveOutputFormatSchema = z.enum(LIVE_OUTPUT_FORMATS, { error: 'must be one of wav, mp3, flac, aac' });
/** One of {@link LIVE_OUTPUT_FORMATS}. */
export type LiveOutputFormat = z.infer<typeof LiveOutputFormatSchema>;
