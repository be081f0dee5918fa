/**
 * What a sampling heap profile (`HeapProfiler.startSampling`, garbage included) says was
 * allocated, by function and its two callers, largest first: where a round's garbage comes
 * from (the GC work it costs is CPU of the round).
 *
 * `npx tsx bench/tools/summarize-allocations.ts file.heapprofile [rows]`
 * (`SESSION_COST_ALLOC=dir npx tsx bench/session-cost.ts 1000` writes one per side)
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: Node[];
}
interface Profile {
  head: Node;
  samples: { nodeId: number; size: number }[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: summarize-allocations.ts file.heapprofile [rows]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const bytesAt = new Map<number, number>();
for (const sample of profile.samples) bytesAt.set(sample.nodeId, (bytesAt.get(sample.nodeId) ?? 0) + sample.size);

const bySite = new Map<string, number>();
let total = 0;
const walk = (node: Node, callers: string[]): void => {
  const frame = node.callFrame;
  const name = frame.functionName || '(anonymous)';
  const where = frame.url === '' ? '' : ` ${frame.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${frame.lineNumber + 1}`;
  const bytes = bytesAt.get(node.id) ?? 0;
  total += bytes;
  const site = `${name}${where}  <=  ${callers.slice(-2).reverse().join(' <= ')}`;
  bySite.set(site, (bySite.get(site) ?? 0) + bytes);
  for (const child of node.children) walk(child, [...callers, name]);
};
walk(profile.head, []);
console.log(`allocated: ${(total / 1e6).toFixed(2)} MB`);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(rowsArg ?? 25))) {
  console.log(`${(bytes / 1e3).toFixed(0).padStart(7)} KB  ${site}`);
}
