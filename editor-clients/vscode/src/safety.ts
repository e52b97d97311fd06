/**
 * The sandbox and the budget as the panel shows them, and the settings and input boxes that
 * set them (pure: protocol.md, "Sandbox" and "Budgets").
 */

import { formatCost, formatTokens, visibleControls } from './format';
import type { BudgetKind, BudgetLimits, BudgetSettings, BudgetSpent, BudgetState, BudgetUsage, SandboxSettings, SandboxState } from './protocol';
import type { BudgetView, SandboxBadge } from './view';

// --- the sandbox badge -----------------------------------------------------------------------

/**
 * The badge for `agent/getState`'s `sandbox`: `sandbox: workspace-write · no network` when the
 * kernel enforces it; `sandbox refused: workspace-write` (commands do not run) and `unsandboxed:
 * workspace-write not enforced` (the fallback runs them unconfined) with the kernel's reason in
 * the tooltip; `unsandboxed` when it is off. `undefined` from a server without the sandbox.
 */
export function sandboxBadge(state: SandboxState | undefined): SandboxBadge | undefined {
  if (!state || typeof state !== 'object' || typeof state.status !== 'string') return undefined;
  const mode = visibleControls(String(state.mode), { newlines: false });
  const reason = state.reason ? visibleControls(state.reason) : 'the kernel cannot enforce it';
  switch (state.status) {
    case 'off':
      return {
        text: 'unsandboxed',
        title: 'No sandbox: the agent\'s bash commands run unconfined (agentls.sandbox.mode "off").',
        status: 'off',
      };
    case 'enforced':
      return {
        text: `sandbox: ${mode} · ${state.network ? 'network' : 'no network'}`,
        title: sandboxDetail(state, 'The kernel confines the agent\'s bash commands (Landlock).'),
        status: 'enforced',
      };
    case 'refused':
      return {
        text: `sandbox refused: ${mode}`,
        title:
          `The ${mode} sandbox cannot be enforced here: ${reason}\n` +
          'The agent\'s bash commands do not run. Turn the sandbox off (agentls.sandbox.mode "off"), or let them run ' +
          'unconfined where it cannot be enforced (agentls.sandbox.fallback "unconfined").',
        status: 'refused',
      };
    case 'unconfined':
      return {
        text: `unsandboxed: ${mode} not enforced`,
        title:
          `The ${mode} sandbox cannot be enforced here: ${reason}\n` +
          'The agent\'s bash commands run unconfined (agentls.sandbox.fallback "unconfined").',
        status: 'unconfined',
      };
    default:
      return undefined;
  }
}

function sandboxDetail(state: SandboxState, first: string): string {
  const list = (paths: unknown): string =>
    Array.isArray(paths) && paths.length > 0 ? paths.map((p) => visibleControls(String(p), { newlines: false })).join(', ') : 'none';
  const lines = [first];
  if (state.mode === 'read-only') lines.push(`Writable: only the temporary folder (${list(state.writableRoots)})`);
  else lines.push(`Writable: ${list(state.writableRoots)}`);
  if (Array.isArray(state.readOnly) && state.readOnly.length > 0) lines.push(`Read-only: ${list(state.readOnly)}`);
  lines.push(state.network ? 'Network: allowed' : 'Network: off (no socket but unix ones)');
  return lines.join('\n');
}

// --- spend against the budget ----------------------------------------------------------------

const KINDS: readonly BudgetKind[] = ['maxCostUsd', 'maxTurns', 'maxTokens'];

function spentOf(spent: BudgetSpent | undefined, kind: BudgetKind): number {
  const value = kind === 'maxCostUsd' ? spent?.costUsd : kind === 'maxTokens' ? spent?.tokens : spent?.turns;
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function isLimit(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** `$0.12 / $1.00`, `3/10 turns`, `1.2k/50k tokens`. */
export function spendText(kind: BudgetKind, used: number, limit: number): string {
  if (kind === 'maxCostUsd') return `${money(used)} / ${money(limit)}`;
  if (kind === 'maxTurns') return `${used}/${limit} turns`;
  return `${formatTokens(used)}/${formatTokens(limit)} tokens`;
}

/** Dollars with cents (`$0.00`, `$1.50`), finer below a cent (`$0.0042`). */
function money(dollars: number): string {
  return dollars === 0 ? '$0.00' : formatCost(dollars);
}

/**
 * Spend against the limits of `agent/getState`'s `budget`: each limit of a run against what the
 * current (or last) run spent, each of the session (`session …`) against the session's.
 * `undefined` when there are no limits (or from a server without budgets).
 */
export function budgetView(state: BudgetState | undefined): BudgetView | undefined {
  if (!state || typeof state !== 'object' || !state.limits) return undefined;
  const parts: string[] = [];
  const lines: string[] = [];
  let reached = false;
  const scopes: [string, BudgetLimits | undefined, BudgetSpent | undefined, string][] = [
    ['', state.limits, state.run, 'Each run'],
    ['session ', state.limits.session, state.session, 'The session'],
  ];
  for (const [prefix, limits, spent, what] of scopes) {
    const words: string[] = [];
    for (const kind of KINDS) {
      const limit = limits?.[kind];
      if (!isLimit(limit)) continue;
      const used = spentOf(spent, kind);
      parts.push(`${prefix}${spendText(kind, used, limit)}`);
      words.push(usageText({ kind, scope: 'run', limit, used }));
      if (used >= limit) reached = true;
    }
    if (words.length > 0) lines.push(`${what}: ${words.join(', ')}`);
  }
  if (parts.length === 0) return undefined;
  const run = state.run;
  const session = state.session;
  lines.push(
    `This run spent ${money(spentOf(run, 'maxCostUsd'))}, ${formatTokens(spentOf(run, 'maxTokens'))} tokens, ${spentOf(run, 'maxTurns')} turns; ` +
      `the session ${money(spentOf(session, 'maxCostUsd'))}, ${formatTokens(spentOf(session, 'maxTokens'))} tokens, ${spentOf(session, 'maxTurns')} turns.`,
    'Agent: Set Budget changes the limits.',
  );
  return { text: parts.join(' · '), title: `Budget (spent of the limit)\n${lines.join('\n')}`, reached };
}

/** A limit and its use in words: `2 of 2 turns`, `$1.02 of $1.00`, `52.1k of 50k tokens`. */
export function usageText(usage: BudgetUsage): string {
  if (usage.kind === 'maxCostUsd') return `${money(usage.used)} of ${money(usage.limit)}`;
  if (usage.kind === 'maxTurns') return `${usage.used} of ${usage.limit} turns`;
  return `${formatTokens(usage.used)} of ${formatTokens(usage.limit)} tokens`;
}

/** Whether `value` is a limit that was reached (`agent/settled`'s `budget`). */
export function isBudgetUsage(value: unknown): value is BudgetUsage {
  const u = value as Partial<BudgetUsage> | null;
  return (
    u !== null &&
    typeof u === 'object' &&
    KINDS.includes(u.kind as BudgetKind) &&
    (u.scope === 'run' || u.scope === 'session') &&
    typeof u.limit === 'number' &&
    typeof u.used === 'number'
  );
}

/** The transcript's notice of a run a budget stopped (`agent/settled`'s `budget`). */
export function budgetNotice(usage: BudgetUsage): string {
  const what = usage.scope === 'session' ? "the session's budget" : "the run's budget";
  const next =
    usage.scope === 'session'
      ? 'Raise the session limit (Agent: Set Budget) before going on.'
      : 'Continue goes on in a new run, with a budget of its own; Agent: Set Budget changes the limits.';
  return `Stopped by ${what}: ${usageText(usage)}. ${next}`;
}

// --- the budget question ---------------------------------------------------------------------

/** What the budget question's card says under its title: the limit and what was used. */
export function budgetQuestionDetail(usage: BudgetUsage | undefined): string | undefined {
  if (!isBudgetUsage(usage)) return undefined;
  const scope = usage.scope === 'session' ? 'the session' : 'this run';
  const limit =
    usage.kind === 'maxCostUsd' ? money(usage.limit) : usage.kind === 'maxTurns' ? `${usage.limit} turns` : `${formatTokens(usage.limit)} tokens`;
  const used =
    usage.kind === 'maxCostUsd' ? money(usage.used) : usage.kind === 'maxTurns' ? `${usage.used} turns` : `${formatTokens(usage.used)} tokens`;
  return `Limit: ${limit} (${scope}) · used: ${used}`;
}

/**
 * The sandbox question's title is `The sandbox denied the command: CMD\nRun it once outside the
 * sandbox?\nNOTE`: the note (what the sandbox may have denied), or `undefined` when it has none.
 */
export function sandboxDenial(title: string): string | undefined {
  const marker = 'Run it once outside the sandbox?';
  const at = title.indexOf(marker);
  if (at < 0) return undefined;
  const note = title.slice(at + marker.length).trim();
  return note === '' ? undefined : visibleControls(note);
}

// --- settings and input boxes ----------------------------------------------------------------

const MODES = new Set(['off', 'workspace-write', 'read-only']);

/** `agentls.sandbox.*` as read from the configuration (anything a settings.json may hold). */
export interface SandboxSettingValues {
  mode?: unknown;
  network?: unknown;
  writableRoots?: unknown;
  fallback?: unknown;
}

/** `agentls.budget.*` as read from the configuration. */
export interface BudgetSettingValues {
  maxCostUsd?: unknown;
  maxTurns?: unknown;
  maxTokens?: unknown;
}

/**
 * The `sandbox` initialization option the settings give: `undefined` when the mode is `off` (the
 * server's default; the other settings then do nothing, and their defaults are what VS Code
 * reads), so `agentls.initializationOptions.sandbox` stays. A value that is not valid is left
 * out and named in `problems`.
 */
export function sandboxOption(values: SandboxSettingValues): { sandbox?: SandboxSettings; problems: string[] } {
  const problems: string[] = [];
  const mode = values.mode === undefined || values.mode === '' ? 'off' : values.mode;
  if (typeof mode !== 'string' || !MODES.has(mode)) {
    problems.push(`agentls.sandbox.mode: ${JSON.stringify(mode)} is not "off", "workspace-write" or "read-only"; the sandbox is left to the server.`);
    return { problems };
  }
  const sandbox: SandboxSettings = { mode: mode as SandboxSettings['mode'] };
  if (values.network !== undefined && values.network !== null) {
    if (typeof values.network === 'boolean') sandbox.network = values.network;
    else problems.push('agentls.sandbox.network: not true or false; left out (no network).');
  }
  if (values.writableRoots !== undefined && values.writableRoots !== null) {
    const roots = Array.isArray(values.writableRoots) ? values.writableRoots : [];
    const good = roots.filter((root): root is string => typeof root === 'string' && root.trim() !== '').map((root) => root.trim());
    if (!Array.isArray(values.writableRoots) || good.length !== roots.length) {
      problems.push('agentls.sandbox.writableRoots: not a list of folder paths; only its paths are kept.');
    }
    if (good.length > 0) sandbox.writableRoots = good;
  }
  if (values.fallback !== undefined && values.fallback !== null && values.fallback !== '') {
    if (values.fallback === 'refuse' || values.fallback === 'unconfined') sandbox.fallback = values.fallback;
    else problems.push(`agentls.sandbox.fallback: ${JSON.stringify(values.fallback)} is not "refuse" or "unconfined"; left out (refuse).`);
  }
  return sandbox.mode === 'off' ? { problems } : { sandbox, problems };
}

/**
 * The `budget` initialization option the settings give (each run's limits): `undefined` when
 * none is set (0 or empty: no limit). A value that is not a positive number (a positive whole
 * number for turns and tokens) is left out and named in `problems`.
 */
export function budgetOption(values: BudgetSettingValues): { budget?: BudgetLimits; problems: string[] } {
  const problems: string[] = [];
  const budget: BudgetLimits = {};
  for (const kind of KINDS) {
    const value = values[kind];
    if (value === undefined || value === null || value === 0 || value === '') continue;
    const problem = typeof value === 'number' ? limitProblem(kind, value) : 'not a number';
    if (problem) problems.push(`agentls.budget.${kind}: ${problem}; left out (no limit).`);
    else budget[kind] = value as number;
  }
  return Object.keys(budget).length > 0 ? { budget, problems } : { problems };
}

function limitProblem(kind: BudgetKind, value: number): string | undefined {
  if (!Number.isFinite(value) || value <= 0) return 'must be more than 0';
  if (kind !== 'maxCostUsd' && !Number.isInteger(value)) return 'must be a whole number';
  return undefined;
}

/** What an input box of Agent: Set Budget asks for each limit. */
export const LIMIT_WORDS: Record<BudgetKind, { name: string; example: string }> = {
  maxCostUsd: { name: 'cost in dollars', example: '1.50' },
  maxTurns: { name: 'turns (model responses)', example: '20' },
  maxTokens: { name: 'tokens', example: '200000' },
};

/**
 * An input box's text as a limit: empty is no limit (`null`); `1.50`, `$1.50`, `20`,
 * `200000` or `200k` otherwise. `{error}` says what is wrong (the box's validation message).
 */
export function parseLimit(kind: BudgetKind, text: string): { value: number | null } | { error: string } {
  const trimmed = text.trim().replace(/^\$/, '').replace(/_/g, '').trim();
  if (trimmed === '') return { value: null };
  const match = /^(\d+(?:\.\d+)?|\.\d+)\s*([kKmM]?)$/.exec(trimmed);
  if (!match) return { error: `Not a number: enter the ${LIMIT_WORDS[kind].name} (e.g. ${LIMIT_WORDS[kind].example}), or nothing for no limit.` };
  const scale = match[2]?.toLowerCase() === 'k' ? 1000 : match[2]?.toLowerCase() === 'm' ? 1_000_000 : 1;
  if (scale !== 1 && kind === 'maxCostUsd') return { error: 'Dollars without k or M: e.g. 1.50.' };
  const value = Number(match[1]) * scale;
  const problem = limitProblem(kind, value);
  return problem ? { error: `The ${LIMIT_WORDS[kind].name} ${problem}.` } : { value };
}

/** A limit as an input box shows it again (`''`: none). */
export function limitText(value: number | undefined): string {
  return isLimit(value) ? String(value) : '';
}

/**
 * `agent/setBudget`'s budget: the limits entered for `scope` (each run's, or the whole
 * session's; `null`: none), the other scope's kept as they are.
 */
export function budgetWith(
  current: BudgetSettings | undefined,
  entered: Partial<Record<BudgetKind, number | null>>,
  scope: 'run' | 'session' = 'run',
): BudgetSettings {
  const pick = (given: BudgetLimits | undefined, changes: Partial<Record<BudgetKind, number | null>>): BudgetLimits => {
    const limits: BudgetLimits = {};
    for (const kind of KINDS) {
      const value = kind in changes ? changes[kind] : given?.[kind];
      if (isLimit(value)) limits[kind] = value;
    }
    return limits;
  };
  const run = pick(current, scope === 'run' ? entered : {});
  const session = pick(current?.session, scope === 'session' ? entered : {});
  return Object.keys(session).length > 0 ? { ...run, session } : run;
}

/** A scope's limits in a few words (`$1.00, 20 turns`; `no limits`), for Agent: Set Budget's choice. */
export function limitsText(limits: BudgetLimits | undefined): string {
  const parts: string[] = [];
  if (isLimit(limits?.maxCostUsd)) parts.push(money(limits.maxCostUsd));
  if (isLimit(limits?.maxTurns)) parts.push(`${limits.maxTurns} turns`);
  if (isLimit(limits?.maxTokens)) parts.push(`${formatTokens(limits.maxTokens)} tokens`);
  return parts.length > 0 ? parts.join(', ') : 'no limits';
}
