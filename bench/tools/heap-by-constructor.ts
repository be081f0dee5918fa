/**
 * Self size and count by constructor (closures by function name) in a heap snapshot, and the
 * difference between two snapshots, divided by a session count: where a session's bytes are.
 *
 * `npx tsx bench/tools/heap-by-constructor.ts ours.heapsnapshot peer.heapsnapshot [sessions] [rows]`
 */
import { readFileSync } from 'node:fs';

interface Totals {
  count: number;
  size: number;
}

function byConstructor(path: string): Map<string, Totals> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [number, number, number];
  const totals = new Map<string, Totals>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt] as number] as string;
    const name = snapshot.strings[snapshot.nodes[i + nameAt] as number] as string;
    const key = type === 'object' || type === 'closure' ? `${type} ${name}` : type === 'string' || type === 'concatenated string' || type === 'sliced string' ? 'string' : `${type} ${type === 'array' || type === 'hidden' || type === 'code' ? name.slice(0, 40) : ''}`;
    const entry = totals.get(key) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += snapshot.nodes[i + sizeAt] as number;
    totals.set(key, entry);
  }
  return totals;
}

const [oursPath, peerPath, sessionsArg, rowsArg] = process.argv.slice(2);
if (!oursPath) throw new Error('usage: heap-by-constructor.ts ours.heapsnapshot [peer.heapsnapshot] [sessions] [rows]');
const sessions = Number(sessionsArg ?? 1) || 1;
const ours = byConstructor(oursPath);
const peer = peerPath ? byConstructor(peerPath) : new Map<string, Totals>();
const keys = new Set([...ours.keys(), ...peer.keys()]);
const rows = [...keys].map((key) => {
  const a = ours.get(key) ?? { count: 0, size: 0 };
  const b = peer.get(key) ?? { count: 0, size: 0 };
  return { key, count: (a.count - b.count) / sessions, bytes: (a.size - b.size) / sessions };
});
rows.sort((x, y) => y.bytes - x.bytes);
const total = rows.reduce((sum, r) => sum + r.bytes, 0);
console.log(`difference per session: ${(total / 1024).toFixed(2)} KB (self sizes, whole heap)`);
for (const r of rows.slice(0, Number(rowsArg ?? 40))) console.log(`${r.bytes.toFixed(0).padStart(7)} B ${r.count.toFixed(2).padStart(7)}  ${r.key}`);
