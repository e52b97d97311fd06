/**
 * `agent/requestPermission`: the server asks before a tool call whose mode is `ask`
 * (`bash` by default). The question is a modal warning with the server's choices;
 * closing it rejects the call.
 */

import * as vscode from 'vscode';
import { prettyArgs } from './format';
import type { PermissionOutcome, RequestPermissionParams } from './protocol';

const DEFAULT_OPTIONS: RequestPermissionParams['options'] = [
  { id: 'allowOnce', label: 'Allow once' },
  { id: 'allowAlways', label: 'Allow always' },
  { id: 'reject', label: 'Reject' },
];

const OUTCOMES = new Set<PermissionOutcome>(['allowOnce', 'allowAlways', 'reject']);

export type AskUser = (params: RequestPermissionParams) => Promise<PermissionOutcome>;

/** The modal question. */
export const askWithModal: AskUser = async (params) => {
  const options = params.options?.length ? params.options.filter((o) => OUTCOMES.has(o.id)) : DEFAULT_OPTIONS;
  const args = prettyArgs(params.args);
  const detail = `Tool: ${params.toolName}\n\n${args.length <= 600 ? args : `${args.slice(0, 600)}…`}`;
  const labels = options.map((option) => option.label);
  const chosen = await vscode.window.showWarningMessage(`agentls: ${params.title}`, { modal: true, detail }, ...labels);
  return options.find((option) => option.label === chosen)?.id ?? 'reject';
};

/**
 * The handler of `agent/requestPermission`: tells `pending` while the question is open
 * (the status bar shows "waiting for permission"), and rejects when asking fails.
 */
export function permissionHandler(
  ask: AskUser,
  pending: (sessionId: string, toolCallId: string, open: boolean) => void,
  log: vscode.LogOutputChannel,
): (params: RequestPermissionParams) => Promise<PermissionOutcome> {
  return async (params) => {
    log.info(`Permission asked: ${params.title}`);
    pending(params.sessionId, params.toolCallId, true);
    try {
      const outcome = await ask(params);
      log.info(`Permission answered: ${outcome}`);
      return outcome;
    } catch (error) {
      log.error(`Permission question failed, rejecting: ${String(error)}`);
      return 'reject';
    } finally {
      pending(params.sessionId, params.toolCallId, false);
    }
  };
}
