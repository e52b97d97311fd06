/**
 * The bookkeeping of `agent/reviewEdit` (the permission mode `review`): the reviews
 * pending, oldest first, each settled once (accepted, rejected, or cancelled by the
 * server), and the `agentls-review:` URIs of the two sides of its diff (pure: no
 * `vscode` import, so the unit tests run it as is; `review.ts` is the editor's side).
 */

import type { ReviewEditParams, ReviewEditResult } from './protocol';
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
    const entry: Entry = { id: this.nextId++, params, answer, settle };
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

  /** The text of one side of a pending review's diff. */
  text(id: number, side: ReviewSide): string | undefined {
    const params = this.get(id)?.params;
    if (!params) return undefined;
    return side === 'original' ? params.oldText : params.newText;
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
