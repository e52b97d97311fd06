/**
 * `agent/reviewEdit`: a `write` or `edit` whose permission mode is `review` shows its
 * change before it lands. The extension opens VS Code's diff editor between the file's
 * old and new text (`agentls-review:` documents of an in-memory file system: the left side
 * read-only, the right side editable) with Accept and Reject in its title bar (also Agent:
 * Accept Change / Agent: Reject Change, their key bindings, and the panel's buttons). Each
 * hunk of the right side has a CodeLens, Accept hunk / Reject hunk: Accept then lands only
 * the hunks not rejected; a right side the user edited lands as they left it. Reject asks
 * for an optional reason, which the model reads. The diff closes when the review is answered, or when the server cancels
 * the request (an abort). Several reviews can be pending (parallel tool calls): a
 * command answers the review of the active diff, else the oldest.
 */

import * as vscode from 'vscode';
import { LSPErrorCodes, ResponseError } from 'vscode-languageclient/node';
import type { ReviewEditParams, ReviewEditResult } from './protocol';
import {
  addedLines,
  hunkHeader,
  hunkLine,
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
export const ACCEPT_HUNK_COMMAND = 'agentls.acceptHunk';
export const REJECT_HUNK_COMMAND = 'agentls.rejectHunk';
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
  private readonly fileEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  /** The right side's lines of the rejected hunks: struck through. */
  private readonly rejectedDecoration = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through',
    opacity: '0.5',
  });

  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** The pending reviews changed (the panel lists them, the status bar and the tool rows show them). */
    private readonly changed: (reviews: ReviewInfo[]) => void,
  ) {
    const encoder = new TextEncoder();
    // A review answered is empty: its diff closes then (an edited right side saved first, to nowhere).
    const sideText = (uri: vscode.Uri): string => {
      const where = parseReviewUriPath(uri.path);
      return (where && this.book.text(where.id, where.side)) ?? '';
    };
    // A file system, not a content provider: the right side is an editable document (saved here).
    const files: vscode.FileSystemProvider = {
      onDidChangeFile: this.fileEmitter.event,
      watch: () => new vscode.Disposable(() => undefined),
      stat: (uri) => ({
        type: vscode.FileType.File,
        ctime: 0,
        mtime: 0,
        size: encoder.encode(sideText(uri)).byteLength,
        ...(parseReviewUriPath(uri.path)?.side === 'original' ? { permissions: vscode.FilePermission.Readonly } : {}),
      }),
      readFile: (uri) => encoder.encode(sideText(uri)),
      writeFile: (uri, content) => {
        const where = parseReviewUriPath(uri.path);
        if (where?.side !== 'proposed') throw vscode.FileSystemError.NoPermissions(uri);
        // a review answered meanwhile: its text no longer matters
        this.book.edit(where.id, new TextDecoder().decode(content));
      },
      readDirectory: () => [],
      createDirectory: (uri) => {
        throw vscode.FileSystemError.NoPermissions(uri);
      },
      delete: (uri) => {
        throw vscode.FileSystemError.NoPermissions(uri);
      },
      rename: (uri) => {
        throw vscode.FileSystemError.NoPermissions(uri);
      },
    };
    const lenses: vscode.CodeLensProvider = {
      onDidChangeCodeLenses: this.lensEmitter.event,
      provideCodeLenses: (document) => this.codeLenses(document),
    };
    this.disposables.push(
      this.fileEmitter,
      this.lensEmitter,
      this.rejectedDecoration,
      vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, files, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, lenses),
      vscode.commands.registerCommand(ACCEPT_COMMAND, (target?: unknown) => this.act(target, 'accept')),
      vscode.commands.registerCommand(REJECT_COMMAND, (target?: unknown) => this.act(target, 'reject')),
      vscode.commands.registerCommand(ACCEPT_HUNK_COMMAND, (id: number, index: number) => this.markHunk(id, index, true)),
      vscode.commands.registerCommand(REJECT_HUNK_COMMAND, (id: number, index: number) => this.markHunk(id, index, false)),
      vscode.workspace.onDidChangeTextDocument((change) => {
        if (change.document.uri.scheme === REVIEW_SCHEME) this.lensEmitter.fire();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      this.book.onChange(() => {
        this.lensEmitter.fire();
        this.decorate();
        void vscode.commands.executeCommand('setContext', PENDING_CONTEXT, this.book.size > 0);
        this.updateActive();
        this.changed(this.book.infos());
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => this.updateActive()),
      vscode.window.tabGroups.onDidChangeTabGroups(() => this.updateActive()),
    );
  }

  private active = false;

  /** Accept hunk / Reject hunk: mark one hunk of a pending review (the CodeLens of the right side). */
  markHunk(id: number, index: number, accepted: boolean): boolean {
    return this.book.markHunk(id, index, accepted);
  }

  /** The right side's open document of a review, if any (its text is what the user sees, saved or not). */
  private proposedDocument(id: number): vscode.TextDocument | undefined {
    const uri = this.uri(id, 'proposed').toString();
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
  }

  /** Two lenses per hunk of the right side: its state, and the action that flips it; one lens once edited. */
  private codeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const where = parseReviewUriPath(document.uri.path);
    const review = where?.side === 'proposed' ? this.book.get(where.id) : undefined;
    const hunks = review?.params.hunks ?? [];
    if (!review || hunks.length === 0) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    if (document.getText() !== review.params.newText) {
      return [new vscode.CodeLens(top, { title: 'Edited: Accept lands the text as you left it', command: ACCEPT_COMMAND, arguments: [review.id] })];
    }
    const rejected = new Set(this.book.rejectedHunks(review.id));
    return hunks.flatMap((hunk, index) => {
      const line = hunkLine(hunk, document.lineCount);
      const range = new vscode.Range(line, 0, line, 0);
      const isRejected = rejected.has(index);
      const state = `Hunk ${index + 1} of ${hunks.length}: ${isRejected ? 'rejected' : 'accepted'}`;
      return [
        new vscode.CodeLens(range, { title: state, command: '', tooltip: hunkHeader(hunk) }),
        new vscode.CodeLens(
          range,
          isRejected
            ? { title: '$(check) Accept hunk', command: ACCEPT_HUNK_COMMAND, arguments: [review.id, index] }
            : { title: '$(close) Reject hunk', command: REJECT_HUNK_COMMAND, arguments: [review.id, index] },
        ),
      ];
    });
  }

  /** Strike through the added lines of the rejected hunks in the visible right sides. */
  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const where = parseReviewUriPath(editor.document.uri.path);
      if (editor.document.uri.scheme !== REVIEW_SCHEME || where?.side !== 'proposed') continue;
      const review = this.book.get(where.id);
      const edited = review !== undefined && editor.document.getText() !== review.params.newText;
      const hunks = review && !edited ? (review.params.hunks ?? []) : [];
      const lines = review ? this.book.rejectedHunks(review.id).flatMap((i) => (hunks[i] ? addedLines(hunks[i]) : [])) : [];
      editor.setDecorations(
        this.rejectedDecoration,
        lines.filter((line) => line < editor.document.lineCount).map((line) => editor.document.lineAt(line).range),
      );
    }
  }

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
    const hunks = params.hunks?.length ?? 0;
    this.log.info(`Review asked: ${params.toolName} ${params.path} (${params.toolCallId}, ${hunks} hunks)`);
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
    const part = answer.hunks ? ` hunks ${answer.hunks.join(', ')}` : answer.text !== undefined ? ' (edited)' : '';
    this.log.info(`Review answered: ${answer.outcome}${part}${answer.reason ? ` (${answer.reason})` : ''}`);
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
      this.book.accept(id, this.proposedDocument(id)?.getText());
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

  /** Close every tab showing the review's diff (an edited right side saved first: no "save changes?" question). */
  private async close(id: number): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => this.reviewOfTab(tab) === id);
    if (tabs.length === 0) return;
    try {
      const sides = new Set(tabs.map((tab) => (tab.input as vscode.TabInputTextDiff).modified.toString()));
      for (const document of vscode.workspace.textDocuments) {
        if (document.isDirty && sides.has(document.uri.toString())) await document.save();
      }
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
