/**
 * Profiling harness of the long-stream benchmark (ours only, one hour):
 * `node --cpu-prof --import tsx bench/tools/profile-long-stream.ts`.
 */
import { run } from '../long-stream.js';

console.log(await run({ seconds: 3600, runs: 1 }));
