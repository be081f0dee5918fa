/**
 * The output formats of the live speech session, apart from their zod schema
 * (`primitives.ts`) so that browser code can list them without loading a schema library.
 */

/** Output formats of the live speech session (`session.start` `output_format`). */
export const LIVE_OUTPUT_FORMATS = ['wav', 'mp3', 'flac', 'aac'] as const;
