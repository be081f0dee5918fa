/**
 * Characters as the markdown-to-speech core (`speakable.ts`) sees them: plain text, marks to
 * drop (emoji, control characters) and characters that may be markdown syntax.
 */

export const NL = 10;
/** How far a `[`, `<` or a table line looks ahead before it counts as plain text. */
export const MARKER_LOOKAHEAD = 512;
export const ASCII_PUNCT = /^[!-/:-@[-`{-~]$/;
const RE_PUNCT = /^[\p{P}\p{S}]$/u;
const RE_PICTO = /^\p{Extended_Pictographic}$/u;

/** Kinds of code units: `Plain` text (spoken as is), `Drop` (emoji, controls), `Special` (may be syntax; surrogates). */
export const Kind = { Plain: 1, Drop: 2, Special: 3 } as const;
export type CharKind = (typeof Kind)[keyof typeof Kind];

/** Characters that may be markdown syntax: `*` `_` `~` `` ` `` `[` `]` `<` `!` `\` `|` and the line break. */
const SYNTAX = new Set([...'*_~`[]<!\\|\n'].map((ch) => ch.charCodeAt(0)));
/** Emoji companions dropped with them: variation selectors, zero-width joiner, keycap. */
const EMOJI_PARTS = new Set([0xfe0e, 0xfe0f, 0x200d, 0x20e3]);
const KIND_CACHE = new Uint8Array(0x10000);

export function kindOf(c: number): CharKind {
  const known = KIND_CACHE[c]!;
  if (known !== 0) return known as CharKind;
  let kind: CharKind;
  if (SYNTAX.has(c)) kind = Kind.Special;
  else if (c >= 0xd800 && c <= 0xdfff) kind = Kind.Special; // surrogates: emoji or lone
  else if ((c < 0x20 && c !== 9 && c !== 13) || c === 0x7f || EMOJI_PARTS.has(c)) kind = Kind.Drop;
  else if (c >= 0x2000 && c !== 0x2122 && RE_PICTO.test(String.fromCharCode(c))) kind = Kind.Drop; // BMP emoji (™ is text)
  else kind = Kind.Plain;
  KIND_CACHE[c] = kind;
  return kind;
}

/** Emoji beyond the BMP (and their modifiers, regional indicators and tag characters). */
export function isAstralEmoji(cp: number): boolean {
  if ((cp >= 0x1f3fb && cp <= 0x1f3ff) || (cp >= 0x1f1e6 && cp <= 0x1f1ff) || (cp >= 0xe0020 && cp <= 0xe007f)) return true;
  return RE_PICTO.test(String.fromCodePoint(cp));
}

/** Whitespace for emphasis flanking (NaN: the start or end of the text counts as space). */
export function isSpace(c: number): boolean {
  return c === 0x20 || c === 9 || c === NL || c === 13 || c === 0xa0 || Number.isNaN(c);
}

export function isPunct(c: number): boolean {
  if (Number.isNaN(c)) return false;
  if (c < 0x80) return ASCII_PUNCT.test(String.fromCharCode(c));
  return RE_PUNCT.test(String.fromCharCode(c));
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * Whether a run of `*`, `_` or `~` is emphasis markup (dropped) or text, from the characters on
 * either side (CommonMark flanking): `my_value_2`, `2*3` and `~5 minutes` are text.
 */
export function isEmphasisMarker(ch: number, run: number, before: number, after: number): boolean {
  const left = !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before));
  const right = !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after));
  if (ch === 0x7e && run === 1) return false; // `~5 minutes`
  if (ch === 0x5f && left && right) return false; // `my_value_2`
  if (ch === 0x2a && isDigit(before) && isDigit(after)) return false; // `2*3`
  return left || right;
}
