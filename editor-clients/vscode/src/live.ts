/**
 * Live sessions (protocol.md "Live sessions: the per-user server"): every notification of a
 * session carries `seq`, one more than the last; `agent/getMessages` answers the `seq` its
 * messages reflect, and `agent/attach {since: seq}` replays what came after it, in order,
 * before the live ones. The pure part: what to do with each notification.
 */

/** Where the controller stands with the current session's `seq`. */
export interface SeqState {
  /** The `seq` of the last notification applied; `undefined`: not known (the next one is taken as it comes). */
  last: number | undefined;
  /**
   * A sync is under way and `agent/getMessages` has not answered yet: the transcript is about to
   * be replaced by its messages, so the notifications meanwhile are dropped (the attach brings
   * again those the messages lack).
   */
  syncing: boolean;
  /** An `agent/attach {since}` is in flight: its replay brings, in order, what comes before a later live one. */
  attaching: boolean;
}

export const UNKNOWN_SEQ: SeqState = { last: undefined, syncing: false, attaching: false };

/**
 * What to do with a notification of the current session whose `seq` is `seq` (`undefined`:
 * a server without `seq`):
 * - `apply`: the next one (or the first one known): apply it;
 * - `duplicate`: applied already (a replay of one that came live meanwhile): drop it;
 * - `skip`: drop it, something brings it again (the sync's messages, or the attach's replay);
 * - `gap`: some were lost: drop it and sync (reload the transcript and attach since its `seq`).
 */
export type SeqVerdict = 'apply' | 'duplicate' | 'skip' | 'gap';

export function seqVerdict(state: SeqState, seq: number | undefined): SeqVerdict {
  if (seq === undefined) return 'apply';
  if (state.syncing) return 'skip';
  if (state.last === undefined || seq === state.last + 1) return 'apply';
  if (seq <= state.last) return 'duplicate';
  return state.attaching ? 'skip' : 'gap';
}

/** The `seq` of a notification's params, if it has one. */
export function seqOf(params: unknown): number | undefined {
  const seq = (params as { seq?: unknown } | null)?.seq;
  return typeof seq === 'number' && Number.isFinite(seq) ? seq : undefined;
}

/** The notice when the panel shows a live session again (after a reload, or when the connection came back). */
export function reattachedNotice(name: string, messages: number, running: boolean): string {
  const count = `${messages} ${messages === 1 ? 'message' : 'messages'}`;
  return running
    ? `Reattached to ${name} (${count}): the agent is still working.`
    : `Reattached to ${name} (${count}).`;
}
