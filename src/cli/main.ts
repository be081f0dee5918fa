/**
 * The `rxvoice` command. `main(argv, io)` runs in-process (tests inject the streams,
 * environment and interrupts); `run()` is what `bin/rxvoice.js` calls.
 *
 * Exit codes: see `exit-codes.ts` (0 ok, 1 failure, 2 usage, 3 auth, 4 validation,
 * 5 payment, 6 connection, 130 interrupted).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { errorLine, exitCodeOf, ExitCode, UsageError } from './exit-codes.js';
import { COMMAND_HELP, MAIN_HELP } from './help.js';
import { processIo, writeLine, type CliIo } from './io.js';
import type { CommandContext } from './context.js';
import { batchCommand } from './commands/batch.js';
import { workerCommand } from './commands/worker.js';
import { emulatorCommand } from './commands/emulator.js';
import { soundCommand } from './commands/sound.js';
import { speakCommand } from './commands/speak.js';
import { translateCommand } from './commands/translate.js';
import { voiceCommand, voicesCommand } from './commands/voices.js';

export type { CliIo } from './io.js';
export { ExitCode } from './exit-codes.js';

type Command = (argv: string[], context: CommandContext) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  speak: speakCommand,
  translate: translateCommand,
  sound: soundCommand,
  voices: voicesCommand,
  voice: voiceCommand,
  emulator: emulatorCommand,
  batch: batchCommand,
  worker: workerCommand,
};

/**
 * Run the `rxvoice` command line `argv` (without `node` and the script) against `io`.
 * Resolves with the exit code; never throws, never calls `process.exit`.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const secrets = [io.env['CAMB_API_KEY'], io.env['RXVOICE_API_KEY']];
  const controller = new AbortController();
  const interrupted = { signal: undefined as string | undefined };
  const removeInterrupt = io.onInterrupt?.((signal) => {
    interrupted.signal = signal;
    controller.abort();
  });
  const context: CommandContext = { io, signal: controller.signal, secrets };
  try {
    const [name, ...rest] = argv;
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      if (name === 'help' && rest[0] && COMMAND_HELP[rest[0]]) io.stdout.write(COMMAND_HELP[rest[0]] as string);
      else io.stdout.write(MAIN_HELP);
      return name === undefined ? ExitCode.usage : ExitCode.ok;
    }
    if (name === '-v' || name === '--version') {
      writeLine(io.stdout, version());
      return ExitCode.ok;
    }
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
    return await command(rest, context);
  } catch (error) {
    const code = exitCodeOf(error);
    if (code === ExitCode.interrupted && interrupted.signal) {
      writeLine(io.stderr, `rxvoice: interrupted (${interrupted.signal})`);
    } else {
      writeLine(io.stderr, errorLine(error, secrets));
    }
    return code;
  } finally {
    removeInterrupt?.();
  }
}

/** Entry point of the binary: runs `main` on the real process and sets `process.exitCode`. */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const io = processIo();
  const code = await main(argv, io);
  process.exitCode = code;
  // Some handle (a player, a keep-alive socket) must never keep a finished command alive.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
  setTimeout(() => process.exit(code), 50).unref();
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return `rxvoice ${pkg.version ?? 'unknown'}`;
  } catch {
    return 'rxvoice (unknown version)';
  }
}

// `tsx src/cli/main.ts ...` runs the command directly.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void run();
}
