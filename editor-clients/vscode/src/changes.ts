/**
 * The Changes view (the agentls container's tree view `agentls.changes`): the files the
 * session's last run changed, or the whole session (a toggle in its title bar), each with
 * its status and who changed it (`agent/getChanges`), its hunks as children. A file opens a
 * diff editor (read-only `agentls-change:` documents of its old and new text); Revert File
 * and Revert Hunk call `agent/revertChanges`, and a `fileConflict` asks whether to revert
 * the rest anyway (`force`; a revert of only conflicting files says so and reverts nothing). It refreshes on `agent/settled`, `agent/branch`, after a revert, and
 * when the session changes (while hidden, when it is next shown).
 */

import * as vscode from 'vscode';
import {
  CHANGE_SCHEME,
  type ChangeNode,
  changeNodes,
  changesParams,
  type ChangeScope,
  changeTitle,
  changeUriPath,
  type FileNode,
  othersToRevert,
  revertOutcome,
  revertParams,
  type RevertTarget,
  viewMessage,
} from './changeTree';
import type { AgentConnection } from './client';
import type { ChangedFile, ChangesResult, FileProblem, RevertResult } from './protocol';
import type { SessionController } from './session';
import { fileConflicts, problemLines } from './tree';

export const CHANGES_VIEW_ID = 'agentls.changes';
export const SHOW_CHANGES_COMMAND = 'agentls.showChanges';
export const OPEN_CHANGE_COMMAND = 'agentls.openChange';
export const REVERT_FILE_COMMAND = 'agentls.revertFile';
export const REVERT_HUNK_COMMAND = 'agentls.revertHunk';
const REFRESH_COMMAND = 'agentls.refreshChanges';
const SHOW_SESSION_COMMAND = 'agentls.showSessionChanges';
const SHOW_RUN_COMMAND = 'agentls.showRunChanges';
/** The context key of the scope the view shows (`run` or `session`): the title bar's toggle. */
const SCOPE_CONTEXT = 'agentls.changesScope';
const REVERT_ANYWAY = 'Revert anyway';

export class ChangesView implements vscode.TreeDataProvider<ChangeNode>, vscode.Disposable {
  scope: ChangeScope = 'run';
  /** The last `agent/getChanges` listed (`undefined`: none yet, or no session). */
  result: ChangesResult | undefined;
  readonly view: vscode.TreeView<ChangeNode>;
  private nodes: FileNode[] = [];
  private sessionId: string | undefined;
  /** Each diff's texts, by URI; a new diff of the same file gets a new generation (fresh documents). */
  private readonly texts = new Map<string, string>();
  private generation = 0;
  private loading: Promise<void> | undefined;
  private readonly treeEmitter = new vscode.EventEmitter<ChangeNode | undefined>();
  readonly onDidChangeTreeData = this.treeEmitter.event;
  private readonly loadedEmitter = new vscode.EventEmitter<ChangesResult | undefined>();
  /** After each load of the changes (the e2e test waits on it). */
  readonly onDidLoad = this.loadedEmitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly connection: AgentConnection,
    private readonly controller: SessionController,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.view = vscode.window.createTreeView(CHANGES_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    const texts: vscode.TextDocumentContentProvider = { provideTextDocumentContent: (uri) => this.texts.get(uri.toString()) ?? '' };
    this.disposables.push(
      this.view,
      this.treeEmitter,
      this.loadedEmitter,
      vscode.workspace.registerTextDocumentContentProvider(CHANGE_SCHEME, texts),
      vscode.commands.registerCommand(SHOW_CHANGES_COMMAND, () => vscode.commands.executeCommand(`${CHANGES_VIEW_ID}.focus`)),
      vscode.commands.registerCommand(REFRESH_COMMAND, () => this.refresh()),
      vscode.commands.registerCommand(SHOW_SESSION_COMMAND, () => this.setScope('session')),
      vscode.commands.registerCommand(SHOW_RUN_COMMAND, () => this.setScope('run')),
      vscode.commands.registerCommand(OPEN_CHANGE_COMMAND, (node?: ChangeNode) => this.guard(() => this.openDiff(node))),
      vscode.commands.registerCommand(REVERT_FILE_COMMAND, (node?: ChangeNode) => this.guard(() => this.revertFile(node))),
      vscode.commands.registerCommand(REVERT_HUNK_COMMAND, (node?: ChangeNode) => this.guard(() => this.revertHunk(node))),
      connection.onNotification((note) => {
        if ((note.method === 'agent/settled' || note.method === 'agent/branch') && note.params.sessionId === this.sessionId) {
          this.changed();
        }
      }),
      controller.onChange(() => {
        if (controller.sessionId !== this.sessionId) this.changed();
      }),
      this.view.onDidChangeVisibility(({ visible }) => {
        if (visible && this.stale) void this.refresh();
      }),
    );
    void vscode.commands.executeCommand('setContext', SCOPE_CONTEXT, this.scope);
  }

  /** Whether the changes shown may be out of date: asked for again when the view is next visible. */
  private stale = true;

  /** The session's changes may have changed: ask now if the view is visible, else when it is shown. */
  private changed(): void {
    this.stale = true;
    if (this.view.visible) void this.refresh();
  }

  private async guard(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`Changes: ${message}`);
      void vscode.window.showErrorMessage(`agentls: ${message}`);
    }
  }

  /** List the last run's changes or the whole session's. */
  async setScope(scope: ChangeScope): Promise<void> {
    this.scope = scope;
    await vscode.commands.executeCommand('setContext', SCOPE_CONTEXT, scope);
    await this.refresh();
  }

  /** Ask the server again (one request at a time: a refresh during a load waits for it, then loads). */
  async refresh(): Promise<void> {
    const before = this.loading;
    const next = (async () => {
      await before?.catch(() => undefined);
      await this.load();
    })();
    this.loading = next;
    return next;
  }

  private async load(): Promise<void> {
    const sessionId = this.controller.sessionId;
    this.sessionId = sessionId;
    this.stale = false;
    let result: ChangesResult | undefined;
    if (sessionId !== undefined && this.controller.connected) {
      try {
        result = await this.connection.request<ChangesResult>('agent/getChanges', changesParams(sessionId, this.scope));
      } catch (error) {
        this.log.warn(`agent/getChanges failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.result = result;
    this.nodes = result ? changeNodes(result) : [];
    this.view.message = viewMessage(this.scope, result);
    this.view.description = this.scope === 'run' ? 'last run' : 'session';
    this.treeEmitter.fire(undefined);
    this.loadedEmitter.fire(result);
  }

  /** The files listed (the tree's roots). */
  files(): readonly FileNode[] {
    return this.nodes;
  }

  getChildren(node?: ChangeNode): ChangeNode[] {
    if (node === undefined) return this.nodes;
    return node.kind === 'file' ? node.hunks : [];
  }

  getTreeItem(node: ChangeNode): vscode.TreeItem {
    if (node.kind === 'hunk') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
      item.description = node.description;
      item.tooltip = node.tooltip;
      item.contextValue = 'agentls.changeHunk';
      item.iconPath = new vscode.ThemeIcon('diff');
      item.command = { command: OPEN_CHANGE_COMMAND, title: 'Open Diff', arguments: [node] };
      return item;
    }
    const item = new vscode.TreeItem(
      vscode.Uri.parse(node.file.uri),
      node.hunks.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.label = node.label;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = `agentls.changeFile.${node.file.status}`;
    item.id = `${this.scope}:${node.file.path}`;
    if (node.diffable) item.command = { command: OPEN_CHANGE_COMMAND, title: 'Open Diff', arguments: [node] };
    return item;
  }

  getParent(node: ChangeNode): ChangeNode | undefined {
    return node.kind === 'hunk' ? this.nodes.find((f) => f.file === node.file) : undefined;
  }

  /** The node a command acts on: the one it was given (a menu), else the view's selection. */
  private target(node: ChangeNode | undefined): ChangeNode | undefined {
    return node ?? this.view.selection[0];
  }

  /** Open the diff editor of a file (its old and new text, `agent/getChanges` with `text`); at its hunk for a hunk. */
  async openDiff(node?: ChangeNode): Promise<void> {
    const target = this.target(node);
    const sessionId = this.sessionId;
    if (!target || sessionId === undefined) return;
    const path = target.file.path;
    const full = await this.connection.request<ChangesResult>('agent/getChanges', changesParams(sessionId, this.scope, true));
    const file = full.files.find((f) => f.path === path);
    if (!file) {
      void vscode.window.showInformationMessage(`agentls: ${path} is no longer changed.`);
      await this.refresh();
      return;
    }
    if (file.binary || file.recorded === false) {
      void vscode.window.showInformationMessage(`agentls: ${path} has no diff (${file.binary ? 'a binary file' : 'its content was not recorded'}).`);
      return;
    }
    const [left, right] = this.diffUris(file);
    const line = target.kind === 'hunk' ? Math.max(0, target.hunk.newStart - 1) : undefined;
    await vscode.commands.executeCommand('vscode.diff', left, right, changeTitle(file, this.scope), {
      preview: true,
      ...(line !== undefined ? { selection: new vscode.Range(line, 0, line, 0) } : {}),
    });
  }

  private diffUris(file: ChangedFile): [vscode.Uri, vscode.Uri] {
    const generation = ++this.generation;
    const left = vscode.Uri.from({ scheme: CHANGE_SCHEME, path: changeUriPath(generation, 'old', file.oldPath ?? file.path) });
    const right = vscode.Uri.from({ scheme: CHANGE_SCHEME, path: changeUriPath(generation, 'new', file.path) });
    this.texts.set(left.toString(), file.oldText ?? '');
    this.texts.set(right.toString(), file.newText ?? '');
    return [left, right];
  }

  async revertFile(node?: ChangeNode): Promise<RevertResult | undefined> {
    const target = this.target(node);
    if (!target) return undefined;
    return this.revert({ files: [target.file.path] });
  }

  async revertHunk(node?: ChangeNode): Promise<RevertResult | undefined> {
    const target = this.target(node);
    if (target?.kind !== 'hunk') return undefined;
    return this.revert({ hunks: [{ path: target.file.path, index: target.index }] });
  }

  /** `agent/revertChanges` of what the view shows; a `fileConflict` asks whether to revert anyway. */
  async revert(what: RevertTarget): Promise<RevertResult | undefined> {
    const sessionId = this.sessionId;
    const shown = this.result;
    if (sessionId === undefined || !shown) return undefined;
    const attempt = (force: boolean): Promise<RevertResult> =>
      this.connection.request<RevertResult>('agent/revertChanges', revertParams(sessionId, this.scope, shown, what, force));
    let result: RevertResult | undefined;
    try {
      try {
        result = await attempt(false);
      } catch (error) {
        const files = fileConflicts(error);
        if (files === undefined) throw error;
        // force leaves the conflicting files as they are: offered only when something else would be reverted
        if (!othersToRevert(what, files)) {
          void vscode.window.showWarningMessage(
            `agentls: nothing reverted: changed since the agent's change. ${problemLines(files)}`,
          );
        } else if (await askToRevertAnyway(files)) result = await attempt(true);
      }
    } finally {
      await this.refresh();
    }
    if (result) vscode.window.setStatusBarMessage(`agentls: ${revertOutcome(result)}`, 8000);
    return result;
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/** The modal of a `fileConflict`: the files changed since the agent's change; whether to revert anyway (`force`). */
async function askToRevertAnyway(files: FileProblem[]): Promise<boolean> {
  const count = files.length === 1 ? '1 file was' : `${files.length} files were`;
  const choice = await vscode.window.showWarningMessage(
    `agentls: ${count} changed since the agent's change.`,
    {
      modal: true,
      detail: `${problemLines(files)}\n\nNothing was reverted. "${REVERT_ANYWAY}" reverts the rest and leaves ${files.length === 1 ? 'it' : 'these'} as ${files.length === 1 ? 'it is' : 'they are'}.`,
    },
    REVERT_ANYWAY,
  );
  return choice === REVERT_ANYWAY;
}
