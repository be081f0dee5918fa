/**
 * List markers and rules, as the sentence core reads them: a list item is its own piece
 * (`1. First` on its own line, `1) one 2) two` inline, `Steps: i) wash ii) dry`), and a rule
 * (`=====`) ends a title. Patterns are plain tables; extend them here.
 */

/** Bullets: a word made of one of these starts a list item. */
export const BULLETS = '-*•–⁃';
/** Markers numbered by letters or roman numerals, and by digits (at most three). */
const ITEM = String.raw`(?:\d{1,3}|[A-Za-z]|[ivxlc]{2,6}|[IVXLC]{2,6})`;

/** A list item marker starting a line: a bullet, `1.`, `a)`, `iv.`, `(2)`, `(1.)`. */
export const LIST_MARKER = new RegExp(String.raw`^(?:[${BULLETS}]|${ITEM}(?:\.\)|[.)])|\(${ITEM}\.?\))$`);
/** What a line may start with while it can still become a list marker. */
export const LIST_PREFIX = /^(?:[-*•–⁃]|\(?(?:\d{1,3}|[A-Za-z]|[ivxlc]{1,6}|[IVXLC]{1,6})?(?:\.\)?|\))?)$/;
/** An inline list marker: `2)`, `b.`, `ii)`, `(c)`, `• 9.`, `⁃10.` (groups: opening bracket, value, suffix). */
const INLINE_MARKER = new RegExp(String.raw`^[${BULLETS}]?(\()?(\d{1,3}|[A-Za-z]|[ivxlc]{2,6}|[IVXLC]{2,6})(\.\)|\.|\))$`);
export const BULLET = new RegExp(`^[${BULLETS}]$`);
/** Roman numerals as list markers at an item start (`ii. First`). */
export const ROMAN_ITEM = /^(?:[ivxlc]{2,6}|[IVXLC]{2,6})$/;
/** A rule: five or more of one of `=`, `_`, `-`, `*`, `~`, `#` (a heading underline, a separator). */
export const RULE = /^([=_~*#-])\1{4,}$/u;

const ROMAN_VALUES: Record<string, number> = { i: 1, v: 5, x: 10, l: 50, c: 100 };

/** A roman numeral's value (`iv` 4, `XII` 12), or 0 when the letters are not one (below 40). */
export function romanValue(word: string): number {
  const w = word.toLowerCase();
  let total = 0;
  for (let i = 0; i < w.length; i++) {
    const v = ROMAN_VALUES[w[i]!] ?? 0;
    const next = ROMAN_VALUES[w[i + 1] ?? ''] ?? 0;
    if (v === 0) return 0;
    total += v < next ? -v : v;
  }
  return total > 0 && total < 40 ? total : 0;
}

/** An inline list marker's value as a number, a letter (`b` 98) and a roman numeral (`ii` 2); 0 when it is not one. */
export interface Marker {
  number: number;
  letter: number;
  roman: number;
  /** `.`, `)` or `.)`. */
  suffix: string;
}

export function markerOf(word: string): Marker | undefined {
  const m = INLINE_MARKER.exec(word);
  if (!m) return undefined;
  if (m[1] !== undefined && !m[3]!.endsWith(')')) return undefined; // `(c.` is not one
  const body = m[2]!;
  const digits = /\d/.test(body);
  return {
    number: digits ? Number(body) : 0,
    letter: !digits && body.length === 1 ? body.toLowerCase().charCodeAt(0) : 0,
    roman: digits ? 0 : romanValue(body),
    suffix: m[3]!,
  };
}

/** Whether `m` follows `last` (`sameSuffix`: `2)` after `1)`, not after `1.`; `ii)` after `i)`). */
export function isNextMarker(m: Marker | undefined, last: Marker | undefined, sameSuffix = true): boolean {
  if (m === undefined || last === undefined || (sameSuffix && m.suffix !== last.suffix)) return false;
  return (
    (m.number > 0 && m.number === last.number + 1) ||
    (m.letter > 0 && last.letter > 0 && m.letter === last.letter + 1) ||
    (m.roman > 0 && last.roman > 0 && m.roman === last.roman + 1)
  );
}
