/**
 * The bookkeeping of `agent/reviewEdit` (the permission mode `review`): the reviews
 * pending, oldest first, each settled once (accepted, rejected, or cancelled by the
 * server), and the `agentls-review:` URIs of the two sides of its diff (pure: no
 * `vscode` import, so the unit tests run it as is; `review.ts` is the editor's side).
 */

import type { Hunk, ReviewEditParams, ReviewEditResult } from './protocol';
import type { ReviewInfo } from './view';

/** The scheme of both sides of a review's diff. */
export const REVIEW_SCHEME = 'agentls-review';

export type ReviewSide = 'original' | 'proposed';

export interface PendingReview {
  readonly id: number;
  readonly params: ReviewEditParams;
  /** Settles once: the answer, or `undefined` when the server cancelled the request. */
  readonly answer: Promise<ReviewEditResult | undefined>;
}

interface Entry extends PendingReview {
  settle(answer: ReviewEditResult | undefined): void;
  /** The hunks the user rejected (indexes into `params.hunks`). */
  readonly rejected: Set<number>;
  /** The right side as the user saved it, when they edited it. */
  edited?: string;
}

/** The last segment of a `/`- or `\`-separated path: `m.py` of `src/m.py`. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter((part) => part !== '');
  return parts.at(-1) ?? path;
}

/** The diff editor's title: `m.py: agent's change (review)`. */
export function reviewTitle(params: Pick<ReviewEditParams, 'path'>): string {
  return `${baseName(params.path)}: agent's change (review)`;
}

/**
 * The path of one side's URI: `/<id>/<side>/<path>`. The file's own path comes last, so
 * the diff editor picks the language by its extension and shows its name.
 */
export function reviewUriPath(id: number, side: ReviewSide, path: string): string {
  const tail = path.split(/[\\/]/).filter((part) => part !== '' && part !== '.' && part !== '..');
  return `/${id}/${side}/${tail.length > 0 ? tail.join('/') : 'file'}`;
}

/** The review and side of a URI path made by `reviewUriPath` (undefined for any other). */
export function parseReviewUriPath(path: string): { id: number; side: ReviewSide } | undefined {
  const match = /^\/(\d+)\/(original|proposed)\//.exec(path);
  if (!match) return undefined;
  return { id: Number(match[1]), side: match[2] as ReviewSide };
}

/** The answer to send for a rejection: the reason trimmed, left out when empty (Escape, nothing typed). */
export function rejection(reason: string | undefined): ReviewEditResult {
  const text = reason?.trim() ?? '';
  return text === '' ? { outcome: 'reject' } : { outcome: 'reject', reason: text };
}

/**
 * The answer of Accept: the user's `text` when it differs from the proposal (they edited the
 * right side; hunk marks do not apply to an edited text), else the hunks not rejected:
 * `{outcome: "accept"}` when none was rejected, `{outcome: "reject"}` when every one was,
 * `{outcome: "accept", hunks}` (indexes, ascending) in between.
 */
export function acceptance(
  params: Pick<ReviewEditParams, 'newText' | 'hunks'>,
  rejected: ReadonlySet<number>,
  text?: string,
): ReviewEditResult {
  if (text !== undefined && text !== params.newText) return { outcome: 'accept', text };
  const count = params.hunks?.length ?? 0;
  const accepted = [...Array(count).keys()].filter((index) => !rejected.has(index));
  if (accepted.length === count) return { outcome: 'accept' };
  if (accepted.length === 0) return { outcome: 'reject' };
  return { outcome: 'accept', hunks: accepted };
}

/** The `@@ -1,3 +1,4 @@` line of a hunk. */
export function hunkHeader(hunk: Hunk): string {
  return `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
}

/**
 * The line (0-based) of the new text where a hunk's change starts (its first `+` or `-`
 * line, past the leading context): where its CodeLens goes, clamped into `lineCount`.
 */
export function hunkLine(hunk: Hunk, lineCount: number): number {
  let line = hunk.newLines === 0 ? hunk.newStart : hunk.newStart - 1;
  for (const text of hunk.lines) {
    if (!text.startsWith(' ')) break;
    line += 1;
  }
  return Math.max(0, Math.min(line, lineCount - 1));
}

/** The lines (0-based) of the new text that a hunk adds, for the rejected hunks' decoration. */
export function addedLines(hunk: Hunk): number[] {
  const out: number[] = [];
  let line = hunk.newLines === 0 ? hunk.newStart : hunk.newStart - 1;
  for (const text of hunk.lines) {
    if (text.startsWith('+')) out.push(line++);
    else if (text.startsWith(' ')) line++;
  }
  return out;
}

/** The reviews pending, oldest first (parallel tool calls can have several). */
export class ReviewBook {
  private nextId = 1;
  private readonly entries: Entry[] = [];
  private readonly listeners = new Set<() => void>();

  /** A new pending review of these params. */
  add(params: ReviewEditParams): PendingReview {
    let settle!: (answer: ReviewEditResult | undefined) => void;
    const answer = new Promise<ReviewEditResult | undefined>((resolve) => {
      settle = resolve;
    });
    const entry: Entry = { id: this.nextId++, params, answer, settle, rejected: new Set() };
    this.entries.push(entry);
    this.changed();
    return entry;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The pending reviews, oldest first. */
  pending(): readonly PendingReview[] {
    return [...this.entries];
  }

  get(id: number): PendingReview | undefined {
    return this.entries.find((entry) => entry.id === id);
  }

  /** The oldest pending review: the one a command answers when no review diff is active. */
  oldest(): PendingReview | undefined {
    return this.entries[0];
  }

  /** What the panel lists. */
  infos(): ReviewInfo[] {
    return this.entries.map(({ id, params }) => ({
      id,
      sessionId: params.sessionId,
      toolCallId: params.toolCallId,
      toolName: params.toolName,
      path: params.path,
    }));
  }

  /** The text of one side of a pending review's diff (the right side as the user saved it). */
  text(id: number, side: ReviewSide): string | undefined {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) return undefined;
    return side === 'original' ? entry.params.oldText : (entry.edited ?? entry.params.newText);
  }

  /** The user saved the right side: its text (false when the review is no longer pending). */
  edit(id: number, text: string): boolean {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) return false;
    entry.edited = text;
    this.changed();
    return true;
  }

  /** Accept (`true`) or reject one hunk; false for a review not pending or a hunk it does not have. */
  markHunk(id: number, index: number, accepted: boolean): boolean {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry || !Number.isInteger(index) || index < 0 || index >= (entry.params.hunks?.length ?? 0)) return false;
    if (accepted) entry.rejected.delete(index);
    else entry.rejected.add(index);
    this.changed();
    return true;
  }

  /** The hunks rejected so far, ascending. */
  rejectedHunks(id: number): number[] {
    const entry = this.entries.find((e) => e.id === id);
    return entry ? [...entry.rejected].sort((a, b) => a - b) : [];
  }

  /** Accept: the answer from the hunks marked and the right side's `text` (the open document's, else the saved one). */
  accept(id: number, text?: string): ReviewEditResult | undefined {
    const entry = this.entries.find((e) => e.id === id);
    if (!entry) return undefined;
    const answer = acceptance(entry.params, entry.rejected, text ?? entry.edited);
    this.settle(id, answer);
    return answer;
  }

  /** The user's answer; false when the review is no longer pending (answered or cancelled). */
  answer(id: number, answer: ReviewEditResult): boolean {
    return this.settle(id, answer);
  }

  /** The server cancelled the request (an abort): the review ends without an answer. */
  cancel(id: number): boolean {
    return this.settle(id, undefined);
  }

  /** Every pending review ends without an answer (the server stopped). */
  cancelAll(): void {
    for (const entry of [...this.entries]) this.settle(entry.id, undefined);
  }

  /** Called after each change of the pending reviews. */
  onChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private settle(id: number, answer: ReviewEditResult | undefined): boolean {
    const index = this.entries.findIndex((entry) => entry.id === id);
    if (index < 0) return false;
    const [entry] = this.entries.splice(index, 1);
    entry?.settle(answer);
    this.changed();
    return true;
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
