/** The reconnect ledger (src/live/ledger.ts), pure: what was sent, started and finished, and what is unspoken. */
import { describe, expect, it } from 'vitest';
import { SpeechLedger } from '../../src/live/ledger.js';
import { tokens } from './helpers.js';

describe('SpeechLedger', () => {
  it('maps segments onto the pushed text, ignoring whitespace differences', () => {
    const ledger = new SpeechLedger();
    for (const t of tokens('Hello there.  How are you?\n\nFine, thanks. Bye')) ledger.push(t);
    expect(ledger.unspoken()).toBe('Hello there.  How are you?\n\nFine, thanks. Bye');
    ledger.segmentStarted(0, 'Hello there.');
    expect(ledger.unspoken()).toBe('Hello there.  How are you?\n\nFine, thanks. Bye');
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('How are you?\n\nFine, thanks. Bye');
    ledger.segmentStarted(1, ' How are you?');
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('Fine, thanks. Bye');
    ledger.segmentSkipped(2, 'Fine,   thanks.');
    expect(ledger.unspoken()).toBe('Bye');
    ledger.segmentStarted(3, 'Bye');
    ledger.segmentDelivered(3);
    expect(ledger.unspoken()).toBe('');
    expect(ledger.mismatches).toBe(0);
  });

  it('abortInProgress rewinds to the last completed segment', () => {
    const ledger = new SpeechLedger();
    ledger.push('One. Two. Three.');
    ledger.segmentStarted(0, 'One.');
    ledger.segmentDelivered(0);
    ledger.segmentStarted(1, 'Two.');
    expect(ledger.abortInProgress()?.segment_id).toBe(1);
    expect(ledger.unspoken()).toBe('Two. Three.');
    // the new session segments the resent text again, from the start
    ledger.segmentStarted(0, 'Two.');
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('Three.');
  });

  it('ignores a done for a segment that is not in progress, and counts mismatches', () => {
    const ledger = new SpeechLedger();
    ledger.push('abc def');
    ledger.segmentDelivered(7);
    expect(ledger.unspoken()).toBe('abc def');
    // no sentence end: the only place the service could have ended it is the chunk's end
    expect(ledger.segmentStarted(0, 'xyz')).toEqual({ sent: 'abc def', matches: false });
    ledger.segmentDelivered(0);
    expect(ledger.mismatches).toBe(1);
    expect(ledger.unspoken()).toBe('');
  });

  it('a done for another segment than the one in progress completes nothing', () => {
    const ledger = new SpeechLedger();
    ledger.push('One. Two.');
    ledger.segmentStarted(0, 'One.');
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('One. Two.');
    ledger.segmentDelivered(0); // control: the right id completes it
    expect(ledger.unspoken()).toBe('Two.');
  });

  it('a flush that only lengths can place: on a tie the earlier chunk end wins (text re-said rather than lost)', () => {
    const ledger = new SpeechLedger();
    ledger.push('ab');
    ledger.push('cd');
    // no sentence end; "xyz" matches neither chunk end and is 1 from both ("ab", "abcd")
    expect(ledger.segmentStarted(0, 'xyz')).toEqual({ sent: 'ab', matches: false });
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('cd');
    // control: a length nearer the later end chooses it
    const later = new SpeechLedger();
    later.push('ab');
    later.push('cd');
    expect(later.segmentStarted(0, 'wxyz')).toEqual({ sent: 'abcd', matches: false });
  });

  it('a skip of the segment in progress ends it: the skip covers the text that segment started with', () => {
    const ledger = new SpeechLedger();
    ledger.push('One. Two. Three.');
    ledger.segmentStarted(0, 'One.');
    ledger.segmentDelivered(0);
    ledger.segmentStarted(1, 'Two.');
    expect(ledger.segmentSkipped(1, 'Two.')).toEqual({ sent: ' Two.', matches: true });
    expect(ledger.abortInProgress()).toBeUndefined();
    expect(ledger.unspoken()).toBe('Three.');
    // a skip with none in progress stands for the next segment
    expect(ledger.segmentSkipped(2, 'Three.')).toEqual({ sent: ' Three.', matches: true });
    expect(ledger.unspoken()).toBe('');
    expect(ledger.mismatches).toBe(0);
  });

  it('handles surrogate pairs and drops text already spoken (bounded memory)', () => {
    const ledger = new SpeechLedger();
    for (let i = 0; i < 1000; i++) ledger.push(`Sentence 😀 ${i}. `);
    for (let i = 0; i < 999; i++) {
      ledger.segmentStarted(i, `Sentence 😀 ${i}.`);
      ledger.segmentDelivered(i);
    }
    expect(ledger.unspoken()).toBe('Sentence 😀 999. ');
    expect(ledger.mismatches).toBe(0);
    expect((ledger as unknown as { chunks: string[] }).chunks.length).toBeLessThanOrEqual(2);
  });
});

// ---------------------------------------------------------------------------
// Local validation, keys, transport
// ---------------------------------------------------------------------------

