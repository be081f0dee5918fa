/**
 * Profiling harness of one concurrency level in this process:
 * `node --cpu-prof --import tsx bench/tools/profile-concurrency.ts [ours|peer] [sessions]`.
 */
import { level } from '../concurrency.js';

const who = process.argv[2] === 'peer' ? 'peer' : 'ours';
const sessions = Number(process.argv[3] ?? 1000);
console.log(await level(who, sessions, 60_000));
