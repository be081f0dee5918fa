/**
 * Finding a system audio player on PATH, without spawning `which`.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { SinkError } from './errors.js';

/** A command line that plays audio read from its stdin (or, with `file`, from a file). */
export interface PlayerCommand {
  command: string;
  args?: readonly string[];
  /**
   * The player reads a file, not stdin (macOS `afplay`): each segment (or chunk) is
   * written to a temporary file whose path is appended to `args`, played, then removed.
   * Default false.
   */
  file?: boolean;
}

/** What is streamed to the player: WAV (header + PCM) or a compressed format's bytes. */
export type PlayerInput = 'wav' | 'mp3' | 'flac' | 'aac';

/** A player `toAudioDevice` may look for on PATH, and how to call it for a stream format. */
export interface PlayerCandidate {
  /** Executable name looked up on PATH. */
  name: string;
  /** Arguments for a stream of `input` on stdin; undefined when this player cannot play it. */
  args(input: PlayerInput): readonly string[] | undefined;
  /** Plays a file (its path appended to the arguments), not stdin: see `PlayerCommand.file`. */
  file?: boolean;
}

/**
 * The players looked for, in preference order: `aplay`, `paplay`, `ffplay`, `play` (sox)
 * read the stream on stdin; `afplay` (macOS, last) reads files, so it plays segment by
 * segment (one temporary file each), with a short gap between segments.
 */
export const DEFAULT_PLAYERS: readonly PlayerCandidate[] = [
  { name: 'aplay', args: (input) => (input === 'wav' ? ['-q', '-t', 'wav', '-'] : undefined) },
  { name: 'paplay', args: (input) => (input === 'wav' ? [] : undefined) },
  { name: 'ffplay', args: () => ['-nodisp', '-autoexit', '-loglevel', 'error', '-i', '-'] },
  { name: 'play', args: (input) => (input === 'aac' ? undefined : ['-q', '-t', input, '-']) },
  { name: 'afplay', args: () => [], file: true },
];

/** The full path of the executable `name` on `PATH` (checked with `fs.access(X_OK)`), or undefined. */
export async function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (isAbsolute(name) || name.includes('/')) {
    return (await isExecutable(name)) ? name : undefined;
  }
  const path = env.PATH ?? env.Path ?? '';
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const directory of path.split(delimiter)) {
    if (!directory) continue;
    for (const extension of extensions) {
      const candidate = join(directory, name + extension);
      if (await isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first player of `candidates` found on PATH that can play `input`, as an absolute
 * command. Throws `SinkError` (reason `'no_player'`) naming every player looked for.
 */
export async function findPlayer(
  input: PlayerInput,
  env: NodeJS.ProcessEnv = process.env,
  candidates: readonly PlayerCandidate[] = DEFAULT_PLAYERS,
): Promise<Required<PlayerCommand>> {
  const able = candidates.filter((candidate) => candidate.args(input) !== undefined);
  for (const candidate of able) {
    const command = await findExecutable(candidate.name, env);
    if (command) return { command, args: candidate.args(input) ?? [], file: candidate.file === true };
  }
  const names = able.map((candidate) => candidate.name).join(', ');
  throw new SinkError(
    'no_player',
    `toAudioDevice found no player for ${input} on PATH (looked for: ${names || 'none able to play it'}). ` +
      `Install one (alsa-utils, pulseaudio-utils, ffmpeg or sox) or pass { player: { command, args } }.`,
  );
}
