/**
 * What the speech and transcription models share: the lazily made client, the AI SDK's
 * languages mapped to the service's locale tags, provider options checked with a schema,
 * and the call headers the client cannot send.
 *
 * @internal
 */
import type { z } from 'zod';
import type { RxVoiceClient } from '../client/client.js';
import { toValidationIssues } from '../core/validation.js';
import type { AiSdkProvider } from './errors.js';
import type { CambWarning, JsonObject } from './types.js';

/** What a model needs of its provider. */
export interface ProviderContext {
  /** The client: made on first use (LoadAPIKeyError / LoadSettingError without key or address). */
  client(sdk: AiSdkProvider): RxVoiceClient;
  /** Default voice id of speech, when the call names none. */
  voice: number | undefined;
  /** Default locale tag (speech without `language`, or `auto`; the media of a transcription). */
  language: string;
}

/**
 * Locale tags for the ISO 639-1 codes the AI SDK passes as `language`, where the
 * service wants a locale tag (`en-us`): the most spoken region of each language. A
 * locale tag is used as it is; another code is an `InvalidArgumentError`.
 */
const LOCALE_BY_LANGUAGE: Readonly<Record<string, string>> = {
  ar: 'ar-sa', de: 'de-de', en: 'en-us', es: 'es-es', fr: 'fr-fr', hi: 'hi-in', it: 'it-it', ja: 'ja-jp',
  ko: 'ko-kr', nl: 'nl-nl', pl: 'pl-pl', pt: 'pt-br', ru: 'ru-ru', sv: 'sv-se', tr: 'tr-tr', zh: 'zh-cn',
};

/**
 * The locale tag for the AI SDK's `language` (`en`, `en-US`, `auto` or absent); pushes a
 * warning when the value was changed on the way.
 */
export function localeOf(sdk: AiSdkProvider, language: string | undefined, fallback: string, warnings: CambWarning[]): string {
  if (language === undefined) return fallback;
  const given = language.trim().toLowerCase().replace('_', '-');
  if (given === 'auto') {
    warnings.push({ type: 'unsupported', feature: 'language', details: `automatic language detection is not supported: sent ${fallback}` });
    return fallback;
  }
  if (/^[a-z]{2,3}-[a-z0-9]{2,4}$/.test(given)) return given;
  const locale = LOCALE_BY_LANGUAGE[given];
  if (locale === undefined) {
    const known = Object.keys(LOCALE_BY_LANGUAGE).join(', ');
    throw new sdk.InvalidArgumentError({ argument: 'language', message: `language "${language}": give a locale tag such as "en-us", or one of ${known}` });
  }
  warnings.push({ type: 'compatibility', feature: 'language', details: `"${language}" sent as the locale tag ${locale}` });
  return locale;
}

/** `providerOptions.camb`, checked with `schema`: an `InvalidArgumentError` naming the field when it does not fit. */
export function cambOptions<T>(sdk: AiSdkProvider, schema: z.ZodType<T>, providerOptions: Record<string, JsonObject> | undefined): T {
  const given = providerOptions?.['camb'] ?? {};
  const parsed = schema.safeParse(given);
  if (parsed.success) return parsed.data;
  const issues = toValidationIssues(parsed.error, given, ['providerOptions', 'camb']);
  const summary = issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
  throw new sdk.InvalidArgumentError({ argument: issues[0]?.loc.join('.') ?? 'providerOptions.camb', message: `Invalid providerOptions.camb: ${summary}` });
}

/** Warns about call headers: the client sends its own (and the key); the AI SDK's user agent is dropped quietly. */
export function headerWarnings(headers: Record<string, string | undefined> | undefined, warnings: CambWarning[]): void {
  const names = Object.keys(headers ?? {}).filter((name) => name.toLowerCase() !== 'user-agent' && headers?.[name] !== undefined);
  if (names.length > 0) warnings.push({ type: 'unsupported', feature: 'headers', details: `not sent: ${names.join(', ')}` });
}
