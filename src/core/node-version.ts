/**
 * The Node.js versions rxvoice runs on (`engines` in package.json: >= 20.19), checked when
 * the main entry and the CLI load, so an older Node gets one clear sentence instead of a
 * missing export deep in the import graph.
 */

/** Oldest supported Node.js version, as [major, minor]. */
export const MIN_NODE_VERSION = [20, 19] as const;

/** The message for an unsupported Node.js `version`, or undefined when it is supported (or not Node). */
export function nodeVersionProblem(version: string | undefined): string | undefined {
  if (version === undefined) return undefined;
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  const [minMajor, minMinor] = MIN_NODE_VERSION;
  if (major > minMajor || (major === minMajor && minor >= minMinor)) return undefined;
  return `rxvoice needs Node ${minMajor}.${minMinor} or later; this is ${version}`;
}

/** Throw an `Error` naming both versions when this Node.js is older than 20.19. */
export function assertNodeVersion(version: string | undefined = globalThis.process?.versions?.node): void {
  const problem = nodeVersionProblem(version);
  if (problem !== undefined) throw new Error(problem);
}

assertNodeVersion();
