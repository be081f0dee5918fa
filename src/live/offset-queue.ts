/**
 * The speech ledger's sentence ends (ledger.ts): offsets into the text sent, ascending, dropped
 * from the front as segments complete.
 */

/** A position: an absolute offset (UTF-16 code units) into all the text sent since the ledger began. */
export type Offset = number;

/** Ascending offsets, dropped from the front in amortized constant time. */
export class OffsetQueue {
  private items: Offset[] = [];
  private head = 0;

  push(offset: Offset): void {
    if (this.items.length === 0) this.items = [offset]; // no 16 spare slots for a sentence's one end
    else this.items.push(offset);
  }

  first(predicate: (offset: Offset) => boolean): Offset | undefined {
    for (let i = this.head; i < this.items.length; i++) if (predicate(this.items[i] as Offset)) return this.items[i];
    return undefined;
  }

  /** The greatest offset, or -1 when there is none. */
  last(): Offset {
    return this.items.length > this.head ? (this.items[this.items.length - 1] as Offset) : -1;
  }

  has(offset: Offset): boolean {
    return this.items.indexOf(offset, this.head) !== -1;
  }

  /** Drop the offsets at or before `offset`. */
  dropThrough(offset: Offset): void {
    while (this.head < this.items.length && (this.items[this.head] as Offset) <= offset) this.head++;
    if (this.head === this.items.length) {
      // all dropped (a session between sentences): no storage kept
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Drop the offsets after `offset`. */
  dropAfter(offset: Offset): void {
    while (this.items.length > this.head && (this.items[this.items.length - 1] as Offset) > offset) this.items.pop();
  }
}
