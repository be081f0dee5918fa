/**
 * rxvoice/relay: the server side of live speech in a browser. A page cannot hold the API
 * key, and the service issues no browser tokens, so the page speaks the live protocol to
 * this relay (no key) and the relay opens the service session with the server's key, for
 * pages of its own origin, within a budget per visitor.
 *
 * ```ts
 * import { createServer } from 'node:http';
 * import { attachLiveRelay } from 'rxvoice/relay';
 *
 * const server = createServer(); // it also serves the page, so the page has the relay's origin
 * const relay = attachLiveRelay(server, { path: '/speech' }); // key from CAMB_API_KEY
 * server.listen(8080);
 * // in the page at http://localhost:8080/: speak({ wsUrl: 'ws://localhost:8080/speech', WebSocket }, { voice_id: 1 })
 * ```
 */
export { attachLiveRelay } from './relay.js';
export {
  DEFAULT_RELAY_LIMITS,
  RelayCloseCodes,
  type LiveRelay,
  type LiveRelayEvent,
  type LiveRelayLimits,
  type LiveRelayOptions,
  type LiveRelayRefusal,
  type LiveRelayStats,
} from './options.js';
export { memoryRelayStore, redisRelayStore, type RedisEvalClient, type RedisRelayStoreOptions, type RelayStore } from './store.js';
