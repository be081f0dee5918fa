/**
 * `client.speak(options)`'s operators, shared between calls with equal options.
 *
 * A voice agent calls `client.speak({ voice_id, language })` once a call or a turn, with the
 * same few values each time. The operator a call returns holds the options resolved (the
 * `session.start` frame's fields, the session address, the client options): about 0.35 KB
 * while its session is open. An operator is a plain function of its source (each
 * subscription opens its own session, as with any RxJS operator), so calls with equal
 * options can return the same one, and a thousand open sessions hold one resolution.
 *
 * Equal means: the same own keys in the same order, each value the same primitive. An object
 * value (`stall`, `reconnect`, a `scheduler`, `metrics`) is read when the call is made and the
 * caller may change it afterwards, so options holding one are never shared. Options that do
 * not resolve throw at each call (nothing is kept for them).
 */
import type { OperatorFunction } from 'rxjs';
import type { LiveSpeechEvent } from '../live/events.js';
import type { SpeakOptions } from '../live/options.js';

/** The most operators kept (distinct option sets); past it the table starts again. */
const MAX_SHARED = 32;

/** A client's shared operators (one table a client: the session address and key are the client's). */
export class SpeakOperators {
  readonly #byOptions = new Map<string, OperatorFunction<string, LiveSpeechEvent>>();

  /** The operator made by `make()` for options equal to these, made now or by an earlier call. */
  get(options: SpeakOptions, make: () => OperatorFunction<string, LiveSpeechEvent>): OperatorFunction<string, LiveSpeechEvent> {
    const key = primitiveKey(options);
    if (key === undefined) return make();
    let operator = this.#byOptions.get(key);
    if (operator === undefined) {
      operator = make(); // throws for bad options: nothing kept
      if (this.#byOptions.size >= MAX_SHARED) this.#byOptions.clear();
      this.#byOptions.set(key, operator);
    }
    return operator;
  }
}

/**
 * A key of options whose every own value is a primitive (other than a symbol), exact about
 * types (`1` and `'1'`, `undefined` and `null`, `NaN` and `Infinity` differ); undefined
 * otherwise, or when the object is not a plain one (inherited options would be missed).
 */
function primitiveKey(options: SpeakOptions): string | undefined {
  const proto: unknown = Object.getPrototypeOf(options);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const parts: string[] = [];
  for (const [name, value] of Object.entries(options)) {
    const type = typeof value;
    if (value !== null && (type === 'object' || type === 'function' || type === 'symbol')) return undefined;
    parts.push(name, type, String(value));
  }
  return JSON.stringify(parts);
}
