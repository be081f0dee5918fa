/**
 * The same captions in React: the Observables of `speech.ts` bound with
 * `useSyncExternalStore` (no JSX, so it bundles with esbuild as plain TypeScript).
 */
import MarkdownIt from 'markdown-it';
import { createElement as h, useState, useSyncExternalStore, type ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import type { Observable, Subscription } from 'rxjs';
import { INITIAL_PLAYBACK_STATE, type PlaybackState } from '../../src/web/index.js';
import { MARKDOWN_ANSWER } from './answer.js';
import { paceFromQuery, relayUrl } from './page.js';
import { speakAnswer } from './speech.js';

/** An Observable as a React external store: subscribed while a component listens. */
function storeOf<T>(source$: Observable<T>, initial: T): { subscribe: (listener: () => void) => () => void; getSnapshot: () => T } {
  let value = initial;
  const listeners = new Set<() => void>();
  let subscription: Subscription | undefined;
  return {
    subscribe(listener) {
      listeners.add(listener);
      subscription ??= source$.subscribe({
        next: (next) => {
          value = next;
          for (const notify of listeners) notify();
        },
        error: () => undefined, // shown by the error store below
      });
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          subscription?.unsubscribe();
          subscription = undefined;
        }
      };
    },
    getSnapshot: () => value,
  };
}

interface Run {
  markdown: ReturnType<typeof storeOf<string>>;
  playback: ReturnType<typeof storeOf<PlaybackState>>;
}

const markdownIt = new MarkdownIt({ html: false });
let context: AudioContext | undefined;

function Captions({ run }: { run: Run }): ReactElement {
  const markdown = useSyncExternalStore(run.markdown.subscribe, run.markdown.getSnapshot);
  const state = useSyncExternalStore(run.playback.subscribe, run.playback.getSnapshot);
  const current = state.currentWord;
  return h(
    'div',
    null,
    h('p', { id: 'status' }, state.status),
    h('div', { id: 'answer', dangerouslySetInnerHTML: { __html: markdownIt.render(markdown) } }),
    h(
      'div',
      { id: 'captions' },
      state.segments.map((segment) =>
        h(
          'p',
          { key: segment.segment_id, className: segment.status },
          segment.words.map((word, index) => {
            const isCurrent = current?.segment_id === segment.segment_id && current.index === index;
            return h('span', { key: index, className: isCurrent ? 'word current' : 'word' }, `${word.word} `);
          }),
        ),
      ),
    ),
  );
}

function App(): ReactElement {
  const [run, setRun] = useState<Run | undefined>(undefined);
  const speakNow = (): void => {
    context ??= new AudioContext(); // in the click: the autoplay policy lets it run
    void context.resume();
    const answer = speakAnswer({ relayUrl: relayUrl(), context, markdown: MARKDOWN_ANSWER, pace: paceFromQuery() });
    setRun({ markdown: storeOf(answer.markdown$, ''), playback: storeOf(answer.state$, INITIAL_PLAYBACK_STATE) });
  };
  return h(
    'main',
    null,
    h('h1', null, 'Live captions (React)'),
    h('button', { id: 'speak', onClick: speakNow }, 'Speak'),
    // unmounting the captions unsubscribes: the sound stops and the session closes
    h('button', { id: 'interrupt', onClick: () => setRun(undefined), disabled: run === undefined }, 'Interrupt'),
    run ? h(Captions, { run }) : null,
  );
}

createRoot(document.getElementById('root')!).render(h(App));
