/**
 * The parts of the Web Audio API the player uses, as small interfaces: a browser's
 * `AudioContext` fits them, and so does a fake one driven by a virtual clock in tests.
 */

/** An audio node: connectable and disconnectable. */
export interface AudioNodeLike {
  connect(destination: AudioNodeLike): unknown;
  disconnect(): void;
}

/** Decoded audio (`AudioBuffer`). */
export interface AudioBufferLike {
  /** Seconds. */
  readonly duration: number;
  copyToChannel(source: Float32Array<ArrayBuffer>, channelNumber: number): void;
}

/** One buffer played once (`AudioBufferSourceNode`). */
export interface AudioBufferSourceNodeLike extends AudioNodeLike {
  buffer: AudioBufferLike | null;
  onended: ((event: Event) => void) | null;
  start(when?: number): void;
  stop(when?: number): void;
}

/** A volume node (`GainNode`). */
export interface GainNodeLike extends AudioNodeLike {
  readonly gain: { value: number };
}

/** The audio clock and node factory (`AudioContext`). */
export interface AudioContextLike {
  /** The audio clock, seconds: the time of the sample being rendered. */
  readonly currentTime: number;
  /** `'running'`, `'suspended'` (autoplay policy, no user gesture yet) or `'closed'`. */
  readonly state: string;
  readonly destination: AudioNodeLike;
  resume(): Promise<void>;
  close(): Promise<void>;
  createBuffer(numberOfChannels: number, length: number, sampleRate: number): AudioBufferLike;
  createBufferSource(): AudioBufferSourceNodeLike;
  createGain(): GainNodeLike;
  decodeAudioData(data: ArrayBuffer): Promise<AudioBufferLike>;
}

/** The browser's `AudioContext` constructor, when the page has Web Audio. */
export function defaultAudioContext(): (new () => AudioContextLike) | undefined {
  const scope = globalThis as { AudioContext?: new () => AudioContextLike; webkitAudioContext?: new () => AudioContextLike };
  return scope.AudioContext ?? scope.webkitAudioContext;
}
