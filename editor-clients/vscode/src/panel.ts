/**
 * The agent panel: a webview view that renders the session controller's state.
 *
 * The extension owns the state; the webview only draws it. On (re)load the webview
 * asks for everything (`reset`); after that it gets the header when it changes and
 * the transcript rows that changed, at most every `FLUSH_MS`, and everything again when
 * the transcript was cleared (another session, another branch).
 */

import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { fileChip, workspaceFiles } from './editorContext';
import { openMcpLog, restartMcpServer } from './mcpCommands';
import { sessionEntries, sessionTitle } from './format';
import { openToolPath } from './openFile';
import type { SessionInfo } from './protocol';
import type { SessionController } from './session';
import type { FromWebview, ToWebview } from './view';

export const VIEW_ID = 'agentls.panel';
const FLUSH_MS = 40;

export interface PanelActions {
  /** Run a UI action, showing its failure. */
  run(action: () => Promise<unknown>): Promise<void>;
  showSessions(): Promise<void>;
  /** The history's Rename: ask for the name (prefilled with `title`), then `agent/renameSession`. */
  renameSession(sessionId: string, title: string): Promise<void>;
  /** A pending review's button in the panel. */
  review(id: number, action: 'show' | 'accept' | 'reject'): Promise<void>;
  /** A user message's Rewind to here / Fork from here (asks, then `agent/rewind` / `agent/fork`). */
  rewind(rowId: string): Promise<void>;
  fork(rowId: string): Promise<void>;
  /** The header's Branches button: Agent: Switch Branch. */
  switchBranch(): Promise<void>;
}

export class AgentPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private timer: NodeJS.Timeout | undefined;
  private lastHeader = '';
  /** The transcript's `resets` when the webview last got every row. */
  private lastResets = 0;
  private readonly renderedWaiters: ((text: string) => void)[] = [];
  /** The sessions last sent to the history (for the titles of Open, Rename and Delete). */
  private sessions: SessionInfo[] = [];
  /** What the panel copied last (for the self-test). */
  lastCopied: { text: string; what: 'message' | 'code' } | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private viewDisposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: SessionController,
    private readonly actions: PanelActions,
  ) {
    this.disposables.push(controller.onChange(() => this.schedule()));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    const out = vscode.Uri.joinPath(this.extensionUri, 'out');
    view.webview.options = { enableScripts: true, localResourceRoots: [media, out] };
    view.webview.html = this.html(view.webview);
    for (const disposable of this.viewDisposables) disposable.dispose();
    this.viewDisposables = [
      view.webview.onDidReceiveMessage((message: FromWebview) => this.receive(message)),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.ready = false;
        }
      }),
    ];
  }

  get visible(): boolean {
    return this.view?.visible === true && this.ready;
  }

  /** Show the panel and put the cursor in the prompt box. */
  async reveal(focusPrompt = true): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    if (focusPrompt) this.post({ type: 'focusPrompt' });
  }

  setPromptText(text: string): void {
    this.post({ type: 'setPrompt', text });
  }

  /** The text the panel shows (for the self-test). */
  async renderedText(timeoutMs = 5000): Promise<string> {
    this.flush();
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the panel did not answer')), timeoutMs);
      this.renderedWaiters.push((text) => {
        clearTimeout(timer);
        resolve(text);
      });
      this.post({ type: 'report' });
    });
  }

  private receive(message: FromWebview): void {
    const c = this.controller;
    switch (message.type) {
      case 'ready':
        this.ready = true;
        this.postAll();
        // Before the server is up, the connection makes the session once it is.
        if (c.connected && c.sessionId === undefined) {
          c.ensureSession().catch((error: unknown) => c.failed(error instanceof Error ? error.message : String(error)));
        }
        break;
      case 'submit':
        void this.actions.run(async () => {
          try {
            await c.submit(message.text, message.mode);
          } catch (error) {
            this.setPromptText(message.text); // not sent: the text goes back into the box
            throw error;
          }
        });
        break;
      case 'abort':
        void this.actions.run(() => c.abort());
        break;
      case 'abortBash':
        void this.actions.run(() => c.abortBash());
        break;
      case 'listCommands':
        void this.actions.run(async () => this.post({ type: 'commands', commands: await c.listCommands() }));
        break;
      case 'listFiles':
        void this.actions.run(async () => this.post({ type: 'files', files: await workspaceFiles() }));
        break;
      case 'addFile':
        c.addAttachment(fileChip(vscode.Uri.parse(message.file.uri, true)));
        break;
      case 'removeAttachment':
        c.removeAttachment(message.index);
        break;
      case 'addSuggestion':
        c.addSuggestion();
        break;
      case 'continue':
        void this.actions.run(() => c.continue());
        break;
      case 'newSession':
        void this.actions.run(() => c.newSession());
        break;
      case 'showSessions':
        void this.actions.showSessions();
        break;
      case 'editQueueItem':
        void this.actions.run(async () => {
          try {
            await c.editQueueItem(message.id, message.text);
          } catch (error) {
            this.setPromptText(message.text); // delivered or removed meanwhile: the new text is not lost
            throw error;
          }
        });
        break;
      case 'moveQueueItem':
        void this.actions.run(() => c.moveQueueItem(message.id, message.by));
        break;
      case 'rewind':
        void this.actions.rewind(message.rowId);
        break;
      case 'fork':
        void this.actions.fork(message.rowId);
        break;
      case 'switchBranch':
        void this.actions.switchBranch();
        break;
      case 'removeQueueItem':
        void this.actions.run(async () => {
          const text = await c.removeQueueItem(message.id);
          if (text) this.setPromptText(text);
        });
        break;
      case 'permission':
        c.answerPermission(message.toolCallId, message.outcome);
        break;
      case 'setModel':
        void this.actions.run(() => c.setModel(message.model));
        break;
      case 'setThinkingLevel':
        void this.actions.run(() => c.setThinkingLevel(message.level));
        break;
      case 'cyclePermissionPreset':
        void this.actions.run(() => c.cyclePermissionPreset());
        break;
      case 'review':
        void this.actions.review(message.id, message.action);
        break;
      case 'copy':
        void this.actions.run(async () => {
          this.lastCopied = { text: message.text, what: message.what };
          await vscode.env.clipboard.writeText(message.text);
          vscode.window.setStatusBarMessage(message.what === 'code' ? 'agentls: code copied' : 'agentls: message copied', 2000);
        });
        break;
      case 'openFile':
        void this.actions.run(() => openToolPath(message.path, c.header().cwd, message.line));
        break;
      case 'listSessions':
        void this.actions.run(() => this.sendSessions());
        break;
      case 'loadSession': {
        const title = this.sessions.find((s) => s.sessionId === message.sessionId)?.title;
        void this.actions.run(async () => {
          await c.loadSession(message.sessionId, title);
          await this.sendSessions();
        });
        break;
      }
      case 'renameSession': {
        const session = this.sessions.find((s) => s.sessionId === message.sessionId);
        void this.actions.run(async () => {
          await this.actions.renameSession(message.sessionId, session?.title ?? '');
          await this.sendSessions();
        });
        break;
      }
      case 'deleteSession':
        void this.actions.run(() => this.deleteSession(message.sessionId));
        break;
      case 'rendered':
        for (const waiter of this.renderedWaiters.splice(0)) waiter(message.text);
        break;
      case 'listMcpServers':
        void this.actions.run(async () => {
          await c.refreshMcpServers();
          this.schedule();
        });
        break;
      case 'restartMcpServer':
        void this.actions.run(() => restartMcpServer(c, message.name));
        break;
      case 'openMcpLog':
        void this.actions.run(() => openMcpLog(c, message.name));
        break;
    }
  }

  /** Send the stored sessions of the workspace to the history. */
  async sendSessions(): Promise<void> {
    this.sessions = await this.controller.listSessions();
    this.post({ type: 'sessions', sessions: sessionEntries(this.sessions, this.controller.sessionId, Date.now()) });
  }

  /** The history's Delete: asks first (a modal), then `agent/deleteSession`. */
  private async deleteSession(sessionId: string): Promise<void> {
    const session = this.sessions.find((s) => s.sessionId === sessionId);
    const name = session ? sessionTitle(session) : sessionId;
    const current = sessionId === this.controller.sessionId;
    const choice = await vscode.window.showWarningMessage(
      `Delete the session "${name}"?`,
      {
        modal: true,
        detail: `Its stored transcript is removed; this cannot be undone.${current ? ' It is the current session: a new one starts.' : ''}`,
      },
      'Delete',
    );
    if (choice !== 'Delete') return;
    await this.controller.deleteSession(sessionId);
    await this.sendSessions();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.ready && this.controller.transcript.resets !== this.lastResets) {
      this.postAll(); // rows went away: draw them all again
      return;
    }
    const rows = this.controller.transcript.takeChanges();
    if (!this.ready) return; // the webview asks for everything when it is ready
    const header = this.controller.header();
    const headerJson = JSON.stringify(header);
    if (headerJson !== this.lastHeader) {
      this.lastHeader = headerJson;
      this.post({ type: 'header', header });
    }
    if (rows.length > 0) this.post({ type: 'rows', rows });
  }

  /** Everything: the header and every row (the webview draws the transcript afresh). */
  private postAll(): void {
    const c = this.controller;
    const header = c.header();
    this.lastHeader = JSON.stringify(header);
    this.lastResets = c.transcript.resets;
    c.transcript.takeChanges();
    this.post({ type: 'reset', header, rows: [...c.transcript.rows] });
  }

  private post(message: ToWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'out', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'panel.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>Agent</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const disposable of [...this.disposables, ...this.viewDisposables]) disposable.dispose();
  }
}
