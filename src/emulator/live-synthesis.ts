/**
 * Synthesis of one segment of a live session (live.ts): the synthesizer's attempts, with
 * the key's faults (`synthesisLatencyMs`, `failSynthesis`, `failSynthesisMatching`) and
 * exponential backoff between attempts; after `SYNTHESIS_RETRIES` retries the segment is
 * skipped. Charging and the concurrency window stay in the session.
 */
import { encodeAudio } from '../audio/encode.js';
import type { SessionConfig, WordTimestamp } from '../live/protocol.js';
import type { Voice } from '../core/schemas.js';
import { injectFailure } from './live-faults.js';
import { drawLatencyMs, type Faults } from './options.js';
import type { Synthesizer } from './types.js';

/** Synthesis retries after the first attempt. */
export const SYNTHESIS_RETRIES = 3;

/** A segment of a live session, from its text to its audio (released once sent). */
export interface LiveSegment {
  id: number;
  text: string;
  state: 'waiting' | 'synthesizing' | 'ready' | 'skipped';
  audio?: Uint8Array;
  words?: WordTimestamp[];
}

/** What synthesis reads of its session. */
export interface SynthesisJob {
  synth: Synthesizer;
  voice: Voice;
  language: string;
  config: SessionConfig & { sample_rate: number };
  faults: Faults;
  /** First backoff between attempts (doubling). */
  retryBaseMs: number;
  /** False once the session is torn down: results are then dropped. */
  isLive(): boolean;
  /** The session's timer: never resolves once the session is torn down. */
  sleep(ms: number): Promise<void>;
  log(line: string): void;
}

/** Synthesize `segment` (state `ready` with its audio), or mark it `skipped` after the retries. */
export async function synthesizeSegment(segment: LiveSegment, job: SynthesisJob): Promise<void> {
  for (let attempt = 0; attempt <= SYNTHESIS_RETRIES; attempt++) {
    if (attempt > 0) await job.sleep(job.retryBaseMs * 2 ** (attempt - 1));
    if (!job.isLive()) return;
    try {
      const latency = drawLatencyMs(job.faults.synthesisLatencyMs);
      if (latency > 0) await job.sleep(latency);
      if (!job.isLive()) return;
      injectFailure(job.faults, segment, attempt);
      const result = await job.synth.synthesize({
        text: segment.text,
        language: job.language,
        voice: job.voice,
        sampleRate: job.config.sample_rate,
        speakingRate: job.config.speaking_rate,
        wordTimestamps: job.config.word_timestamps,
      });
      if (!job.isLive()) return;
      segment.audio = encodeAudio(result.pcm, result.sampleRate, job.config.output_format);
      segment.words = result.words;
      segment.state = 'ready';
      return;
    } catch (error) {
      job.log(`segment ${segment.id}: synthesis attempt ${attempt + 1} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  segment.state = 'skipped';
}
