/** What both pages read from their address: the relay's address and the token pace. */
import type { TokenPace } from '../lib/chat-answer.js';

/** The relay on the page's own server. */
export function relayUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/speech`;
}

/** `?chars=3-5&delay=20-40`: characters per token and ms between tokens (a fake LLM's pace). */
export function paceFromQuery(): TokenPace {
  const query = new URLSearchParams(location.search);
  const range = (name: string): [number, number] | undefined => {
    const match = /^(\d+)-(\d+)$/.exec(query.get(name) ?? '');
    return match ? [Number(match[1]), Number(match[2])] : undefined;
  };
  const chars = range('chars');
  const delayMs = range('delay');
  return { ...(chars ? { chars } : {}), ...(delayMs ? { delayMs } : {}) };
}
