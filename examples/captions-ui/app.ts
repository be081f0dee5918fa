/**
 * Live captions, plain DOM: the answer rendered from markdown as it streams, spoken
 * through the relay (no key in this page), played with Web Audio, each word highlighted
 * when it is heard. State is mirrored on `window.captions` for tests and the curious.
 */
import MarkdownIt from 'markdown-it';
import type { Subscription } from 'rxjs';
import type { PlaybackState } from '../../src/web/index.js';
import { MARKDOWN_ANSWER } from './answer.js';
import { speakAnswer } from './speech.js';
import { paceFromQuery, relayUrl } from './page.js';

interface Highlight {
  segment_id: number;
  index: number;
  word: string;
  /** Audio-clock time its timestamp names: the segment's first sample plus the word's start. */
  expected: number;
  /** Audio-clock time when the page highlighted it. */
  heardAt: number;
  /** `performance.now()` then. */
  heardPerf: number;
}
const hooks = {
  status: 'ready',
  highlighted: [] as Highlight[],
  segments: [] as Array<{ segment_id: number; text: string; startTime: number; receivedTime: number }>,
  errors: [] as string[],
  /** Output level now (RMS of what our nodes play). */
  level: () => 0,
  audioTime: () => 0,
};
(window as unknown as { captions: typeof hooks }).captions = hooks;

const $ = (id: string): HTMLElement => document.getElementById(id)!;
const markdown = new MarkdownIt({ html: false });
($('text') as HTMLTextAreaElement).value = MARKDOWN_ANSWER;
let context: AudioContext | undefined;
let analyser: AnalyserNode | undefined;
let running: Subscription | undefined;

function setStatus(status: string): void {
  hooks.status = status;
  $('status').textContent = status;
  ($('interrupt') as HTMLButtonElement).disabled = status !== 'speaking';
}

function renderCaptions(state: PlaybackState): void {
  const current = state.currentWord;
  const captions = $('captions');
  captions.replaceChildren(
    ...state.segments.map((segment) => {
      const p = document.createElement('p');
      p.className = segment.status;
      const words = segment.words.length > 0 ? segment.words.map((w) => w.word) : [segment.text];
      words.forEach((word, index) => {
        const span = document.createElement('span');
        span.className = 'word';
        span.textContent = word;
        if (current && (segment.segment_id < current.segment_id || (segment.segment_id === current.segment_id && index < current.index))) span.classList.add('spoken');
        if (current && segment.segment_id === current.segment_id && index === current.index) span.classList.add('current');
        p.append(span, ' ');
      });
      return p;
    }),
  );
}

$('speak').addEventListener('click', () => {
  running?.unsubscribe();
  // created in the click: the autoplay policy lets it run
  context ??= new AudioContext();
  void context.resume();
  if (!analyser) {
    analyser = context.createAnalyser();
    analyser.fftSize = 2048;
    analyser.connect(context.destination);
    const samples = new Float32Array(analyser.fftSize);
    hooks.level = () => {
      analyser!.getFloatTimeDomainData(samples);
      return Math.sqrt(samples.reduce((sum, x) => sum + x * x, 0) / samples.length);
    };
    const ctx = context;
    hooks.audioTime = () => ctx.currentTime;
  }
  const ctx = context;
  hooks.highlighted = [];
  hooks.segments = [];
  const answer = speakAnswer({ relayUrl: relayUrl(), context: ctx, destination: analyser, markdown: ($('text') as HTMLTextAreaElement).value, pace: paceFromQuery() });
  const starts = new Map<number, number>();
  setStatus('speaking');
  running = answer.all$.subscribe({
    next: (item) => {
      if ('markdown' in item) $('answer').innerHTML = markdown.render(item.markdown);
      else if ('state' in item) renderCaptions(item.state);
      else if (item.event.type === 'segmentScheduled') {
        const { segment_id, text, startTime, receivedTime } = item.event;
        starts.set(segment_id, startTime);
        hooks.segments.push({ segment_id, text, startTime, receivedTime });
      } else if (item.event.type === 'word') {
        const { segment_id, index, word, start } = item.event;
        hooks.highlighted.push({ segment_id, index, word, expected: (starts.get(segment_id) ?? NaN) + start, heardAt: ctx.currentTime, heardPerf: performance.now() });
      }
    },
    error: (error: unknown) => {
      hooks.errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      setStatus('error');
      $('error').textContent = error instanceof Error ? error.message : String(error);
    },
    complete: () => setStatus('finished'),
  });
});

$('interrupt').addEventListener('click', () => {
  // barge-in: the sound stops at once and the session (and its relay session) closes
  running?.unsubscribe();
  running = undefined;
  setStatus('interrupted');
});
