/**
 * `agent/requestPermission`: the server asks before a tool call whose mode is `ask`
 * (`bash` by default). `agentls.permissionPrompt` says where: `inline` (the default) puts
 * the answers on the call's row in the panel (`SessionController.askInline`); `modal` is a
 * modal warning with the server's choices (closing it rejects the call). A question the
 * panel cannot show (another session's call) falls back to the modal, as does the question
 * whether to trust the MCP servers of a project's `.mcp.json` (`toolName: "mcp"`: no tool
 * row; its answers are "Trust" and "Reject"). An MCP tool's question has a fourth answer,
 * `allowAlwaysServer` (every tool of that server), labelled by the server. The sandbox's question
 * (`kind: "sandbox"`: run a denied `bash` call once outside the sandbox) goes on the call's row
 * too; the budget's (`kind: "budget"`: a run reached a limit, go on?) is a card of its own in the
 * panel. Either falls back to the modal, whose detail says the same.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { resolveToolPath } from './paths';
import { visibleControls } from './format';
import type { PermissionOutcome, RequestPermissionParams } from './protocol';
import { modalQuestion, questionChoices } from './question';
import type { CancellationSignal } from './session';

export type AskUser = (params: RequestPermissionParams, token?: CancellationSignal) => Promise<PermissionOutcome>;

export type PermissionPrompt = 'inline' | 'modal';

export function permissionPrompt(): PermissionPrompt {
  return vscode.workspace.getConfiguration('agentls').get<string>('permissionPrompt', 'inline') === 'modal' ? 'modal' : 'inline';
}

/**
 * The modal question: the command (or the path) as the detail rather than the arguments'
 * JSON, and Reject as the dialog's close button (no Cancel beside it: both would reject).
 * VS Code cannot close a modal from code, so a question the server cancels stays until answered.
 * The title, detail and labels show their control characters written out (`\r`, `\x1b`): a
 * command cannot hide what it runs behind them.
 */
export const askWithModal: AskUser = async (params) => {
  const items = questionChoices(params).map((option) => ({
    title: option.label,
    isCloseAffordance: option.id === 'reject',
    id: option.id,
  }));
  const { message, detail } = modalQuestion(params);
  const chosen = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...items);
  return chosen?.id ?? 'reject';
};

/**
 * The handler of `agent/requestPermission`: tells `pending` while the question is open
 * (the status bar shows "waiting for permission"), and rejects when asking fails.
 */
export function permissionHandler(
  ask: AskUser,
  pending: (sessionId: string, toolCallId: string, open: boolean) => void,
  log: vscode.LogOutputChannel,
): (params: RequestPermissionParams, token?: CancellationSignal) => Promise<PermissionOutcome> {
  return async (params, token) => {
    log.info(`Permission asked: ${visibleControls(params.title, { newlines: false })}`);
    pending(params.sessionId, params.toolCallId, true);
    try {
      const outcome = await ask(params, token);
      log.info(token?.isCancellationRequested ? 'Permission question cancelled by the server' : `Permission answered: ${outcome}`);
      return outcome;
    } catch (error) {
      log.error(`Permission question failed, rejecting: ${String(error)}`);
      return 'reject';
    } finally {
      pending(params.sessionId, params.toolCallId, false);
    }
  };
}

/** Files larger than this are not read for a `write` question's diff (its content is shown as added). */
const MAX_BEFORE = 1024 * 1024;

/**
 * The text a `write` call would replace, for its question's diff: the open editor's text, else
 * the file on disk; `undefined` for other tools, a new file, or a file too large or unreadable.
 */
export function textBeforeWrite(params: RequestPermissionParams, cwd: string | undefined): string | undefined {
  const args = params.args as { path?: unknown } | undefined;
  if (params.toolName !== 'write' || typeof args?.path !== 'string') return undefined;
  const file = resolveToolPath(args.path, cwd ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  if (file === undefined) return undefined;
  const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
  if (open) return open.getText();
  try {
    return fs.statSync(file).size <= MAX_BEFORE ? fs.readFileSync(file, 'utf8') : undefined;
  } catch {
    return undefined; // a new file
  }
}
