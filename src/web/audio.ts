/**
 * The parts of the Web Audio API the player uses, as small interfaces: a browser's
 * `AudioContext` fits them, and so does a fake one driven by a virtual clock in tests.
 */

/** An audio node: connectable and disconnectable. */
export interface AudioNodeLike {
  /** Sends this node's output into `destination`. */
  connect(destination: AudioNodeLike): unknown;
  /** Disconnects every output. */
  disconnect(): void;
}

/** Decoded audio (`AudioBuffer`). */
export interface AudioBufferLike {
  /** Seconds. */
  readonly duration: number;
  /** Writes `source` samples (-1 to 1) into channel `channelNumber`. */
  copyToChannel(source: Float32Array<ArrayBuffer>, channelNumber: number): void;
}

/** One buffer played once (`AudioBufferSourceNode`). */
export interface AudioBufferSourceNodeLike extends AudioNodeLike {
  /** The audio to play. */
  buffer: AudioBufferLike | null;
  /** Called once playback ends (or `stop` ends it). */
  onended: ((event: Event) => void) | null;
  /** Starts at audio-clock time `when` (seconds; now when not given). */
  start(when?: number): void;
  /** Stops at audio-clock time `when` (seconds; now when not given). */
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
  /** The speakers. */
  readonly destination: AudioNodeLike;
  /** Resumes a suspended context (needs a user gesture under autoplay policies). */
  resume(): Promise<void>;
  /** Closes the context and releases the audio device. */
  close(): Promise<void>;
  /** An empty buffer of `length` sample frames. */
  createBuffer(numberOfChannels: number, length: number, sampleRate: number): AudioBufferLike;
  /** A node that plays one buffer once. */
  createBufferSource(): AudioBufferSourceNodeLike;
  /** A volume node. */
  createGain(): GainNodeLike;
  /** Decodes a whole encoded file (WAV, mp3, ...). */
  decodeAudioData(data: ArrayBuffer): Promise<AudioBufferLike>;
}

/** The browser's `AudioContext` constructor, when the page has Web Audio. */
export function defaultAudioContext(): (new () => AudioContextLike) | undefined {
  const scope = globalThis as { AudioContext?: new () => AudioContextLike; webkitAudioContext?: new () => AudioContextLike };
  return scope.AudioContext ?? scope.webkitAudioContext;
}
