/**
 * System tools a suite needs (a browser, a Redis server). `requireTool(tool, suite)` finds
 * one and returns its path. When it is missing:
 * - under CI (`CI=true`) it throws, so the suite's file fails and the run fails (CI
 *   installs every tool, see .ci/run; a missing one is a broken CI, not a reason to skip);
 * - outside CI it prints one line saying what is skipped and why, and returns `undefined`
 *   (use it with `describe.skipIf(!path)`).
 *
 * ```ts
 * const CHROMIUM = requireTool('chromium', 'captions UI');
 * describe.skipIf(!CHROMIUM)('captions UI in headless Chromium', () => { ... });
 * ```
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The tools suites may need, each with its path override and the command names looked for on PATH. */
export const TOOLS = {
  chromium: { env: 'CHROMIUM_PATH', commands: ['chromium', 'chromium-browser'], apt: 'chromium' },
  'redis-server': { env: 'REDIS_SERVER_PATH', commands: ['redis-server'], apt: 'redis-server' },
} as const;
export type Tool = keyof typeof TOOLS;

/** Whether this is a CI run (`CI` set to `true` or `1`, as CI services do). */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['true', '1'].includes((env['CI'] ?? '').trim().toLowerCase());
}

function isExecutable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The tool's path: its environment override when set, else the first command found on PATH. */
export function findTool(tool: Tool, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const { env: override, commands } = TOOLS[tool];
  const given = env[override];
  if (given !== undefined && given !== '') return isExecutable(given) ? given : undefined;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    for (const command of commands) {
      const path = join(dir, command);
      if (isExecutable(path)) return path;
    }
  }
  return undefined;
}

/**
 * The one skip policy: `available` true returns true; false throws under CI (naming
 * `what` the suite needs and `hint`), else prints one SKIPPED line and returns false.
 * For what a suite needs that is not a system tool (an optional package, say):
 * `it.skipIf(!needs(mp3Available(), 'the mp3 encoder', 'sinks: mp3 live'))(...)`.
 */
export function needs(
  available: boolean,
  what: string,
  suite: string,
  hint = 'CI must provide it',
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.warn(line),
): boolean {
  if (available) return true;
  if (isCI(env)) throw new Error(`${suite} needs ${what}; ${hint}`);
  log(`SKIPPED: ${suite}: ${what} not available (under CI=true this fails)`);
  return false;
}

/**
 * The path of `tool` for the suite named `suite`; missing: throws under CI, else prints
 * one line (through `log`) and returns `undefined`.
 */
export function requireTool(
  tool: Tool,
  suite: string,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (line) => console.warn(line),
): string | undefined {
  const path = findTool(tool, env);
  if (path !== undefined) return path;
  const { env: override, commands, apt } = TOOLS[tool];
  const where = env[override] ? `${override}=${env[override]} is not an executable` : `no ${commands.join(' or ')} on PATH and ${override} not set`;
  needs(false, `${tool} (${where})`, suite, `CI must install it (apt-get install ${apt})`, env, log);
  return undefined;
}
