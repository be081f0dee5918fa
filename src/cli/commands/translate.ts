/**
 * `rxvoice translate --from TAG --to TAG "text"`: the translation, streamed to stdout
 * as it arrives (POST /translation/stream).
 */
import { tap } from 'rxjs';
import { onePositional, parseCommand, readNumber, requireString } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson } from '../io.js';
import { runToEnd } from '../run.js';
import { readAll } from '../stdin.js';

/** `rxvoice translate`: stream a translation to stdout. Resolves with the exit code. */
export async function translateCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('translate', argv, {
    from: { type: 'string' },
    to: { type: 'string' },
    formality: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['translate'] as string);
    return ExitCode.ok;
  }
  const from = requireString('translate', values.from, 'from');
  const to = requireString('translate', values.to, 'to');
  // Allowed values (1 or 2) are the client's rule: ValidationError, exit code 4.
  const formality = readNumber('translate', values.formality, 'formality');
  const arg = onePositional('translate', positionals, 'text to translate (or - for stdin)');
  const text = arg === '-' ? await readAll(io.stdin) : arg;
  if (text.trim() === '') throw new UsageError('the text to translate is empty', 'translate');

  return withConnection(context, async ({ client }) => {
    let last = '';
    let received = '';
    const pieces$ = client
      .translateStream({
        text,
        source_language: from,
        target_language: to,
        ...(formality !== undefined ? { formality: formality as 1 | 2 } : {}),
      })
      .pipe(
        tap((piece: string) => {
          received += piece;
          last = piece;
          if (values.json) writeJson(io.stdout, { type: 'text', text: piece });
          else io.stdout.write(piece);
        }),
      );
    try {
      await runToEnd(pieces$, context.signal);
    } catch (error) {
      // Keep what arrived, on its own line, before the error line on stderr.
      if (!values.json && received !== '' && !last.endsWith('\n')) io.stdout.write('\n');
      throw error;
    }
    if (values.json) writeJson(io.stdout, { type: 'done', text: received });
    else if (!last.endsWith('\n')) io.stdout.write('\n');
    return ExitCode.ok;
  });
}
