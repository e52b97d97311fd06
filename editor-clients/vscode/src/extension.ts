/** Activation: wires the server connection, the session controller and the UI together. */

import * as vscode from 'vscode';
import { AgentConnection } from './client';
import { type CommandContext, registerCommands, runAction, showError, showSessions } from './commands';
import { saveDocuments } from './documents';
import { getDiagnostics, watchSelection } from './editorContext';
import { AgentPanel, VIEW_ID } from './panel';
import { askWithModal, permissionHandler } from './permissions';
import { EditReviews } from './review';
import { runSelfTest, SELFTEST_ENV } from './selftest';
import { SessionController } from './session';
import { createStatusBar } from './statusBar';

/** What the extension hands to the self-test (and to other extensions, as its API). */
export interface AgentExtension {
  controller: SessionController;
  connection: AgentConnection;
  panel: AgentPanel;
  log: vscode.LogOutputChannel;
  /** The changes waiting for review (`agent/reviewEdit`). */
  reviews: EditReviews;
  /** Settles when the first server start finished (rejects when it failed). */
  started: Promise<void>;
}

let activeConnection: AgentConnection | undefined;

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function activate(context: vscode.ExtensionContext): AgentExtension {
  const log = vscode.window.createOutputChannel('agentls', { log: true });
  const pending = (sessionId: string, toolCallId: string, open: boolean): void =>
    controller.permissionPending(sessionId, toolCallId, open);
  const reviews = new EditReviews(log, (list) => controller.setReviews(list));
  const connection = new AgentConnection(log, {
    requestPermission: permissionHandler(askWithModal, pending, log),
    saveDocuments: (params) => saveDocuments(params, log),
    getDiagnostics,
    reviewEdit: (params, token) => reviews.handle(params, token),
  });
  activeConnection = connection;
  const controller = new SessionController(connection, workspaceFolder);

  const ctx: CommandContext = {
    controller,
    log,
    revealPanel: () => panel.reveal(),
    restartServer: async () => {
      await connection.stop();
      await startServer();
    },
  };
  const panel = new AgentPanel(context.extensionUri, controller, {
    run: (action) => runAction(action, log),
    showSessions: () => runAction(() => showSessions(ctx), log),
    review: (id, action) => runAction(() => reviews.act(id, action), log),
  });

  context.subscriptions.push(
    log,
    connection,
    reviews,
    panel,
    vscode.window.registerWebviewViewProvider(VIEW_ID, panel, { webviewOptions: { retainContextWhenHidden: true } }),
    createStatusBar(controller),
    watchSelection(controller),
    ...registerCommands(ctx),
    connection.onNotification((note) => controller.handleNotification(note)),
    connection.onRunning((running) => {
      // a stopped server answers no review: close their diffs
      if (!running) reviews.book.cancelAll();
      void controller.connectionChanged(running).then(() => {
        // The panel is open but has no session yet: make one now that the server is up.
        if (running && panel.visible && controller.sessionId === undefined) {
          controller.ensureSession().catch((error: unknown) => controller.failed(String(error)));
        }
      });
    }),
    vscode.workspace.onDidChangeConfiguration(async (change) => {
      if (!change.affectsConfiguration('agentls')) return;
      const choice = await vscode.window.showInformationMessage(
        'agentls: the settings changed. Restart the server to use them?',
        'Restart',
      );
      if (choice) await runAction(ctx.restartServer, log);
    }),
  );

  async function startServer(): Promise<void> {
    try {
      await connection.start();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      controller.failed(message);
      void showError(error, log);
      throw error;
    }
  }

  const started = startServer();
  started.catch(() => undefined); // reported by startServer
  const api: AgentExtension = { controller, connection, reviews, panel, log, started };

  const resultFile = process.env[SELFTEST_ENV];
  if (resultFile) void runSelfTest(api, resultFile);
  return api;
}

/** Stop the server (shutdown, exit) before the extension host goes away. */
export async function deactivate(): Promise<void> {
  await activeConnection?.stop();
  activeConnection = undefined;
}
