/**
 * The order of a session's segments, as the contract fixes it: the service numbers a
 * session's segments 0, 1, 2, ...; one segment is in progress at a time, from
 * `segment.start` to `segment.done`; `segment.skipped` ends the one in progress or stands
 * for the next one. Each step returns the protocol error's message when the frame breaks
 * that order (a segment may be missing: nothing after it could be mapped onto the text),
 * and otherwise records it.
 */

/** Where a socket's segments are (a live `Connection` is one). */
export interface SegmentOrderState {
  /** Last segment id seen from the server on this socket (-1 before any). */
  lastServerId: number;
  /** Server id of the segment started and not yet done. */
  inProgress: number | undefined;
}

/** `segment.start`: the next id, with no segment in progress. */
export function segmentStart(state: SegmentOrderState, id: number): string | undefined {
  if (state.inProgress !== undefined) return `segment.start ${id} before segment.done ${state.inProgress}`;
  if (id !== state.lastServerId + 1) return outOfOrder(state, id);
  state.lastServerId = id;
  state.inProgress = id;
  return undefined;
}

/** `segment.done`: the segment in progress. */
export function segmentDone(state: SegmentOrderState, id: number): string | undefined {
  if (state.inProgress !== id) return `segment.done ${id} for a segment not started`;
  state.inProgress = undefined;
  return undefined;
}

/** `segment.skipped`: the segment in progress, or, with none, the next id. */
export function segmentSkipped(state: SegmentOrderState, id: number): string | undefined {
  if (state.inProgress !== undefined && state.inProgress !== id) return `segment.skipped ${id} while segment ${state.inProgress} is in progress`;
  if (state.inProgress === undefined && id !== state.lastServerId + 1) return outOfOrder(state, id);
  state.lastServerId = id;
  state.inProgress = undefined;
  return undefined;
}

function outOfOrder(state: SegmentOrderState, id: number): string {
  return `Segment id ${id} does not follow ${state.lastServerId} (expected ${state.lastServerId + 1})`;
}
