/**
 * The Observables both views bind to (the plain DOM page and the React page): one markdown
 * answer streamed token by token, rendered as it grows, spoken through the relay with no
 * key, played through Web Audio, and folded into the state a view renders.
 */
import { map, merge, scan, share, type Observable } from 'rxjs';
import { speak } from '../../src/live/index.js';
import { speakableText } from '../../src/operators/index.js';
import { playbackState, toWebAudio, type AudioContextLike, type AudioNodeLike, type PlaybackEvent, type PlaybackState } from '../../src/web/index.js';
import { tokenStream, type TokenPace } from '../lib/chat-answer.js';

/** What a view needs to speak an answer. */
export interface AnswerOptions {
  /** The relay's address, e.g. `ws://host/speech`. */
  relayUrl: string;
  context: AudioContextLike;
  /** Where the audio goes (e.g. an analyser in front of the speakers); default the context's destination. */
  destination?: AudioNodeLike;
  markdown: string;
  pace?: TokenPace;
  voiceId?: number;
}

/** The answer as it streams: its markdown so far, and its playback. */
export interface Answer {
  /** The markdown received so far (for rendering). */
  markdown$: Observable<string>;
  /** Playback events (shared: one session however many subscribe). */
  playback$: Observable<PlaybackEvent>;
  /** The state a view renders. */
  state$: Observable<PlaybackState>;
  /** Everything above in one stream: subscribe once, unsubscribe to interrupt. */
  all$: Observable<{ markdown: string } | { state: PlaybackState } | { event: PlaybackEvent }>;
}

/** Speaks a markdown answer (streamed like an LLM's) through the relay and Web Audio. */
export function speakAnswer(options: AnswerOptions): Answer {
  const tokens$ = tokenStream(options.markdown, options.pace).pipe(share());
  const markdown$ = tokens$.pipe(scan((text, token) => text + token, ''));
  const playback$ = tokens$.pipe(
    // markdown in, text to speak out: markers, addresses and emoji are not spoken
    speakableText(),
    // a browser cannot set headers and holds no key: the relay adds it
    speak({ wsUrl: options.relayUrl, WebSocket }, { voice_id: options.voiceId ?? 1, output_format: 'wav', word_timestamps: true }),
    toWebAudio({ context: options.context, ...(options.destination ? { destination: options.destination } : {}) }),
    share(),
  );
  const state$ = playback$.pipe(playbackState());
  const all$ = merge(
    markdown$.pipe(map((markdown) => ({ markdown }))),
    state$.pipe(map((state) => ({ state }))),
    playback$.pipe(map((event) => ({ event }))),
  );
  return { markdown$, playback$, state$, all$ };
}
