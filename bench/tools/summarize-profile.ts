/**
 * Summarize a V8 `.cpuprofile`: self time by function and by file (top N), total time
 * by file for frames under a path filter. `npx tsx bench/tools/summarize-profile.ts <file> [N] [filter]`.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
const file = process.argv[2];
if (!file) throw new Error('usage: summarize-profile <file.cpuprofile> [N] [filter]');
const top = Number(process.argv[3] ?? 30);
const filter = process.argv[4];
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const short = (url: string): string => url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'nm:').replace('/work/main/', '');
const fnSelf = new Map<string, number>();
const fileSelf = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id);
  if (!n) continue;
  const key = `${n.callFrame.functionName || '(anon)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  fnSelf.set(key, (fnSelf.get(key) ?? 0) + t);
  const f = short(n.callFrame.url) || n.callFrame.functionName;
  fileSelf.set(f, (fileSelf.get(f) ?? 0) + t);
  if (filter) {
    // inclusive time of frames whose url matches the filter (counted once per sample stack)
    const seen = new Set<string>();
    let cur: number | undefined = id;
    while (cur !== undefined) {
      const node = byId.get(cur);
      if (node && node.callFrame.url.includes(filter)) {
        const k = `${node.callFrame.functionName || '(anon)'} ${short(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
        if (!seen.has(k)) {
          seen.add(k);
          inclusive.set(k, (inclusive.get(k) ?? 0) + t);
        }
      }
      cur = parent.get(cur);
    }
  }
}
const print = (title: string, map: Map<string, number>): void => {
  console.log(`\n${title}`);
  for (const [k, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(t / 1000).toFixed(1).padStart(9)} ms ${((100 * t) / total).toFixed(1).padStart(5)} %  ${k}`);
  }
};
console.log(`total sampled: ${(total / 1000).toFixed(0)} ms`);
print('self time by file', fileSelf);
print('self time by function', fnSelf);
if (filter) print(`inclusive time, frames under ${filter}`, inclusive);
