/**
 * Self samples by function of two V8 `.cpuprofile`s side by side (A minus B, largest first):
 * `npx tsx bench/tools/diff-profiles.ts a.cpuprofile b.cpuprofile [N]`.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
function selfByFunction(file: string): Map<string, number> {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const n = byId.get(id);
    if (!n) return;
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'nm:').replace(/^\/tmp\/pb\//, '');
    const key = `${n.callFrame.functionName || '(anon)'} ${url}:${n.callFrame.lineNumber + 1}`;
    // Sample counts (x the mean interval), not time deltas: a descheduled process (a busy
    // machine) inflates the delta of whatever sample comes next.
    out.set(key, (out.get(key) ?? 0) + 1);
  });
  return out;
}
const [a, b] = [process.argv[2], process.argv[3]];
if (!a || !b) throw new Error('usage: diff-profiles a b [N]');
const top = Number(process.argv[4] ?? 40);
const A = selfByFunction(a);
const B = selfByFunction(b);
const keys = new Set([...A.keys(), ...B.keys()]);
const rows = [...keys].map((k) => ({ k, a: A.get(k) ?? 0, b: B.get(k) ?? 0 })).sort((x, y) => y.a - y.b - (x.a - x.b));
for (const r of rows.slice(0, top)) {
  console.log(`${String(r.a - r.b).padStart(8)} samples  (${r.a} vs ${r.b})  ${r.k}`);
}
