/**
 * Command-line parsing on `node:util` `parseArgs`, with errors turned into one-line
 * `UsageError`s (exit code 2), and small typed readers for option values.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './exit-codes.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
} as const satisfies Options;

type CommandConfig<O extends Options> = {
  args: string[];
  options: typeof COMMON_OPTIONS & O;
  allowPositionals: true;
  strict: true;
};

/** Parse `argv` of `command` with `options` (plus `--help` and `--json`). */
export function parseCommand<O extends Options>(
  command: string,
  argv: string[],
  options: O,
): ReturnType<typeof parseArgs<CommandConfig<O>>> {
  try {
    return parseArgs<CommandConfig<O>>({
      args: argv,
      options: { ...COMMON_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(usageMessage(error), command);
  }
}

function usageMessage(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1];
    return option ? `unknown option ${option}` : 'unknown option';
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /'([^']+)'/.exec(message)?.[1];
    if (/missing/.test(message)) return `option ${option ?? ''} needs a value`.replace('  ', ' ');
    if (/does not take an argument/.test(message)) return `option ${option ?? ''} takes no value`.replace('  ', ' ');
  }
  return message.split('\n')[0] ?? message;
}

/** A required string option. */
export function requireString(command: string, value: string | boolean | undefined, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`missing --${name}`, command);
  return value;
}

/** An optional number option (finite), with bounds. */
export function readNumber(
  command: string,
  value: string | boolean | undefined,
  name: string,
  bounds: { min?: number; max?: number; integer?: boolean } = {},
): number | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  const trimmed = value.trim();
  const number = Number(trimmed);
  if (trimmed === '' || !Number.isFinite(number)) throw new UsageError(`--${name} must be a number, not ${JSON.stringify(value)}`, command);
  if (bounds.integer && !Number.isInteger(number)) throw new UsageError(`--${name} must be an integer`, command);
  if (bounds.min !== undefined && number < bounds.min) throw new UsageError(`--${name} must be at least ${bounds.min}`, command);
  if (bounds.max !== undefined && number > bounds.max) throw new UsageError(`--${name} must be at most ${bounds.max}`, command);
  return number;
}

/** Exactly one positional argument (the text, prompt or file). */
export function onePositional(command: string, positionals: string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`, command);
  if (positionals.length > 1) {
    throw new UsageError(`expected one ${what}, got ${positionals.length} (quote text that has spaces)`, command);
  }
  return positionals[0] as string;
}

/** No positional arguments allowed. */
export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, command);
}
