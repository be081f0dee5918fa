/**
 * Markdown tokens in, speakable text out: the markup characters (`*`, `_`, `` ` ``, `#`,
 * `>`) dropped, one character at a time, so a marker split across tokens goes too.
 *
 * This is the plug for `speakableText()` from `rxvoice/operators`: once that operator is
 * in the library, `speakable` becomes `speakableText` and this file goes.
 */
import { filter, map, type OperatorFunction } from 'rxjs';

/** Markdown tokens in, text without markup out (empty tokens dropped). */
export function speakable(): OperatorFunction<string, string> {
  return (tokens) =>
    tokens.pipe(
      map((token) => token.replace(/[*_`#>]/g, '').replace(/^(\s*)- /gm, '$1')),
      filter((token) => token !== ''),
    );
}
