/**
 * Speech to phone frames: the WAV audio of a live session (events of `speak()` or spoken
 * segments) decoded as it arrives, its channels mixed to one, resampled to 8 kHz when it is not, mu-law encoded and cut
 * in 20 ms frames of 160 bytes; a segment's last frame is padded with silence and followed by
 * a `mark` item, so the frames of a sentence end with it.
 */
import { createWavStreamDecoder, type WavStreamDecoder } from '../audio/wavStream.js';
import type { HeardInput } from '../live/heard.js';
import { encodeMulaw } from './g711.js';
import { resamplePcm } from './resample.js';
import { TelephonyError } from './errors.js';

/** The phone's rate, Hz. */
export const PHONE_RATE = 8000;
/** Bytes of a 20 ms mu-law frame at 8 kHz. */
export const FRAME_BYTES = 160;
/** mu-law silence. */
const MULAW_SILENCE = 0xff;

/** A frame of audio, or the end of a segment. */
export type PhoneItem = { kind: 'media'; bytes: Uint8Array; segment_id: number } | { kind: 'mark'; segment_id: number; frames: number };

interface Open {
  id: number;
  decoder: WavStreamDecoder;
  /** PCM waiting for the segment's end, when its rate is not 8 kHz. */
  held: Int16Array[];
  rate: number | undefined;
  /** mu-law bytes not yet a whole frame. */
  rest: Uint8Array;
  frames: number;
}

/** Turns speech into phone frames; `push` returns the items each value completes. */
export class PhoneFramer {
  private open: Open | undefined;

  push(input: HeardInput): PhoneItem[] {
    if (!('type' in input)) {
      const out = this.start(input.segment_id);
      return [...out, ...this.audio(input.audio), ...this.end()];
    }
    switch (input.type) {
      case 'ready': {
        const format = input.config['output_format'];
        if (format !== undefined && format !== 'wav') {
          throw new TelephonyError('unsupported_audio', `The session speaks ${String(format)}: ask it for output_format 'wav' (sample_rate 8000) to play it on a call.`);
        }
        return [];
      }
      case 'segmentStart':
        return this.start(input.segment_id);
      case 'audio':
        return this.open?.id === input.segment_id ? this.audio(input.bytes) : [];
      case 'segmentDone':
        return this.open?.id === input.segment_id ? this.end() : [];
      case 'reconnected':
        return this.end();
      default:
        return [];
    }
  }

  /**
   * The speech is over: a segment still open (its stream completed without its `segmentDone`,
   * e.g. cut by the caller) ends as a `segmentDone` would end it, so its audio already received
   * plays to the last sample (held audio resampled, the last frame padded, then its mark).
   */
  finish(): PhoneItem[] {
    return this.end();
  }

  private start(id: number): PhoneItem[] {
    const before = this.end();
    this.open = { id, decoder: createWavStreamDecoder(), held: [], rate: undefined, rest: new Uint8Array(0), frames: 0 };
    return before;
  }

  private audio(bytes: Uint8Array): PhoneItem[] {
    const open = this.open;
    if (open === undefined) return [];
    let decoded;
    try {
      decoded = open.decoder.feed(bytes);
    } catch (cause) {
      throw new TelephonyError('unsupported_audio', `Segment ${open.id}: ${(cause as Error).message} (a call plays WAV).`, { cause });
    }
    if (decoded === undefined) return [];
    open.rate = decoded.sampleRate;
    const pcm = toInt16(decoded.channels);
    if (open.rate !== PHONE_RATE) {
      open.held.push(pcm);
      return [];
    }
    return this.frames(open, encodeMulaw(pcm), false);
  }

  /** Ends the open segment: held audio resampled, the last frame padded, then its mark. */
  private end(): PhoneItem[] {
    const open = this.open;
    if (open === undefined) return [];
    this.open = undefined;
    const items: PhoneItem[] = [];
    if (open.held.length > 0 && open.rate !== undefined) {
      items.push(...this.frames(open, encodeMulaw(resamplePcm(concat(open.held), open.rate, PHONE_RATE)), false));
    }
    items.push(...this.frames(open, new Uint8Array(0), true));
    items.push({ kind: 'mark', segment_id: open.id, frames: open.frames });
    return items;
  }

  private frames(open: Open, mulaw: Uint8Array, last: boolean): PhoneItem[] {
    const bytes = joinBytes(open.rest, mulaw);
    const items: PhoneItem[] = [];
    let at = 0;
    for (; at + FRAME_BYTES <= bytes.length; at += FRAME_BYTES) items.push({ kind: 'media', bytes: bytes.slice(at, at + FRAME_BYTES), segment_id: open.id });
    open.rest = bytes.slice(at);
    if (last && open.rest.length > 0) {
      const frame = new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE);
      frame.set(open.rest);
      items.push({ kind: 'media', bytes: frame, segment_id: open.id });
      open.rest = new Uint8Array(0);
    }
    open.frames += items.length;
    return items;
  }
}

/** 16-bit mono samples: the channels' mean (a phone call has one channel). */
function toInt16(channels: readonly Float32Array[]): Int16Array {
  const length = channels[0]!.length;
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i]!;
    out[i] = Math.max(-32768, Math.min(32767, Math.round((sum / channels.length) * 32768)));
  }
  return out;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function joinBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
