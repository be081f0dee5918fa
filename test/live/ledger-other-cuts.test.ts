/**
 * A service that cuts its segments where our sentence rules do not (after an ellipsis, after
 * a title), and reports each segment's text word for word: the ledger follows its cuts, so a
 * reconnect re-sends exactly the text not yet spoken, nothing lost, nothing twice.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SpeechLedger } from '../../src/live/ledger.js';
import { cut } from '../fixtures/cut.js';

/** A naive service: a segment ends after a run of `.!?` followed by whitespace (or at the end). */
function naiveSegments(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(/[.!?]+(?=\s)/g)) {
    const end = m.index + m[0].length;
    out.push(text.slice(last, end));
    last = end;
  }
  if (text.slice(last).trim() !== '') out.push(text.slice(last));
  return out;
}

describe('SpeechLedger: a service that cuts elsewhere, word for word', () => {
  /** A ledger sent `Four... yes. Fi` + `ve has it.`, whose service reported `segments` (the last one cut off). */
  function cutOffAfter(...segments: string[]): SpeechLedger {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    ledger.push('Four... yes. Fi');
    ledger.push('ve has it.');
    segments.forEach((text, id) => {
      ledger.segmentStarted(id, text);
      if (id < segments.length - 1) ledger.segmentDelivered(id);
    });
    ledger.abortInProgress();
    return ledger;
  }

  it('an ellipsis the service ends at: the segments after it are where it said (control: a reported text that is no prefix keeps the guess)', () => {
    const late = cutOffAfter('Four...', ' yes.', ' Five has it.');
    expect(late.resend().trim()).toBe('Five has it.');
    expect(late.mismatches).toBe(0);
    // cut off inside `yes.`: it is re-sent, not lost
    expect(cutOffAfter('Four...', ' yes.').resend().trim()).toBe('yes. Five has it.');
    // control: words the service changed (no prefix of the sent text) are still matched to our sentence end
    const changed = new SpeechLedger({ locale: 'en-us' });
    changed.push('Four... yes. Five has it.');
    changed.segmentStarted(0, 'Four dots');
    changed.segmentDelivered(0);
    expect(changed.unspoken().trim()).toBe('Five has it.');
  });

  it('a segment the service said up to a later chunk end, past a stop our rules cut at (`big 3.` | `5 Dr.`): it ends at that chunk end', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    for (const chunk of ['big 3.', '5 Dr.', ' Four.']) ledger.push(chunk);
    ledger.segmentStarted(0, 'big 3.5 Dr.');
    ledger.segmentDelivered(0);
    ledger.segmentStarted(1, ' Four.');
    ledger.abortInProgress();
    expect(ledger.resend().trim()).toBe('Four.');
  });

  it('property: for any chunking and any drop, what was delivered and what is re-sent are the text, in order, once', () => {
    const words = fc.constantFrom('Four', 'yes', 'Dr.', 'Smith', 'e.g.', 'the', 'U.S.', 'is', 'big', '3.5', 'wait...', 'ok!', 'Why?', 'No.', 'Mr.', 'Jones');
    fc.assert(
      fc.property(fc.array(words, { minLength: 2, maxLength: 24 }), fc.array(fc.nat(), { maxLength: 8 }), fc.nat(), (list, cuts, dropAt) => {
        const text = `${list.join(' ')}.`;
        const segments = naiveSegments(text);
        const ledger = new SpeechLedger({ locale: 'en-us' });
        for (const chunk of cut(text, cuts)) ledger.push(chunk);
        const delivered = dropAt % segments.length;
        for (let i = 0; i < delivered; i++) {
          ledger.segmentStarted(i, segments[i]!);
          ledger.segmentDelivered(i);
        }
        ledger.segmentStarted(delivered, segments[delivered]!);
        ledger.abortInProgress();
        const spoken = segments.slice(0, delivered).join('');
        expect(ledger.resend().replace(/\s+/g, ' ').trim()).toBe(text.slice(spoken.length).replace(/\s+/g, ' ').trim());
      }),
      { numRuns: 500 },
    );
  });
});
