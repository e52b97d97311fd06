/** Activation: wires the server connection, the session controller and the UI together. */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import type { AgentExtension } from './api';
import { forkMessage, rewindMessage, switchBranch } from './branches';
import { ChangesView } from './changes';
import { AgentConnection, readSettings } from './client';
import {
  API_KEYS,
  mcpLogPath,
  secretKey,
  serverDataDir,
  serverEnvironment,
  restartEndsRun,
  serverArguments,
  sessionDefaults,
  settingsEffect,
  storeApiKey,
} from './config';
import type { ThinkingLevel } from './protocol';
import { type CommandContext, registerCommands, renameSession, runAction, showError, showSessions } from './commands';
import { saveDocuments } from './documents';
import { getDiagnostics, watchSelection } from './editorContext';
import { AgentPanel, VIEW_ID } from './panel';
import { type AskUser, askWithModal, permissionHandler, permissionPrompt, textBeforeWrite } from './permissions';
import { EditReviews } from './review';
import { SessionController } from './session';
import { createStatusBar } from './statusBar';

let activeConnection: AgentConnection | undefined;
/** The workspace state's key of the session the panel shows (restored after a reload with the per-user server). */
const SESSION_KEY = 'agentls.sessionId';

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function activate(context: vscode.ExtensionContext): AgentExtension {
  const log = vscode.window.createOutputChannel('agentls', { log: true });
  const pending = (sessionId: string, toolCallId: string, open: boolean): void =>
    controller.permissionPending(sessionId, toolCallId, open);
  const reviews = new EditReviews(log, (list) => controller.setReviews(list));
  // Inline on the tool row (the panel shown if it is not), else, or when the row is not in the panel, the modal.
  const ask: AskUser = (params, token) => {
    const inline = permissionPrompt() === 'inline' ? controller.askInline(params, token, textBeforeWrite(params, controller.cwd)) : undefined;
    if (!inline) return askWithModal(params, token);
    if (!panel.visible) void panel.reveal(false);
    return inline;
  };
  const secrets = async (): Promise<Record<string, string | undefined>> => {
    const entries = await Promise.all(API_KEYS.map(async (key) => [key.name, await context.secrets.get(secretKey(key.name))] as const));
    return Object.fromEntries(entries);
  };
  const connection = new AgentConnection(
    log,
    {
      requestPermission: permissionHandler(ask, pending, log),
      saveDocuments: (params) => saveDocuments(params, log),
      getDiagnostics,
      reviewEdit: (params, token) => reviews.handle(params, token),
    },
    secrets,
  );
  activeConnection = connection;
  const controller = new SessionController(connection, workspaceFolder, () => sessionDefaults(readSettings()));
  // The session the window shows is kept in the workspace's state. With the per-user server
  // its run outlives the window: after a reload the panel reattaches to it (see reattach).
  let storedSession = context.workspaceState.get<string>(SESSION_KEY);
  if (readSettings().perUser && storedSession !== undefined) controller.restoreSessionId = storedSession;
  // An MCP server's log: <dataDir>/mcp-logs/NAME.log, offered once it exists.
  controller.mcpLogFile = (name) => {
    const settings = readSettings();
    const dataDir = serverDataDir(settings, serverEnvironment(settings, process.env), process.platform, os.homedir());
    const file = dataDir !== undefined ? mcpLogPath(dataDir, name) : undefined;
    return file !== undefined && fs.existsSync(file) ? file : undefined;
  };

  const changes = new ChangesView(connection, controller, log);

  const ctx: CommandContext = {
    controller,
    log,
    revealPanel: () => panel.reveal(),
    restartServer: async () => {
      await connection.stop();
      await startServer();
    },
    secrets: context.secrets,
    restartForChange: (what) => restartForChange(what),
    refreshHistory: () => panel.sendSessions(),
  };

  /**
   * Restart the server for a change it reads at start; asks first while a run goes (the restart
   * ends it), unless the per-user server keeps the run (a new bridge to the same server).
   */
  async function restartForChange(what: string): Promise<void> {
    if (controller.isRunning && restartEndsRun(connection.command?.args, serverArguments(readSettings()))) {
      const choice = await vscode.window.showInformationMessage(
        `agentls: ${what} The agent is running: restart the server now (the run stops) to use it?`,
        'Restart',
      );
      if (!choice) return;
    }
    await runAction(ctx.restartServer, log);
    vscode.window.setStatusBarMessage(`agentls: ${what} The server restarted.`, 5000);
  }
  const panel = new AgentPanel(context.extensionUri, controller, {
    run: (action) => runAction(action, log),
    showSessions: () => runAction(() => showSessions(ctx), log),
    renameSession: async (sessionId, title) => {
      await renameSession(controller, sessionId, title);
    },
    review: (id, action) => runAction(() => reviews.act(id, action), log),
    rewind: (rowId) => runAction(() => rewindMessage(controller, rowId, (text) => panel.setPromptText(text)), log),
    fork: (rowId) => runAction(() => forkMessage(controller, rowId, (text) => panel.setPromptText(text)), log),
    switchBranch: () => runAction(() => switchBranch(controller), log),
  });

  context.subscriptions.push(
    log,
    connection,
    reviews,
    changes,
    panel,
    vscode.window.registerWebviewViewProvider(VIEW_ID, panel, { webviewOptions: { retainContextWhenHidden: true } }),
    createStatusBar(controller),
    watchSelection(controller),
    ...registerCommands(ctx),
    connection.onNotification((note) => controller.handleNotification(note)),
    controller.onChange(() => {
      const id = controller.sessionId;
      if (id === undefined || id === storedSession) return;
      storedSession = id;
      void context.workspaceState.update(SESSION_KEY, id);
    }),
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
      const effect = settingsEffect((section) => change.affectsConfiguration(section));
      if (effect.restart) {
        await restartForChange('The server settings changed.');
        return;
      }
      // The model and thinking level apply to the current session at once; all three to new sessions.
      const settings = readSettings();
      const defaults = sessionDefaults(settings);
      if (controller.sessionId === undefined) return;
      if (effect.session.includes('model') && defaults.model) {
        await runAction(() => controller.setModel(`${defaults.model?.provider}/${defaults.model?.id}`), log);
      }
      if (effect.session.includes('thinkingLevel') && defaults.thinkingLevel) {
        await runAction(() => controller.setThinkingLevel(defaults.thinkingLevel as ThinkingLevel), log);
      }
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
  const setApiKey = (name: string, value: string): Promise<void> => storeApiKey(context.secrets, name, value);
  return { controller, connection, reviews, changes, panel, log, started, setApiKey };
}

/** Stop the server (shutdown, exit) before the extension host goes away. */
export async function deactivate(): Promise<void> {
  await activeConnection?.stop();
  activeConnection = undefined;
}
