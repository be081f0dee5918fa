/**
 * The speakable step: tokens in, the text to speak out, on the pure core of
 * `text/speakable.ts`. Used by the `speakableText()` operator, by `client.speak({ ...,
 * speakable })` (before the live session, so the session sends, and its reconnect ledger
 * records, the rewritten text), and by the LiveKit and AI SDK adapters, so all speak the same
 * way. Here, in the client, and not in `live/`: a page that imports only `speak` does not
 * download it.
 */
import { defer, map, Observable, type OperatorFunction } from 'rxjs';
import type { LiveSpeechEvent, SegmentWordTimestamp } from '../live/events.js';
import { CaptionMap } from '../text/speakable-captions.js';
import { ValidationError } from '../core/errors.js';
import { createSpeakableText, loadNumberWords, speakableTextOptions, type SpeakableTextCore, type SpeakableTextOptions } from '../text/speakable.js';
import type { CheckedSpeakableOptions } from '../text/speakable-pieces.js';

/**
 * The `speakable` option checked (a ValidationError at once, its issues under
 * `options.speakable`), with the session's language when it gives none; undefined when off.
 *
 * @internal
 */
export function resolveSpeakable(input: boolean | SpeakableTextOptions | undefined, language: unknown): SpeakableTextOptions | undefined {
  if (input === undefined || input === false) return undefined;
  if (input !== true && (input === null || typeof input !== 'object')) {
    throw new ValidationError([{ loc: ['options', 'speakable'], msg: 'must be a boolean or speakableText options', type: 'value_error' }], { source: 'local' });
  }
  const options: SpeakableTextOptions = input === true ? {} : { ...input };
  if (options.language === undefined && typeof language === 'string') options.language = language;
  try {
    speakableTextOptions(options);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(
      error.issues.map((issue) => ({ ...issue, loc: ['options', 'speakable', ...issue.loc.slice(1)] })),
      { source: 'local' },
    );
  }
  return options;
}

/**
 * Tokens to speakable text (see `speakableText()` in `rxvoice/operators` for the rules).
 * Options are checked at once (a ValidationError is thrown here, not in the stream). With
 * `spokenForm` and no `numberWords`, the number words load on subscription: tokens that come
 * meanwhile wait, in order, none is lost.
 *
 * @internal
 */
export function speakableStep(options: SpeakableTextOptions = {}, captions?: CaptionMap): OperatorFunction<string, string> {
  const checked = speakableTextOptions(options);
  const needsWords = checked.spokenForm && options.numberWords === undefined;
  return (source) =>
    new Observable<string>((subscriber) => {
      let core: SpeakableTextCore | undefined = needsWords ? undefined : createSpeakableText(options);
      /** Tokens (and the end) that came while the number words loaded. */
      const waiting: string[] = [];
      let ended: { error: unknown } | 'complete' | undefined;
      const emit = (pieces: ReadonlyArray<{ text: string; hidden?: string }>): void => {
        let text = '';
        for (const p of pieces) if (p.hidden === undefined) text += p.text;
        if (text.length > 0) subscriber.next(text);
      };
      const feed = (c: SpeakableTextCore, token: string): void => {
        const pieces = c.feed(token);
        captions?.add(token, pieces);
        emit(pieces);
      };
      const finish = (c: SpeakableTextCore, how: { error: unknown } | 'complete'): void => {
        const pieces = c.end();
        captions?.add('', pieces);
        emit(pieces);
        if (how === 'complete') subscriber.complete();
        else subscriber.error(how.error);
      };
      if (needsWords) {
        loadNumberWords(checked.language).then(
          (numberWords) => {
            if (subscriber.closed) return;
            const c = (core = createSpeakableText({ ...options, numberWords }));
            for (const token of waiting.splice(0)) feed(c, token);
            if (ended) finish(c, ended);
          },
          (err: unknown) => subscriber.error(err),
        );
      }
      return source.subscribe({
        next(token) {
          if (core) feed(core, token);
          else waiting.push(token);
        },
        error(err: unknown) {
          if (core) finish(core, { error: err });
          else ended = { error: err };
        },
        complete() {
          if (core) finish(core, 'complete');
          else ended = 'complete';
        },
      });
    });
}

/**
 * Prose that the speakable engine gives back unchanged: letters and combining marks of the
 * BMP that are not emoji nor their companions (variation selectors, keycap), spaces,
 * `, ; ? !`, quotes, a `.` or `:` before a space (or `.` at the end), a `-` before a letter,
 * a line break before a letter, and no space or line break first. No digit, markup,
 * address, emoji or control character can be in it, so nothing is there to rewrite.
 */
const PLAIN_PROSE = new RegExp(
  [
    String.raw`^(?![ \n])(?:`,
    String.raw`(?![\uFE0E\uFE0F\u20E3\p{Extended_Pictographic}])(?=[\0-\uFFFF])[\p{L}\p{M}]`, // a letter
    String.raw`|[ ,;?!'"\u2018\u2019\u201C\u201D]|\.(?=[ \n]|$)|:(?= )|-(?=\p{L})|\n(?=\p{L})`, // spacing and stops
    String.raw`)*$`,
  ].join(''),
  'u',
);

/**
 * True when `text` is its own speakable form under `options` (a fast path, about a
 * microsecond against tens for the engine): plain prose (see `PLAIN_PROSE`), with no lexicon,
 * no `spokenForm` and not starting inside a thought. `test/client/speakable-plain.test.ts`
 * checks it against the engine.
 *
 * @internal
 */
export function isPlainProse(text: string, options: CheckedSpeakableOptions): boolean {
  return !options.openThought && options.lexicon.length === 0 && !options.spokenForm && PLAIN_PROSE.test(text);
}

/**
 * A whole text as it should be spoken (for one-shot requests such as `/tts-stream`): the
 * same rules as {@link speakableStep}, number words loaded when `spokenForm` needs them.
 *
 * @internal
 */
export async function speakableString(text: string, options: SpeakableTextOptions = {}): Promise<string> {
  const checked = speakableTextOptions(options);
  if (isPlainProse(text, checked)) return text; // the engine would give it back as it is
  const numberWords = checked.spokenForm && options.numberWords === undefined ? await loadNumberWords(checked.language) : options.numberWords;
  const core = createSpeakableText({ ...options, ...(numberWords === undefined ? {} : { numberWords }) });
  let out = '';
  for (const p of [...core.feed(text), ...core.end()]) if (p.hidden === undefined) out += p.text;
  return out;
}

/**
 * `client.speak({ speakable })`: the speakable step before `session`, and each `segmentStart`
 * given the words as written: `sourceText`, and `source` on each word timestamp (see
 * `docs/speakable.md`, "Captions"). `text` and `word` stay what was spoken.
 *
 * @internal
 */
export function speakWithCaptions(options: SpeakableTextOptions, session: OperatorFunction<string, LiveSpeechEvent>): OperatorFunction<string, LiveSpeechEvent> {
  return (text$) =>
    defer(() => {
      const captions = new CaptionMap();
      const segments = new SegmentFinder(captions);
      return session(text$.pipe(speakableStep(options, captions))).pipe(map((event) => segments.annotate(event)));
    });
}

/** Finds each segment of the session in the spoken stream, in order, and maps it back. */
class SegmentFinder {
  /** The spoken stream after the last segment found, and where that segment began. */
  private cursor = 0;
  private lastStart = 0;

  constructor(private readonly captions: CaptionMap) {}

  annotate(event: LiveSpeechEvent): LiveSpeechEvent {
    if (event.type !== 'segmentStart' && event.type !== 'segmentSkipped') return event;
    // the next segment follows the last; a segment sent again (after a reconnect) repeats it
    const span = this.captions.locate(event.text, this.cursor) ?? this.captions.locate(event.text, this.lastStart);
    if (span === undefined) return event; // the service reworded it: left as it is
    [this.lastStart, this.cursor] = span;
    this.captions.forget(this.lastStart);
    if (event.type === 'segmentSkipped') return event;
    const sourceText = this.captions.sourceOf(span[0], span[1]);
    if (event.word_timestamps === undefined) return { ...event, sourceText };
    let at = span[0];
    const words = event.word_timestamps.map((w): SegmentWordTimestamp => {
      const found = this.captions.locate(w.word, at, span[1]);
      if (found === undefined) return w;
      at = found[1];
      const source = this.captions.sourceOf(found[0], found[1]);
      return source === '' ? w : { ...w, source };
    });
    return { ...event, sourceText, word_timestamps: words };
  }
}
