/**
 * The system-tool check of test/setup/tools.ts: a tool found on PATH or through its
 * override is returned; a missing one fails under CI=true and is skipped with one line
 * outside CI.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTool, isCI, needs, requireTool } from '../setup/tools.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-tools-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('requireTool', () => {
  it('finds a tool on PATH, and through its override, only when executable', () => {
    const binDir = mkdtempSync(join(dir, 'path-'));
    writeFileSync(join(binDir, 'redis-server'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(binDir, 'chromium'), 'not executable', { mode: 0o644 });
    const env = { PATH: `${mkdtempSync(join(dir, 'other-'))}:${binDir}` };
    expect(findTool('redis-server', env)).toBe(join(binDir, 'redis-server'));
    expect(findTool('chromium', env)).toBeUndefined();
    const browser = join(binDir, 'my-browser');
    writeFileSync(browser, '#!/bin/sh\n', { mode: 0o755 });
    expect(findTool('chromium', { ...env, CHROMIUM_PATH: browser })).toBe(browser);
    // an override that is not there is not replaced by a PATH lookup
    expect(findTool('redis-server', { ...env, REDIS_SERVER_PATH: join(binDir, 'nope') })).toBeUndefined();
  });

  it('missing under CI=true: throws, naming the tool and the suite', () => {
    const lines: string[] = [];
    const env = { PATH: mkdtempSync(join(dir, 'none-')), CI: 'true' };
    expect(isCI(env)).toBe(true);
    expect(() => requireTool('chromium', 'captions UI', env, (l) => lines.push(l))).toThrow(/captions UI needs chromium .*apt-get install chromium/);
    expect(() => requireTool('redis-server', 'batch queue', { ...env, CI: '1' }, (l) => lines.push(l))).toThrow(/batch queue needs redis-server/);
    expect(lines).toEqual([]);
  });

  it('missing outside CI: one line, and undefined (the suite skips)', () => {
    const lines: string[] = [];
    const env = { PATH: mkdtempSync(join(dir, 'none-')), CI: 'false' };
    expect(isCI(env)).toBe(false);
    expect(requireTool('chromium', 'captions UI', env, (l) => lines.push(l))).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^SKIPPED: captions UI: chromium \(no chromium or chromium-browser on PATH and CHROMIUM_PATH not set\) not available \(under CI=true this fails\)$/);
    // found: no line (the control)
    const binDir = mkdtempSync(join(dir, 'path-'));
    writeFileSync(join(binDir, 'chromium'), '#!/bin/sh\n', { mode: 0o755 });
    expect(requireTool('chromium', 'captions UI', { PATH: binDir, CI: 'true' }, (l) => lines.push(l))).toBe(join(binDir, 'chromium'));
    expect(lines).toHaveLength(1);
  });

  it('needs(): the same policy for anything else a suite needs', () => {
    const lines: string[] = [];
    expect(needs(true, 'the mp3 encoder', 'mp3 suite', undefined, { CI: 'true' }, (l) => lines.push(l))).toBe(true);
    expect(() => needs(false, 'the mp3 encoder', 'mp3 suite', 'install the dev dependencies', { CI: 'true' }, (l) => lines.push(l))).toThrow(
      'mp3 suite needs the mp3 encoder; install the dev dependencies',
    );
    expect(lines).toEqual([]);
    expect(needs(false, 'the mp3 encoder', 'mp3 suite', undefined, {}, (l) => lines.push(l))).toBe(false);
    expect(lines).toEqual(['SKIPPED: mp3 suite: the mp3 encoder not available (under CI=true this fails)']);
  });
});
