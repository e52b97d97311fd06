/**
 * What `activate()` returns: the extension's API, for other extensions
 * (`vscode.extensions.getExtension('agentls.agentls')?.exports`). The end-to-end test
 * extension (e2e/extension) drives the extension through it and through VS Code's UI.
 */

import type * as vscode from 'vscode';
import type { AgentConnection } from './client';
import type { ChangesView } from './changes';
import type { AgentPanel } from './panel';
import type { EditReviews } from './review';
import type { SessionController } from './session';

export interface AgentExtension {
  controller: SessionController;
  connection: AgentConnection;
  panel: AgentPanel;
  log: vscode.LogOutputChannel;
  /** The changes waiting for review (`agent/reviewEdit`). */
  reviews: EditReviews;
  /** The Changes view: the files of the last run or of the session (`agent/getChanges`), reverted from there. */
  changes: ChangesView;
  /** Settles when the first server start finished (rejects when it failed). */
  started: Promise<void>;
  /**
   * Keep a provider's API key (`OPENAI_API_KEY`, ...) in VS Code's secret storage, as
   * **Agent: Set API Key** does (empty: clear it); the server gets it when it next starts.
   */
  setApiKey(name: string, value: string): Promise<void>;
}
