/** The palette commands (category "Agent") and the error reporting they share with the panel. */

import * as vscode from 'vscode';
import { switchBranch } from './branches';
import { AgentError } from './client';
import { API_KEYS, secretKey, ServerNotFoundError, storeApiKey } from './config';
import { addSelection } from './editorContext';
import { formatTokens, modelLabels } from './format';
import { showMcpServers } from './mcpCommands';
import { parsePromptInput } from './promptInput';
import { type BudgetKind, THINKING_LEVELS, type ThinkingLevel } from './protocol';
import { budgetView, budgetWith, LIMIT_WORDS, limitsText, limitText, parseLimit, spendText } from './safety';
import type { SessionController } from './session';

export interface CommandContext {
  controller: SessionController;
  log: vscode.LogOutputChannel;
  revealPanel(): Promise<void>;
  restartServer(): Promise<void>;
  /** Where **Agent: Set API Key** keeps the keys. */
  secrets: vscode.SecretStorage;
  /** Restart the server for a change it reads at start (asks first while a run goes). */
  restartForChange(what: string): Promise<void>;
  /** Send the stored sessions to the panel's history again (after a rename). */
  refreshHistory(): Promise<void>;
}

/** Agent: Set API Key: a provider's key into SecretStorage (empty clears it); the server restarts with it in its environment. */
async function setApiKey(ctx: CommandContext): Promise<void> {
  const items = await Promise.all(
    API_KEYS.map(async (key) => ({
      label: key.provider,
      description: key.name,
      detail: (await ctx.secrets.get(secretKey(key.name))) ? 'set (enter a new key, or nothing to clear it)' : 'not set',
      name: key.name,
    })),
  );
  const pick = await vscode.window.showQuickPick(items, { title: 'Agent: Set API Key', placeHolder: 'The provider' });
  if (!pick) return;
  const value = await vscode.window.showInputBox({
    title: `Agent: Set API Key: ${pick.name}`,
    prompt: 'Kept in VS Code\'s secret storage and passed to the server\'s environment. Empty: clear it.',
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return;
  await storeApiKey(ctx.secrets, pick.name, value);
  await ctx.restartForChange(`${pick.name} ${value.trim() ? 'set' : 'cleared'}.`);
}

/** Show a failure: the server's message, and a way to the setting when the server is missing. */
export async function showError(error: unknown, log: vscode.LogOutputChannel): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  log.error(message);
  if (error instanceof ServerNotFoundError) {
    const choice = await vscode.window.showErrorMessage(`agentls: ${message}`, 'Open Settings');
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.serverCommand');
    return;
  }
  const kind = error instanceof AgentError ? error.kind : undefined;
  if (kind === 'noModel') {
    const choice = await vscode.window.showErrorMessage(`agentls: ${message}`, 'Open Settings');
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.');
    return;
  }
  const showLog = kind === 'connection' ? ['Show Server Log'] : [];
  const choice = await vscode.window.showErrorMessage(`agentls: ${message}`, ...showLog);
  if (choice) log.show();
}

/** Run an action, showing its failure instead of throwing. */
export async function runAction(action: () => Promise<unknown>, log: vscode.LogOutputChannel): Promise<void> {
  try {
    await action();
  } catch (error) {
    await showError(error, log);
  }
}

async function askText(title: string, placeHolder: string): Promise<string | undefined> {
  const text = await vscode.window.showInputBox({ title, placeHolder, ignoreFocusOut: true });
  return text?.trim() ? text : undefined;
}

/** Agent: Prompt (`!cmd` runs a command, as in the panel). While a run goes, offers steering or a follow-up instead. */
async function promptCommand(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  const text = await askText('Agent: Prompt', c.isRunning ? 'The agent is running: steer it or queue a follow-up' : 'Ask the agent');
  if (text === undefined) return;
  if (!c.isRunning || parsePromptInput(text).kind === 'bash') {
    await c.submit(text, 'steer');
    await ctx.revealPanel();
    return;
  }
  const steer = { label: 'Steer', detail: 'Delivered after the current turn, before the next model call', mode: 'steer' as const };
  const follow = { label: 'Follow Up', detail: 'Delivered when the agent would otherwise stop', mode: 'followUp' as const };
  const pick = await vscode.window.showQuickPick([steer, follow], { title: 'The agent is running' });
  if (pick) await c.submit(text, pick.mode);
}

/** Agent: Compact: summarise the context now, with optional instructions for the summary. */
async function compactCommand(ctx: CommandContext): Promise<void> {
  const instructions = await vscode.window.showInputBox({
    title: 'Agent: Compact',
    prompt: 'Summarise the conversation so far to free context. Optional: what the summary should focus on.',
    placeHolder: 'Instructions for the summary (optional)',
    ignoreFocusOut: true,
  });
  if (instructions === undefined) return; // Escape: no compaction
  await ctx.revealPanel();
  await ctx.controller.compact(instructions.trim() || undefined);
}

async function selectModel(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  await c.ensureSession();
  await c.refreshModels();
  const labels = modelLabels(c.models);
  const items = c.models.map((model, index) => {
    const key = `${model.provider}/${model.id}`;
    const window = model.contextWindow ? `${formatTokens(model.contextWindow)} context` : '';
    return {
      label: labels[index] ?? key,
      description: key,
      detail: [window, model.reasoning ? 'reasoning' : ''].filter(Boolean).join(' · '),
      picked: key === c.model,
      key,
    };
  });
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Agent: Select Model',
    placeHolder: c.model ?? 'The model of the session',
  });
  if (pick) await c.setModel(pick.key);
}

async function selectThinkingLevel(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  const items = THINKING_LEVELS.map((level) => ({ label: level, description: level === c.thinkingLevel ? 'current' : '' }));
  const pick = await vscode.window.showQuickPick(items, { title: 'Agent: Select Thinking Level' });
  if (pick) await c.setThinkingLevel(pick.label as ThinkingLevel);
}

/**
 * Agent: Set Budget…: the current session's limits (`agent/setBudget`). First which: each run's
 * or the whole session's (each with the limits in force); then one input box per limit (dollars,
 * turns, tokens), prefilled with the limit in force and validated; empty is no limit, Escape
 * changes nothing. The other scope's limits stay. They apply from the next check on, the
 * running run's included.
 */
async function setBudget(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  await c.ensureSession();
  await c.refreshState();
  const state = c.budget;
  if (!state) {
    void vscode.window.showInformationMessage('agentls: this agentls server has no budgets (agent/setBudget): update it.');
    return;
  }
  const scopes = [
    { label: 'Each run', description: limitsText(state.limits), detail: 'Counted from the start of each run (a prompt, Continue)', scope: 'run' as const },
    { label: 'The whole session', description: limitsText(state.limits.session), detail: 'Counted over every response of the session', scope: 'session' as const },
  ];
  const picked = await vscode.window.showQuickPick(scopes, { title: 'Agent: Set Budget', placeHolder: 'Which limits' });
  if (!picked) return;
  const scope = picked.scope;
  const limits = scope === 'run' ? state.limits : state.limits.session;
  const spentBy = scope === 'run' ? state.run : state.session;
  const spent = { maxCostUsd: spentBy.costUsd, maxTurns: spentBy.turns, maxTokens: spentBy.tokens };
  const kinds: BudgetKind[] = ['maxCostUsd', 'maxTurns', 'maxTokens'];
  const entered: Partial<Record<BudgetKind, number | null>> = {};
  const what = scope === 'run' ? "Each run's limit" : "The session's limit";
  const whose = scope === 'run' ? 'the current or last run' : 'the session';
  for (const [index, kind] of kinds.entries()) {
    const limit = limits?.[kind];
    const words = LIMIT_WORDS[kind];
    const text = await vscode.window.showInputBox({
      title: `Agent: Set Budget${scope === 'session' ? ', the session' : ''} (${index + 1}/${kinds.length}): ${words.name}`,
      prompt:
        `${what} in ${words.name}; empty: no limit. ` +
        (limit ? `Now: ${spendText(kind, spent[kind], limit)} (${whose}).` : `Now: no limit (${whose}: ${spent[kind]}).`),
      placeHolder: `no limit (e.g. ${words.example})`,
      value: limitText(limit),
      ignoreFocusOut: true,
      validateInput: (value) => {
        const parsed = parseLimit(kind, value);
        return 'error' in parsed ? parsed.error : undefined;
      },
    });
    if (text === undefined) return; // Escape: nothing changes
    const parsed = parseLimit(kind, text);
    if ('error' in parsed) throw new Error(parsed.error);
    entered[kind] = parsed.value;
  }
  await c.setBudget(budgetWith(state.limits, entered, scope));
  const shown = budgetView(c.budget);
  vscode.window.setStatusBarMessage(`agentls: budget ${shown ? `set: ${shown.text}` : 'lifted: no limits'}`, 5000);
}

/** Agent: Show Sessions: the stored sessions of the workspace, newest first; pick one to load it. */
export async function showSessions(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  const sessions = await c.listSessions();
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('agentls: no stored sessions for this workspace yet.');
    return;
  }
  const items = sessions.map((session) => ({
    label: session.title || '(no prompt yet)',
    description: `${session.messageCount} messages · ${new Date(session.updatedAt).toLocaleString()}`,
    detail: `${session.sessionId}${session.sessionId === c.sessionId ? ' · current' : session.loaded ? ' · loaded' : ''}`,
    sessionId: session.sessionId,
    title: session.title,
  }));
  const pick = await vscode.window.showQuickPick(items, { title: 'Agent: Show Sessions', matchOnDetail: true });
  if (!pick) return;
  await c.loadSession(pick.sessionId, pick.title);
  await ctx.revealPanel();
}

/**
 * Rename a session: an input box prefilled with its `title` asks for the name (empty clears
 * it: the title is the first prompt again; Escape cancels), then `agent/renameSession`.
 * Returns the stored name (`null`: cleared), or `undefined` when cancelled.
 */
export async function renameSession(
  c: SessionController,
  sessionId: string,
  title: string,
): Promise<string | null | undefined> {
  const name = await vscode.window.showInputBox({
    title: 'Agent: Rename Session',
    prompt: 'The name the History shows. Empty: its first prompt again',
    value: title,
    valueSelection: [0, title.length],
  });
  if (name === undefined) return undefined;
  const stored = await c.renameSession(sessionId, name.trim());
  vscode.window.setStatusBarMessage(stored ? `agentls: session renamed "${stored}"` : 'agentls: session name cleared', 3000);
  return stored;
}

/** Agent: Rename Session: rename the current session. */
async function renameCurrentSession(ctx: CommandContext): Promise<void> {
  const c = ctx.controller;
  const sessionId = c.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showInformationMessage('agentls: no session to rename yet.');
    return;
  }
  const title = await c.listSessions().then(
    (sessions) => sessions.find((s) => s.sessionId === sessionId)?.title ?? '',
    () => '',
  );
  if ((await renameSession(c, sessionId, title)) !== undefined) await ctx.refreshHistory();
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  const c = ctx.controller;
  const commands: Record<string, () => Promise<unknown>> = {
    'agentls.newSession': async () => {
      await c.newSession();
      await ctx.revealPanel();
    },
    'agentls.prompt': () => promptCommand(ctx),
    // Through submit: the prompt box's chips go along, as with the panel's buttons.
    'agentls.steer': async () => {
      const text = await askText('Agent: Steer', 'Delivered after the current turn');
      if (text !== undefined) await c.submit(text, 'steer');
    },
    'agentls.followUp': async () => {
      const text = await askText('Agent: Follow Up', 'Delivered when the agent would otherwise stop');
      if (text !== undefined) await c.submit(text, 'followUp');
    },
    'agentls.addSelection': async () => {
      addSelection(c);
      await ctx.revealPanel();
    },
    'agentls.abort': async () => {
      const result = await c.abort();
      if (result && !result.aborted) void vscode.window.showInformationMessage('agentls: nothing was running.');
    },
    'agentls.continue': () => c.continue(),
    'agentls.compact': () => compactCommand(ctx),
    'agentls.selectModel': () => selectModel(ctx),
    'agentls.selectThinkingLevel': () => selectThinkingLevel(ctx),
    'agentls.cyclePermissionPreset': () => c.cyclePermissionPreset(),
    'agentls.setBudget': () => setBudget(ctx),
    'agentls.showSessions': () => showSessions(ctx),
    'agentls.renameSession': () => renameCurrentSession(ctx),
    'agentls.switchBranch': () => switchBranch(c),
    'agentls.restartServer': () => ctx.restartServer(),
    'agentls.setApiKey': () => setApiKey(ctx),
    'agentls.focusPanel': () => ctx.revealPanel(),
    'agentls.showLog': async () => ctx.log.show(),
    'agentls.mcpServers': () => showMcpServers(c),
  };
  return Object.entries(commands).map(([id, handler]) =>
    vscode.commands.registerCommand(id, () => runAction(handler, ctx.log)),
  );
}
