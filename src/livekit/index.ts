/**
 * `rxvoice/livekit`: a TTS plugin for LiveKit Agents (`@livekit/agents` 1.x, audio as
 * `AudioFrame`s of `@livekit/rtc-node`), both optional peers of rxvoice that only this
 * entry loads.
 *
 * ```ts
 * import { voice } from '@livekit/agents';
 * import { TTS } from 'rxvoice/livekit';
 *
 * const session = new voice.AgentSession({ tts: new TTS({ voice_id: 1 }) });
 * ```
 */
export { TTS, DEFAULT_LIVEKIT_RECONNECT, type TTSOptions } from './tts.js';
