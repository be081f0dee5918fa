/**
 * Self size and count by constructor (closures by function name) in a heap snapshot, and the
 * difference between two snapshots, divided by a session count: where a session's bytes are.
 *
 * `npx tsx bench/tools/heap-by-constructor.ts ours.heapsnapshot peer.heapsnapshot [sessions] [rows] [--owners]`
 *
 * With `--owners`, closures are named with their source (`closure onMessage @ ws/lib/event-target.js:222`)
 * and the nodes that belong to another one (property and element arrays, contexts, shapes,
 * code) with the node that holds them (`array (object properties) <- object LiveSession`),
 * so that "arrays 1.4 KB a session" says whose arrays.
 */
import { readFileSync } from 'node:fs';

interface Totals {
  count: number;
  size: number;
}

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]]; location_fields?: string[] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations?: number[];
}

/** Node types that are parts of another node: named by their holder with `--owners`. */
const PARTS = new Set(['array', 'hidden', 'code', 'object shape']);
const PART_OBJECTS = /^(system \/ Context|system \/ PropertyArray|Object|Array)$/;

function byConstructor(path: string, owners: boolean): Map<string, Totals> {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const meta = snapshot.snapshot.meta;
  const fields = meta.node_fields;
  const types = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const width = fields.length;
  const edgeWidth = meta.edge_fields.length;
  const { nodes, edges, strings } = snapshot;
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) => fields.indexOf(f)) as [number, number, number, number];
  const typeOf = (node: number): string => types[nodes[node + typeAt] as number] as string;
  const nameOf = (node: number): string => strings[nodes[node + nameAt] as number] as string;
  const baseKey = (node: number): string => {
    const type = typeOf(node);
    const name = nameOf(node);
    if (type === 'object' || type === 'closure') return `${type} ${name}`;
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return 'string';
    return `${type} ${type === 'array' || type === 'hidden' || type === 'code' ? name.slice(0, 40) : ''}`;
  };
  // first holder of each node (by a non-weak edge) and each closure's source, for --owners
  const holder = new Map<number, number>();
  const source = new Map<number, string>();
  if (owners) {
    const firstEdge = new Map<number, number>();
    for (let node = 0, edge = 0; node < nodes.length; node += width) {
      firstEdge.set(node, edge);
      const count = nodes[node + edgeCountAt] as number;
      for (let e = 0; e < count; e++, edge += edgeWidth) {
        const to = edges[edge + 2] as number;
        if (edgeTypes[edges[edge] as number] !== 'weak' && !holder.has(to)) holder.set(to, node);
      }
    }
    /** The node that `node`'s edge named `name` points to. */
    const follow = (node: number | undefined, ...names: string[]): number | undefined => {
      if (node === undefined) return undefined;
      const first = firstEdge.get(node) ?? 0;
      const count = nodes[node + edgeCountAt] as number;
      for (let at = first; at < first + count * edgeWidth; at += edgeWidth) {
        const kind = edgeTypes[edges[at] as number];
        if (kind !== 'element' && kind !== 'hidden' && names.includes(strings[edges[at + 1] as number] as string)) return edges[at + 2] as number;
      }
      return undefined;
    };
    const locFields = meta.location_fields ?? [];
    const locations = snapshot.locations ?? [];
    for (let i = 0; i < locations.length; i += locFields.length) {
      const node = locations[i] as number;
      const script = follow(follow(node, 'shared'), 'script', 'script_or_debug_info');
      const url = script === undefined ? undefined : follow(script, 'name');
      const file = url === undefined ? `script ${locations[i + 1]}` : nameOf(url).replace(/^.*\/node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/');
      // the code's first characters (tsx compiles a module to few lines: the line alone says little)
      const text = script === undefined ? undefined : follow(script, 'source');
      const line = locations[i + 2] as number;
      const column = locations[i + 3] as number;
      const code = text === undefined ? '' : codeAt(nameOf(text), line, column);
      source.set(node, `${file}:${line + 1}${code === '' ? '' : ` \`${code}\``}`);
    }
  }
  /** The node's key; with --owners, a part is named by its holders (up to three levels). */
  const keyOf = (node: number, depth = 0): string => {
    const key = baseKey(node);
    if (!owners) return key;
    const type = typeOf(node);
    if (type === 'closure') return `${key} @ ${source.get(node) ?? '?'}`;
    const owner = holder.get(node);
    if (depth < 3 && owner !== undefined && (PARTS.has(type) || (type === 'object' && PART_OBJECTS.test(nameOf(node))))) return `${key} <- ${keyOf(owner, depth + 1)}`;
    return key;
  };
  const totals = new Map<string, Totals>();
  for (let node = 0; node < nodes.length; node += width) {
    const key = keyOf(node);
    const entry = totals.get(key) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += nodes[node + sizeAt] as number;
    totals.set(key, entry);
  }
  return totals;
}

/** Up to 48 characters of `source` from a zero-based line and column, on one line. */
function codeAt(source: string, line: number, column: number): string {
  let at = 0;
  for (let l = 0; l < line && at !== -1; l++) at = source.indexOf('\n', at) + 1 || -1;
  return at === -1 ? '' : source.slice(at + column, at + column + 48).replace(/\s+/g, ' ');
}

const args = process.argv.slice(2);
const owners = args.includes('--owners');
const [oursPath, peerPath, sessionsArg, rowsArg] = args.filter((a) => a !== '--owners');
if (!oursPath) throw new Error('usage: heap-by-constructor.ts ours.heapsnapshot [peer.heapsnapshot] [sessions] [rows] [--owners]');
const sessions = Number(sessionsArg ?? 1) || 1;
const ours = byConstructor(oursPath, owners);
const peer = peerPath ? byConstructor(peerPath, owners) : new Map<string, Totals>();
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
