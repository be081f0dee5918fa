/**
 * Tags in an LLM's text as the speech core (`speakable.ts`) sees them: thought and tool-call
 * blocks (`<think>`, `<thinking>`, `<reasoning>`, `<tool_call>`), whose content is not spoken;
 * SSML-like markup (`<break time="1s"/>`, `<say-as>`, `<phoneme>`, `<spell>`, ...), stripped or
 * kept; HTML's tags and other tags (dropped), but for placeholders (`<your-api-key>`: the name is
 * spoken) and a type's parameters (`Vec<T>`: text); autolinks (`<https://x.y>`). Pure functions of the buffered
 * text; `undefined` means "wait: the text so far does not tell".
 */
import { MARKER_LOOKAHEAD, NL } from './speakable-marks.js';
import { AUTOLINK, HTML_TAG } from './speakable-markdown.js';

/** What a hidden (not spoken) block holds: a model's thoughts or a tool call. */
export type HiddenKind = 'thought' | 'tool_call';

/** Tag names of hidden blocks, lower case, and what they hold. */
const HIDDEN_TAGS: ReadonlyMap<string, HiddenKind> = new Map([
  ['think', 'thought'],
  ['thinking', 'thought'],
  ['reasoning', 'thought'],
  ['tool_call', 'tool_call'],
]);

/** SSML-like tags a speech service may understand (kept intact with `markup: 'keep'`). */
const SSML_TAGS = new Set(['break', 'say-as', 'phoneme', 'spell', 'sub', 'prosody', 'emphasis', 'speak', 'lang', 'voice', 'mark', 'audio', 'p', 's', 'w']);

/**
 * HTML's elements (and a few old ones): their tags are dropped. A tag of another name is a
 * custom element or an XML-like wrapper (`<answer>`, dropped too), a placeholder (`<your-key>`,
 * `<Enter>`: its name is spoken) or a type's parameter (`Vec<T>`: text).
 */
const HTML_ELEMENTS = new Set(
  (
    'a abbr address area article aside audio b base bdi bdo big blockquote body br button canvas caption center cite code col colgroup ' +
    'data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure font footer form h1 h2 h3 h4 h5 h6 head header ' +
    'hgroup hr html i iframe img input ins kbd label legend li link main map mark math menu meta meter nav noscript object ol optgroup ' +
    'option output p param picture pre progress q rp rt ruby s samp script search section select slot small source span strike strong ' +
    'style sub summary sup svg table tbody td template textarea tfoot th thead time title tr track tt u ul var video wbr'
  ).split(' '),
);

/** A placeholder's name: not HTML's, with a hyphen or a capital (`<your-api-key>`, `<Enter>`, `<API_KEY>`). */
const PLACEHOLDER = /^<([A-Za-z][\w-]*)>$/;

const OPEN_TAG = /^<([A-Za-z][\w-]*)(?:\s[^<>]*)?\/?>$/;
const ANY_TAG = /^<\/?([A-Za-z][\w:-]*)(?:\s[^<>]*)?\/?>$/;

/** How a `<` and what follows it is read. */
export type TagAt =
  /** Not a tag: the `<` is text. */
  | { type: 'text' }
  /** An autolink `<address>` or a placeholder `<your-api-key>`: speak `address` (the brackets are dropped). */
  | { type: 'autolink'; len: number; address: string }
  /** A tag of `len` code units: dropped, kept verbatim, or said as `say`. */
  | { type: 'tag'; len: number; action: 'drop' | 'keep' | 'space' }
  /** The opening tag of a hidden block (`<think>`): its lower-case name and kind. */
  | { type: 'hidden'; len: number; name: string; kind: HiddenKind };

/** Which blocks are hidden, and whether SSML-like markup is kept. */
export interface TagPolicy {
  hide: ReadonlySet<HiddenKind>;
  markup: 'strip' | 'keep';
}

/** The tag starting with the `<` at `pos` (`prev`: the code unit before it, NaN for none), or undefined to wait for more text. */
export function tagAt(buf: string, pos: number, prev: number, final: boolean, policy: TagPolicy): TagAt | undefined {
  const n = buf.length;
  if (pos + 1 >= n && !final) return undefined;
  // `<b>`, `</div>`, `<br/>`, `<!-- -->`, `<https://x.y>`; `a < b` is text at once
  if (!/^[A-Za-z/!]$/.test(buf.charAt(pos + 1))) return { type: 'text' };
  let k = pos + 1;
  while (k < n && k - pos < MARKER_LOOKAHEAD && buf.charCodeAt(k) !== 0x3e && buf.charCodeAt(k) !== NL && buf.charCodeAt(k) !== 0x3c) k++;
  if (k >= n && !final && k - pos <= MARKER_LOOKAHEAD) return undefined; // the `>` may be at `pos + MARKER_LOOKAHEAD`
  if (k >= n || buf.charCodeAt(k) !== 0x3e) return { type: 'text' };
  const tag = buf.slice(pos, k + 1);
  const auto = AUTOLINK.exec(tag);
  if (auto) return { type: 'autolink', len: tag.length, address: auto[1]! };
  const open = OPEN_TAG.exec(tag);
  const name = (open ?? ANY_TAG.exec(tag))?.[1]?.toLowerCase();
  const hidden = name === undefined ? undefined : HIDDEN_TAGS.get(name);
  if (hidden !== undefined) {
    if (open && !tag.endsWith('/>') && policy.hide.has(hidden)) return { type: 'hidden', len: tag.length, name: name!, kind: hidden };
    return { type: 'tag', len: tag.length, action: 'drop' }; // a spoken block's tags, a stray `</think>`
  }
  if (name !== undefined && SSML_TAGS.has(name)) {
    if (policy.markup === 'keep') return { type: 'tag', len: tag.length, action: 'keep' };
    return { type: 'tag', len: tag.length, action: name === 'break' ? 'space' : 'drop' };
  }
  if (open && !HTML_ELEMENTS.has(name!)) {
    if (isWordUnit(prev)) return { type: 'text' }; // `Vec<T>`, `vector<int>`: a type's parameter
    const placeholder = PLACEHOLDER.exec(tag)?.[1];
    if (placeholder !== undefined && /[-A-Z]/.test(placeholder)) return { type: 'autolink', len: tag.length, address: placeholder };
  }
  if (HTML_TAG.test(tag)) return { type: 'tag', len: tag.length, action: name === 'br' ? 'space' : 'drop' };
  return { type: 'text' };
}

/** A letter or digit (ASCII or not): a `<` glued to one opens no tag of an unknown name. */
function isWordUnit(c: number): boolean {
  return c === c && /[\p{L}\p{N}]/u.test(String.fromCharCode(c));
}

/**
 * Inside a hidden block named `name`: how much of `buf` from `pos` is its content, and
 * whether its closing tag (`</think>`, any case) follows. `content` code units are content;
 * then, if `close` > 0, a closing tag of that length; if both are 0, wait for more text.
 */
export function hiddenAt(buf: string, pos: number, name: string, final: boolean): { content: number; close: number } {
  const n = buf.length;
  const lt = buf.indexOf('<', pos);
  if (lt < 0) return { content: n - pos, close: 0 };
  if (lt > pos) return { content: lt - pos, close: 0 };
  // a `<`: the closing tag?
  const want = `</${name}`;
  const head = buf.slice(pos, pos + want.length).toLowerCase();
  if (!want.startsWith(head) || head.length < want.length) {
    if (head.length < want.length && want.startsWith(head) && !final) return { content: 0, close: 0 };
    return { content: 1, close: 0 };
  }
  let k = pos + want.length;
  while (k < n && (buf.charCodeAt(k) === 0x20 || buf.charCodeAt(k) === 9)) k++;
  if (k >= n) return final ? { content: n - pos, close: 0 } : { content: 0, close: 0 };
  if (buf.charCodeAt(k) === 0x3e) return { content: 0, close: k + 1 - pos };
  return { content: 1, close: 0 };
}
