/**
 * `rxvoice emulator`: runs the local emulator until SIGINT/SIGTERM, then closes it.
 */
import { startEmulator } from '../../emulator/index.js';
import { parseCommand, noPositionals, readNumber } from '../args.js';
import type { CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson, writeLine } from '../io.js';
import { untilAborted } from '../run.js';

/** `rxvoice emulator`: serve the local emulator until interrupted. Resolves with the exit code. */
export async function emulatorCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('emulator', argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    synth: { type: 'string' },
    key: { type: 'string', multiple: true },
    credits: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['emulator'] as string);
    return ExitCode.ok;
  }
  noPositionals('emulator', positionals);
  const port = readNumber('emulator', values.port, 'port', { min: 0, max: 65535, integer: true }) ?? 0;
  const synth = values.synth;
  if (synth !== undefined && synth !== 'espeak' && synth !== 'tone') {
    throw new UsageError(`--synth must be espeak or tone, not ${JSON.stringify(synth)}`, 'emulator');
  }
  const credits = readNumber('emulator', values.credits, 'credits', { min: 0 });
  const keys = values.key?.filter((key) => key.length > 0);

  const emulator = await startEmulator({
    port,
    ...(synth ? { synth } : {}),
    warn: (line) => writeLine(io.stderr, line),
    ...(values.host ? { host: values.host } : {}),
    ...(keys && keys.length > 0 ? { apiKeys: keys } : {}),
    ...(credits !== undefined ? { credits } : {}),
  });
  try {
    if (values.json) {
      writeJson(io.stdout, { baseUrl: emulator.baseUrl, wsUrl: emulator.wsUrl, apiKey: emulator.apiKey, synth: emulator.synth });
    } else {
      writeLine(io.stdout, `rxvoice emulator (synth ${emulator.synth}) listening`);
      writeLine(io.stdout, `  base URL:  ${emulator.baseUrl}`);
      writeLine(io.stdout, `  live WS:   ${emulator.wsUrl}`);
      writeLine(io.stdout, `  API key:   ${emulator.apiKey}`);
      writeLine(io.stdout, '');
      writeLine(io.stdout, `  export CAMB_BASE_URL=${emulator.baseUrl} CAMB_API_KEY=${emulator.apiKey}`);
      writeLine(io.stdout, '  Press Ctrl-C to stop.');
    }
    await untilAborted(context.signal);
  } finally {
    await emulator.close();
  }
  writeLine(io.stderr, 'rxvoice: emulator closed');
  return ExitCode.ok;
}
