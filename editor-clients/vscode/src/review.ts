/**
 * `agent/reviewEdit`: a `write` or `edit` whose permission mode is `review` shows its
 * change before it lands. The extension opens VS Code's diff editor between the file's
 * old and new text (both sides read-only `agentls-review:` documents) with Accept and
 * Reject in its title bar (also Agent: Accept Change / Agent: Reject Change, their key
 * bindings, and the panel's buttons). Reject asks for an optional reason, which the
 * model reads. The diff closes when the review is answered, or when the server cancels
 * the request (an abort). Several reviews can be pending (parallel tool calls): a
 * command answers the review of the active diff, else the oldest.
 */

import * as vscode from 'vscode';
import { LSPErrorCodes, ResponseError } from 'vscode-languageclient/node';
import type { ReviewEditParams, ReviewEditResult } from './protocol';
import {
  parseReviewUriPath,
  REVIEW_SCHEME,
  ReviewBook,
  type ReviewSide,
  rejection,
  reviewTitle,
  reviewUriPath,
} from './reviews';
import type { ReviewInfo } from './view';

export const ACCEPT_COMMAND = 'agentls.acceptChange';
export const REJECT_COMMAND = 'agentls.rejectChange';
/** The context key that is true while a review is pending (the palette shows the commands). */
const PENDING_CONTEXT = 'agentls.reviewPending';
/** The context key that is true while the active tab is the diff of a pending review (the key bindings). */
const ACTIVE_CONTEXT = 'agentls.reviewActive';

export type ReviewAction = 'accept' | 'reject' | 'show';

export class EditReviews implements vscode.Disposable {
  readonly book = new ReviewBook();
  private readonly disposables: vscode.Disposable[] = [];
  /** Reviews whose reason is being asked for: a second Reject does not ask again. */
  private readonly rejecting = new Set<number>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.Uri>();

  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** The pending reviews changed (the panel lists them, the status bar and the tool rows show them). */
    private readonly changed: (reviews: ReviewInfo[]) => void,
  ) {
    const provider: vscode.TextDocumentContentProvider = {
      onDidChange: this.changeEmitter.event,
      provideTextDocumentContent: (uri) => {
        const where = parseReviewUriPath(uri.path);
        return (where && this.book.text(where.id, where.side)) ?? '';
      },
    };
    this.disposables.push(
      this.changeEmitter,
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, provider),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (target?: unknown) => this.act(target, 'accept')),
      vscode.commands.registerCommand(REJECT_COMMAND, (target?: unknown) => this.act(target, 'reject')),
      this.book.onChange(() => {
        void vscode.commands.executeCommand('setContext', PENDING_CONTEXT, this.book.size > 0);
        this.updateActive();
        this.changed(this.book.infos());
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => this.updateActive()),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.updateActive()),
    );
  }

  private active = false;

  private updateActive(): void {
    const id = this.reviewOfTab(vscode.window.tabGroups.activeTabGroup.activeTab);
    const active = id !== undefined && this.book.get(id) !== undefined;
    if (active === this.active) return;
    this.active = active;
    void vscode.commands.executeCommand('setContext', ACTIVE_CONTEXT, active);
  }

  /** The handler of `agent/reviewEdit`: shows the diff and waits for the user (no time limit). */
  async handle(params: ReviewEditParams, token: vscode.CancellationToken): Promise<ReviewEditResult> {
    const review = this.book.add(params);
    this.log.info(`Review asked: ${params.toolName} ${params.path} (${params.toolCallId})`);
    const cancelled = token.onCancellationRequested(() => this.book.cancel(review.id));
    if (token.isCancellationRequested) this.book.cancel(review.id);
    else {
      this.show(review.id).catch((error: unknown) => {
        // still pending: the panel's Show opens it again, its Accept and Reject answer it
        this.log.error(`The diff of the review of ${params.path} did not open: ${String(error)}`);
      });
    }
    const answer = await review.answer;
    cancelled.dispose();
    this.rejecting.delete(review.id);
    await this.close(review.id);
    if (answer === undefined) {
      this.log.info(`Review cancelled by the server: ${params.path}`);
      throw new ResponseError(LSPErrorCodes.RequestCancelled, 'The review was cancelled.');
    }
    this.log.info(`Review answered: ${answer.outcome}${answer.reason ? ` (${answer.reason})` : ''}`);
    return answer;
  }

  /** The URI of one side of a review's diff. */
  uri(id: number, side: ReviewSide): vscode.Uri {
    const params = this.book.get(id)?.params;
    return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: reviewUriPath(id, side, params?.path ?? 'file') });
  }

  /** Open (or bring back) the diff of a pending review. */
  async show(id: number): Promise<void> {
    const review = this.book.get(id);
    if (!review) return;
    await vscode.commands.executeCommand(
      'vscode.diff',
      this.uri(id, 'original'),
      this.uri(id, 'proposed'),
      reviewTitle(review.params),
      { preview: false },
    );
  }

  /**
   * Accept, reject or show a review: `target` is its id (the panel), a side's URI (the
   * editor title's buttons pass the diff's resource), or nothing (the palette, a key
   * binding): the review of the active diff, else the oldest pending one.
   */
  async act(target: unknown, action: ReviewAction): Promise<void> {
    const id = this.resolve(target);
    if (id === undefined) {
      void vscode.window.showInformationMessage('agentls: no change is waiting for review.');
      return;
    }
    if (action === 'show') return this.show(id);
    if (action === 'accept') {
      this.book.answer(id, { outcome: 'accept' });
      return;
    }
    if (this.rejecting.has(id)) return;
    const review = this.book.get(id);
    if (!review) return;
    this.rejecting.add(id);
    try {
      const reason = await vscode.window.showInputBox({
        title: `Reject the change to ${review.params.path}`,
        prompt: 'Why? The agent reads the reason. Optional: Enter with no text or Escape rejects without one.',
        placeHolder: 'reason (optional)',
        ignoreFocusOut: true,
      });
      this.book.answer(id, rejection(reason));
    } finally {
      this.rejecting.delete(id);
    }
  }

  private resolve(target: unknown): number | undefined {
    if (typeof target === 'number') return this.book.get(target)?.id;
    if (target instanceof vscode.Uri && target.scheme === REVIEW_SCHEME) {
      const where = parseReviewUriPath(target.path);
      if (where && this.book.get(where.id)) return where.id;
    }
    const active = this.reviewOfTab(vscode.window.tabGroups.activeTabGroup.activeTab);
    if (active !== undefined && this.book.get(active)) return active;
    return this.book.oldest()?.id;
  }

  /** The review whose diff a tab shows. */
  private reviewOfTab(tab: vscode.Tab | undefined): number | undefined {
    const input = tab?.input;
    if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== REVIEW_SCHEME) return undefined;
    return parseReviewUriPath(input.modified.path)?.id;
  }

  /** Close every tab showing the review's diff. */
  private async close(id: number): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => this.reviewOfTab(tab) === id);
    if (tabs.length === 0) return;
    try {
      await vscode.window.tabGroups.close(tabs, true);
    } catch (error) {
      this.log.warn(`Closing the diff of review ${id} failed: ${String(error)}`);
    }
  }

  dispose(): void {
    this.book.cancelAll();
    for (const disposable of this.disposables) disposable.dispose();
  }
}
