/**
 * From rxvoice's spoken segments to LiveKit's audio: the PCM of a segment's WAV cut into
 * `AudioFrame`s of a fixed duration, and its word timestamps as LiveKit `TimedString`s on
 * the timeline of the whole stream.
 */
import { createTimedString } from '@livekit/agents';
import { AudioFrame as RtcAudioFrame } from '@livekit/rtc-node';
import { resample, unwrapWav } from '../audio/pcm.js';
import type { SpokenSegment } from '../live/events.js';
import type { AudioFrame, TimedString } from './peer.js';

/** A segment's audio as frames, its words on the stream's timeline, and its duration. */
export interface SegmentAudio {
  frames: AudioFrame[];
  words: TimedString[];
  seconds: number;
}

/** Mono 16-bit samples of a segment's WAV at `sampleRate` (resampled if the service sent another rate). */
function samplesOf(segment: SpokenSegment, sampleRate: number): Int16Array {
  const wav = unwrapWav(segment.audio);
  if (segment.audio.byteLength === 0) return new Int16Array(0);
  if (!wav || wav.format.audioFormat !== 1 || wav.format.bitsPerSample !== 16 || wav.format.channels !== 1) {
    throw new Error(`segment ${segment.segment_id}: expected 16-bit mono PCM WAV from the live session`);
  }
  // a copy: aligned for Int16Array, and no view into the session's buffers
  const samples = new Int16Array(wav.pcm.slice().buffer, 0, wav.pcm.byteLength >> 1);
  return resample(samples, wav.format.sampleRate, sampleRate);
}

/**
 * The words of a segment as `TimedString`s whose texts, joined, are the segment's text
 * (each word carries the spaces and punctuation up to the next), times shifted by `offset`
 * seconds. Words that cannot be found in the text in order give one `TimedString` for the
 * whole segment, spanning its audio.
 */
export function timedWords(segment: SpokenSegment, offset: number, seconds: number, separator: string): TimedString[] {
  const text = separator + segment.text;
  const positions: number[] = [];
  let cursor = separator.length;
  for (const { word } of segment.word_timestamps) {
    const at = text.indexOf(word, cursor);
    if (at < 0 || word === '') break;
    positions.push(at);
    cursor = at + word.length;
  }
  const words = segment.word_timestamps;
  if (words.length === 0 || positions.length !== words.length) {
    return [createTimedString({ text, startTime: offset, endTime: offset + seconds })];
  }
  return words.map((word, i) =>
    createTimedString({
      text: text.slice(i === 0 ? 0 : positions[i], positions[i + 1] ?? text.length),
      startTime: offset + word.start,
      endTime: offset + word.end,
    }),
  );
}

/**
 * Cuts a spoken segment into frames of `frameSamples` samples (the last one shorter) at
 * `sampleRate`, with its words placed `offset` seconds into the stream. `separator` goes
 * before the segment's first word (a space between sentences the service trimmed).
 */
export function segmentAudio(segment: SpokenSegment, sampleRate: number, frameSamples: number, offset: number, separator: string): SegmentAudio {
  const samples = samplesOf(segment, sampleRate);
  const frames: AudioFrame[] = [];
  for (let start = 0; start < samples.length; start += frameSamples) {
    const data = samples.slice(start, start + frameSamples);
    frames.push(new RtcAudioFrame(data, sampleRate, 1, data.length));
  }
  const seconds = samples.length / sampleRate;
  return { frames, words: timedWords(segment, offset, seconds, separator), seconds };
}
