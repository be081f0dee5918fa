/** Cut `input` (text or bytes) at the positions (each taken modulo `length + 1`, sorted, deduplicated). */
export function cut<T extends { length: number; slice(a: number, b?: number): T }>(input: T, cuts: number[]): T[] {
  const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
  const out: T[] = [];
  let last = 0;
  for (const p of points) {
    out.push(input.slice(last, p));
    last = p;
  }
  out.push(input.slice(last));
  return out;
}
