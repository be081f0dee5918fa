/**
 * rxvoice/telephony: speech on the phone. G.711 codecs (`encodeMulaw`, `decodeMulaw`,
 * `encodeAlaw`, `decodeAlaw`), `resamplePcm` with an anti-aliasing filter, and
 * `twilioMediaStream`, the call adapter over a Twilio Media Streams WebSocket.
 *
 * ```ts
 * import { encodeMulaw, resamplePcm } from 'rxvoice/telephony';
 *
 * const payload = encodeMulaw(resamplePcm(new Int16Array(480), 24000, 8000)); // 20 ms: 160 bytes
 * ```
 */
export { encodeMulaw, decodeMulaw, encodeAlaw, decodeAlaw } from './g711.js';
export { resamplePcm } from './resample.js';
export {
  twilioMediaStream,
  type TwilioMediaStreamOptions,
  type TwilioCall,
  type TwilioCallEnd,
  type CallSocketLike,
} from './twilio.js';
export type { CallPlaybackEvent, HeardReason } from './call-playback.js';
export type { TwilioStreamStart } from './twilio-messages.js';
export { TelephonyError, type TelephonyErrorReason } from './errors.js';
