/**
 * Profiling harness of the long-stream benchmark, one side only (default ours):
 * `node --cpu-prof --import tsx bench/tools/profile-long-stream.ts [ours|peer] [seconds] [runs]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ours, peer } from '../long-stream.js';

const who = process.argv[2] === 'peer' ? 'peer' : 'ours';
const seconds = Number(process.argv[3] ?? 3600);
const runs = Number(process.argv[4] ?? 3);
const dir = await mkdtemp(join(tmpdir(), 'rxvoice-prof-'));
try {
  for (let i = 0; i < runs; i++) {
    const path = join(dir, `${who}-${i}.wav`);
    const r = await (who === 'ours' ? ours : peer)(path, seconds);
    console.log(`${who}: ${r.ms.toFixed(0)} ms, CPU ${r.cpuMs.toFixed(0)} ms`);
    await rm(path, { force: true });
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
