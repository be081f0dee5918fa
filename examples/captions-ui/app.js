// Live captions client: plays segment audio in order through one <audio> element and
// highlights each word by the element's currentTime and the segment's word timeline.
// State is mirrored on `window.captions` so tests (and curious people) can inspect it.

const $ = (id) => document.getElementById(id);
const player = $('player');
const statusEl = $('status');
const captionsEl = $('captions');
const speakButton = $('speak');
const interruptButton = $('interrupt');

const state = {
  status: 'connecting',
  /** Every word highlighted, in the order it was highlighted. */
  highlighted: [],
  /** Segments received: { segment_id, text, words, bytes }. */
  segments: [],
  /** Segment ids whose audio started playing, in order. */
  played: [],
  interrupted: false,
  serverClosedSession: false,
  errors: [],
};
window.captions = state;

const queue = [];
let current = null;
let pendingMeta = null;
let streamDone = false;

function setStatus(status) {
  state.status = status;
  statusEl.textContent = status;
}

const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
socket.binaryType = 'blob';
socket.addEventListener('open', () => setStatus('ready'));
socket.addEventListener('close', () => {
  if (state.status !== 'interrupted' && state.status !== 'finished') setStatus('disconnected');
});
socket.addEventListener('message', (event) => {
  if (typeof event.data !== 'string') {
    // Binary frame: the WAV of the segment announced just before.
    const meta = pendingMeta;
    pendingMeta = null;
    if (!meta || state.interrupted) return;
    const blob = new Blob([event.data], { type: 'audio/wav' });
    enqueue(meta, blob);
    return;
  }
  const message = JSON.parse(event.data);
  switch (message.type) {
    case 'hello':
      if (!$('text').value) $('text').value = message.text;
      break;
    case 'segment':
      pendingMeta = message;
      break;
    case 'done':
      streamDone = true;
      if (!current && queue.length === 0) finish();
      break;
    case 'interrupted':
      state.serverClosedSession = message.sessionClosed === true;
      setStatus('interrupted');
      break;
    case 'error':
      state.errors.push(message.message);
      setStatus(`error: ${message.message}`);
      interruptButton.disabled = true;
      speakButton.disabled = false;
      break;
  }
});

speakButton.addEventListener('click', () => {
  reset();
  socket.send(JSON.stringify({ type: 'speak', text: $('text').value }));
  setStatus('speaking');
  speakButton.disabled = true;
  interruptButton.disabled = false;
});

interruptButton.addEventListener('click', () => {
  // Stop at once: silence first, then tell the server to end the live session.
  state.interrupted = true;
  player.pause();
  for (const segment of queue.splice(0)) URL.revokeObjectURL(segment.url);
  if (current) current.line.classList.remove('playing');
  current = null;
  socket.send(JSON.stringify({ type: 'interrupt' }));
  setStatus('interrupting');
  interruptButton.disabled = true;
  speakButton.disabled = false;
});

function reset() {
  state.highlighted.length = 0;
  state.segments.length = 0;
  state.played.length = 0;
  state.interrupted = false;
  state.serverClosedSession = false;
  streamDone = false;
  queue.length = 0;
  current = null;
  captionsEl.textContent = '';
}

function enqueue(meta, blob) {
  const words = Array.isArray(meta.words) ? meta.words : [];
  state.segments.push({ segment_id: meta.segment_id, text: meta.text, words, bytes: blob.size });
  const line = document.createElement('p');
  line.dataset.segment = String(meta.segment_id);
  const spans = renderWords(line, meta.text, words);
  captionsEl.appendChild(line);
  queue.push({ segment_id: meta.segment_id, words, spans, line, url: URL.createObjectURL(blob), next: 0 });
  if (!current) playNext();
}

/** Render `text` into `line`, wrapping each timed word in a span (punctuation stays plain text). */
function renderWords(line, text, words) {
  const spans = [];
  let cursor = 0;
  for (const word of words) {
    const at = text.indexOf(word.word, cursor);
    const span = document.createElement('span');
    span.className = 'word';
    span.textContent = word.word;
    if (at >= 0) {
      line.append(text.slice(cursor, at));
      cursor = at + word.word.length;
    } else {
      line.append(' ');
    }
    line.appendChild(span);
    spans.push(span);
  }
  line.append(text.slice(cursor));
  return spans;
}

function playNext() {
  current = queue.shift() ?? null;
  if (!current) {
    if (streamDone) finish();
    return;
  }
  current.line.classList.add('playing');
  state.played.push(current.segment_id);
  player.src = current.url;
  player.play().catch((error) => state.errors.push(`play: ${error.message}`));
}

function finish() {
  if (state.interrupted) return;
  setStatus('finished');
  interruptButton.disabled = true;
  speakButton.disabled = false;
}

player.addEventListener('ended', () => {
  if (!current || state.interrupted) return;
  highlightUpTo(Number.POSITIVE_INFINITY);
  current.line.classList.remove('playing');
  current.line.classList.add('done');
  for (const span of current.spans) span.classList.remove('current');
  URL.revokeObjectURL(current.url);
  current = null;
  playNext();
});

/** Highlight, in order, every word of the current segment that started by time `t`. */
function highlightUpTo(t) {
  const segment = current;
  if (!segment) return;
  while (segment.next < segment.words.length && segment.words[segment.next].start <= t) {
    const index = segment.next++;
    const previous = segment.spans[index - 1];
    if (previous) previous.classList.remove('current');
    segment.spans[index].classList.add('spoken', 'current');
    state.highlighted.push({
      segment_id: segment.segment_id,
      index,
      word: segment.words[index].word,
      start: segment.words[index].start,
      currentTime: player.currentTime,
    });
  }
}

function tick() {
  if (current && !state.interrupted && !player.paused) highlightUpTo(player.currentTime);
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
player.addEventListener('timeupdate', () => {
  if (current && !state.interrupted) highlightUpTo(player.currentTime);
});
