/**
 * The optional peers `@livekit/agents` and `@livekit/rtc-node` as types. Every type of this
 * entry that comes from them goes through these aliases, so that the declaration files of
 * `rxvoice/livekit` compile in a strict consumer that does not have the peers installed:
 * there each alias is `any` (the comment before it silences the missing module), where they
 * are installed it is the peer's own type.
 */

/**
 * The `@livekit/agents` module (`any` where the optional peer is not installed).
 * @ts-ignore */
export type LiveKitAgents = typeof import('@livekit/agents');

/**
 * LiveKit's connection options of a TTS request (`maxRetry`, `retryIntervalMs`, `timeoutMs`).
 * @ts-ignore */
export type APIConnectOptions = import('@livekit/agents').APIConnectOptions;

/**
 * An audio frame of `@livekit/rtc-node`.
 * @ts-ignore */
export type AudioFrame = import('@livekit/rtc-node').AudioFrame;

/**
 * LiveKit's word or sentence with its time in the audio (seconds from the stream's start).
 * @ts-ignore */
export type TimedString = import('@livekit/agents').TimedString;

/**
 * One packet of synthesized audio as LiveKit's TTS streams hand it out.
 * @ts-ignore */
export type SynthesizedAudio = import('@livekit/agents').tts.SynthesizedAudio;
