/**
 * Limits against hostile services and crashes: a live service that never ends a
 * segment (concatSegments' per-segment cap), and temporary files left by a writer
 * killed mid-write (removed on the next write once stale).
 */
import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { from, lastValueFrom, of } from 'rxjs';
import type { WebSocket as WsSocket } from 'ws';
import { LimitExceededError } from '../../src/core/errors.js';
import { concatSegments } from '../../src/operators/concatSegments.js';
import { toFile, toWavFile } from '../../src/sinks/index.js';
import { removeStaleTemporaryFiles, STALE_TEMP_AGE_MS, temporaryPathFor } from '../../src/sinks/atomicFile.js';
import { hostileSuite, rejectionOf, wsServer } from './helpers.js';
import { samples16, wavSegment } from '../fixtures/sinkFixtures.js';

const KEY = 'sk-rxv-hostile-limits-0123456789';
const { cleanups, clientOn } = hostileSuite(KEY);

describe('a live service that never ends a segment', () => {
  it('concatSegments stops at maxSegmentBytes with LimitExceededError; the session is closed, little was sent', async () => {
    let written = 0;
    let clientGone = false;
    const server = await wsServer((socket: WsSocket) => {
      socket.on('close', () => {
        clientGone = true;
      });
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's1', run_id: 1, config: { output_format: 'wav' } }));
        socket.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hello there.' }));
        const frame = Buffer.alloc(64 * 1024, 1);
        const pump = (): void => {
          // endless audio for segment 0 (bounded here at 512 MiB), respecting backpressure
          while (!clientGone && written < 512 * 1024 * 1024 && socket.bufferedAmount < 4 * 1024 * 1024) {
            written += frame.length;
            socket.send(frame);
          }
          if (!clientGone && written < 512 * 1024 * 1024) setTimeout(pump, 1);
        };
        pump();
      });
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.wsUrl.replace('ws:', 'http:'));
    const cap = 4 * 1024 * 1024;
    const error = await rejectionOf(lastValueFrom(of('Hello there.').pipe(client.speak({ voice_id: 1 }), concatSegments({ maxSegmentBytes: cap }))));
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ code: 'limit', option: 'maxSegmentBytes', limit: cap });
    for (let waited = 0; !clientGone && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(clientGone).toBe(true);
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('temporary files left by a writer killed mid-write', () => {
  it('stale ones of our naming are removed on the next write; fresh ones and other files stay', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxvoice-stale-'));
    try {
      const target = join(dir, 'answer.wav');
      const old = Date.now() / 1000 - (STALE_TEMP_AGE_MS / 1000 + 60);
      const stale = [temporaryPathFor(target), temporaryPathFor(target), temporaryPathFor(join(dir, 'other.mp3'))];
      const fresh = temporaryPathFor(target);
      const foreign = [join(dir, '.answer.wav.not-ours.tmp'), join(dir, 'answer.wav.tmp'), join(dir, 'notes.txt')];
      for (const path of [...stale, fresh, ...foreign]) await writeFile(path, Buffer.alloc(1000));
      for (const path of [...stale, ...foreign]) await utimes(path, old, old);
      const before = (await readdir(dir)).sort();
      expect(before).toHaveLength(7); // control: all there before the write

      const pcm = samples16(64);
      await lastValueFrom(from([wavSegment(0, pcm)]).pipe(toWavFile(target)));
      const after = (await readdir(dir)).sort();
      expect(after).toEqual(
        [...[fresh, ...foreign].map((p) => p.slice(dir.length + 1)), 'answer.wav'].sort(),
      );
      // toFile does the same
      const again = temporaryPathFor(join(dir, 'x.mp3'));
      await writeFile(again, 'x');
      await utimes(again, old, old);
      await lastValueFrom(from([new Uint8Array([1, 2, 3])]).pipe(toFile(join(dir, 'raw.bin'), { join: false })));
      expect(await readdir(dir)).not.toContain(again.slice(dir.length + 1));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('removeStaleTemporaryFiles never throws: a missing directory gives an empty list', async () => {
    expect(await removeStaleTemporaryFiles(join(tmpdir(), 'rxvoice-no-such-dir-7f3a'))).toEqual([]);
  });
});
