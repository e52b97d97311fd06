import { describe, expect, it } from 'vitest';
import type { BudgetState, SandboxState } from '../src/protocol';
import { budgetQuestion, modalQuestion, questionChoices, questionKind, questionLabel, sandboxQuestionDetail } from '../src/question';
import {
  budgetNotice,
  budgetOption,
  budgetQuestionDetail,
  budgetView,
  budgetWith,
  isBudgetUsage,
  limitsText,
  limitText,
  parseLimit,
  sandboxBadge,
  sandboxDenial,
  sandboxOption,
  usageText,
} from '../src/safety';

const ENFORCED: SandboxState = {
  mode: 'workspace-write',
  network: false,
  writableRoots: ['/ws', '/tmp/agentls-server-1/sandbox-tmp-2'],
  readOnly: ['/ws/.git'],
  fallback: 'refuse',
  status: 'enforced',
};

const SPENT = { costUsd: 0, tokens: 0, turns: 0 };

describe('sandboxBadge', () => {
  it('shows the mode and the network of an enforced sandbox, the folders in its tooltip', () => {
    const badge = sandboxBadge(ENFORCED);
    expect(badge).toMatchObject({ text: 'sandbox: workspace-write · no network', status: 'enforced' });
    expect(badge?.title).toContain('Writable: /ws, /tmp/agentls-server-1/sandbox-tmp-2');
    expect(badge?.title).toContain('Read-only: /ws/.git');
    expect(badge?.title).toContain('Network: off');
    expect(sandboxBadge({ ...ENFORCED, network: true })?.text).toBe('sandbox: workspace-write · network');
    expect(sandboxBadge({ ...ENFORCED, mode: 'read-only' })?.text).toBe('sandbox: read-only · no network');
  });

  it('a sandbox the kernel refuses: its own status, the reason in the tooltip, what to do', () => {
    const reason = 'this kernel has no Landlock, which the workspace-write sandbox needs';
    const badge = sandboxBadge({ ...ENFORCED, status: 'refused', reason });
    expect(badge).toMatchObject({ text: 'sandbox refused: workspace-write', status: 'refused' });
    expect(badge?.title).toContain(reason);
    expect(badge?.title).toContain('do not run');
    expect(badge?.title).toContain('agentls.sandbox.fallback');
  });

  it('unconfined by the fallback says the commands run unconfined', () => {
    const badge = sandboxBadge({ ...ENFORCED, status: 'unconfined', fallback: 'unconfined', reason: 'Landlock ABI 2' });
    expect(badge).toMatchObject({ text: 'unsandboxed: workspace-write not enforced', status: 'unconfined' });
    expect(badge?.title).toContain('Landlock ABI 2');
    expect(badge?.title).toContain('run unconfined');
  });

  it('off: unsandboxed; a server without the sandbox: no badge', () => {
    expect(sandboxBadge({ ...ENFORCED, mode: 'off', status: 'off', writableRoots: [] })).toMatchObject({ text: 'unsandboxed', status: 'off' });
    expect(sandboxBadge(undefined)).toBeUndefined();
    expect(sandboxBadge({} as SandboxState)).toBeUndefined();
  });

  it('writes out control characters of the reason and the paths', () => {
    const badge = sandboxBadge({ ...ENFORCED, status: 'refused', reason: 'bad\u202ereason\x1b[2K' });
    expect(badge?.title).toContain('bad\\u202ereason\\x1b[2K');
    expect(sandboxBadge({ ...ENFORCED, writableRoots: ['/w\rx'] })?.title).toContain('/w\\rx');
  });
});

describe('budgetView', () => {
  const state = (limits: BudgetState['limits'], run = SPENT, session = SPENT): BudgetState => ({ limits, run, session });

  it('spend against each limit of a run: dollars, turns, tokens', () => {
    const view = budgetView(state({ maxCostUsd: 1, maxTurns: 10, maxTokens: 50_000 }, { costUsd: 0.12, tokens: 1234, turns: 3 }));
    expect(view).toMatchObject({ text: '$0.12 / $1.00 · 3/10 turns · 1.2k/50k tokens', reached: false });
    expect(view?.title).toContain('Each run: $0.12 of $1.00, 3 of 10 turns, 1.2k of 50k tokens');
    expect(view?.title).toContain('Agent: Set Budget');
  });

  it("the session's limits against what the session spent, marked as the session's", () => {
    const view = budgetView(state({ maxTurns: 2, session: { maxCostUsd: 5 } }, { costUsd: 0.1, tokens: 10, turns: 2 }, { costUsd: 0.4, tokens: 40, turns: 8 }));
    expect(view).toMatchObject({ text: '2/2 turns · session $0.40 / $5.00', reached: true });
    expect(view?.title).toContain('The session: $0.40 of $5.00');
  });

  it('no limits: nothing to show (the figures show the cost)', () => {
    expect(budgetView(state({}))).toBeUndefined();
    expect(budgetView(state({ session: {} }))).toBeUndefined();
    expect(budgetView(undefined)).toBeUndefined();
  });

  it('nothing spent yet reads $0.00', () => {
    expect(budgetView(state({ maxCostUsd: 1.5 }))?.text).toBe('$0.00 / $1.50');
  });
});

describe('the budget that stopped a run', () => {
  it('says which limit, how much was used, and what to do next', () => {
    const turns = { kind: 'maxTurns', scope: 'run', limit: 2, used: 2 } as const;
    expect(usageText(turns)).toBe('2 of 2 turns');
    expect(budgetNotice(turns)).toBe(
      "Stopped by the run's budget: 2 of 2 turns. Continue goes on in a new run, with a budget of its own; Agent: Set Budget changes the limits.",
    );
    const cost = { kind: 'maxCostUsd', scope: 'session', limit: 1, used: 1.0234 } as const;
    expect(budgetNotice(cost)).toBe("Stopped by the session's budget: $1.02 of $1.00. Raise the session limit (Agent: Set Budget) before going on.");
    expect(usageText({ kind: 'maxTokens', scope: 'run', limit: 50_000, used: 52_100 })).toBe('52k of 50k tokens');
  });

  it('recognises a budget only when it has every field', () => {
    expect(isBudgetUsage({ kind: 'maxTurns', scope: 'run', limit: 2, used: 2 })).toBe(true);
    expect(isBudgetUsage({ kind: 'maxTurns', scope: 'run', limit: 2 })).toBe(false);
    expect(isBudgetUsage({ kind: 'maxMinutes', scope: 'run', limit: 2, used: 2 })).toBe(false);
    expect(isBudgetUsage(undefined)).toBe(false);
  });
});

describe('the sandbox and budget questions', () => {
  const title =
    'The sandbox denied the command: touch /root/outside\nRun it once outside the sandbox?\n' +
    '[The sandbox (workspace-write) may have denied this. Denied:\n  touch: cannot touch \'/root/outside\': Permission denied]';
  const sandboxParams = {
    kind: 'sandbox' as const,
    args: { command: 'touch /root/outside' },
    title,
    options: [
      { id: 'runUnsandboxed' as const, label: 'Run once outside the sandbox' },
      { id: 'reject' as const, label: 'Keep the failure' },
    ],
  };

  it("the sandbox's card: the command, what was denied, its question, the server's answers", () => {
    expect(questionKind(sandboxParams)).toBe('sandbox');
    expect(sandboxQuestionDetail(sandboxParams)).toEqual({
      kind: 'sandbox',
      command: 'touch /root/outside',
      denied: "[The sandbox (workspace-write) may have denied this. Denied:\n  touch: cannot touch '/root/outside': Permission denied]",
    });
    expect(questionLabel(sandboxQuestionDetail(sandboxParams))).toBe('Run it once OUTSIDE the sandbox?');
    expect(questionLabel({ kind: 'command', text: 'ls' })).toBe('Allow this call?');
    expect(questionChoices(sandboxParams)).toEqual(sandboxParams.options);
    expect(sandboxDenial('no note here')).toBeUndefined();
  });

  it("the sandbox's command shows its control characters written out, its lines kept", () => {
    const detail = sandboxQuestionDetail({ ...sandboxParams, args: { command: 'rm x #\r\x1b[2K\necho ok' } });
    expect(detail).toMatchObject({ command: 'rm x #\\r\\x1b[2K\necho ok' });
  });

  it("uses the server's ids and labels, only those of the question's kind, and keeps a way to say no", () => {
    const budget = {
      kind: 'budget' as const,
      options: [
        { id: 'raiseBudget' as const, label: 'Continue, the limit raised to 4 turns' },
        { id: 'allowAlways' as const, label: 'Allow always' },
        { id: 'reject' as const, label: 'Stop' },
      ],
    };
    expect(questionChoices(budget)).toEqual([
      { id: 'raiseBudget', label: 'Continue, the limit raised to 4 turns' },
      { id: 'reject', label: 'Stop' },
    ]);
    expect(questionChoices({ kind: 'budget', options: [{ id: 'raiseBudget', label: 'Go\u202e on' }] })).toEqual([
      { id: 'raiseBudget', label: 'Go\\u202e on' },
      { id: 'reject', label: 'Stop' },
    ]);
    // no options: the kind's own answers
    expect(questionChoices({ kind: 'sandbox', options: [] }).map((c) => c.id)).toEqual(['runUnsandboxed', 'reject']);
    expect(questionChoices({ options: [] }).map((c) => c.id)).toEqual(['allowOnce', 'allowAlways', 'reject']);
    // an older server names no kind: a tool question, whose answers do not include the sandbox's
    expect(questionChoices({ options: [{ id: 'runUnsandboxed', label: 'x' }, { id: 'reject', label: 'Reject' }] })).toEqual([
      { id: 'reject', label: 'Reject' },
    ]);
    expect(questionKind({ kind: 'other' as never })).toBe('tool');
  });

  it("the budget's card: the server's title, the limit and what was used", () => {
    const usage = { kind: 'maxTurns', scope: 'run', limit: 2, used: 2 } as const;
    expect(budgetQuestion({ title: 'The run reached its budget: 2 of 2 turns. Go on?', budget: usage })).toEqual({
      title: 'The run reached its budget: 2 of 2 turns. Go on?',
      detail: 'Limit: 2 turns (this run) · used: 2 turns',
    });
    expect(budgetQuestionDetail({ kind: 'maxCostUsd', scope: 'session', limit: 1, used: 1.25 })).toBe('Limit: $1.00 (the session) · used: $1.25');
    expect(budgetQuestion({ title: '' })).toEqual({ title: 'The run reached its budget. Go on?' });
  });
});

describe('the modal (agentls.permissionPrompt: "modal")', () => {
  const base = { sessionId: 's1', toolCallId: 'c1', toolName: 'bash', args: { command: 'touch ../x' }, options: [] };

  it("the sandbox's: says it runs OUTSIDE the sandbox, the command and what was denied as lines", () => {
    const { message, detail } = modalQuestion({
      ...base,
      kind: 'sandbox',
      title: 'The sandbox denied the command: touch ../x\nRun it once outside the sandbox?\n[Denied:\n  touch: Permission denied]',
    });
    expect(message).toBe('agentls: The sandbox denied a command. Run it once OUTSIDE the sandbox?');
    expect(detail.split('\n\n')).toEqual([
      'It runs once more OUTSIDE the sandbox, unconfined: it can write anywhere you can and use the network.',
      '$ touch ../x',
      '[Denied:\n  touch: Permission denied]',
    ]);
  });

  it("the budget's: its title, the limit and what was used; a tool's: the command", () => {
    const budget = modalQuestion({
      ...base,
      toolCallId: 'run-1',
      toolName: 'budget',
      kind: 'budget',
      title: 'The run reached its budget: 2 of 2 turns. Go on?',
      budget: { kind: 'maxTurns', scope: 'run', limit: 2, used: 2 },
    });
    expect(budget).toEqual({
      message: 'agentls: The run reached its budget: 2 of 2 turns. Go on?',
      detail: 'Limit: 2 turns (this run) · used: 2 turns',
    });
    expect(modalQuestion({ ...base, title: 'Run the command: touch ../x' })).toEqual({
      message: 'agentls: Run the command: touch ../x',
      detail: '$ touch ../x',
    });
  });
});

describe('the settings and Agent: Set Budget', () => {
  it('the sandbox option: nothing for off, the mode and what is set otherwise', () => {
    expect(sandboxOption({ mode: 'off' })).toEqual({ problems: [] });
    expect(sandboxOption({ mode: 'off', network: true, fallback: 'refuse' })).toEqual({ problems: [] }); // nothing to confine
    expect(sandboxOption({})).toEqual({ problems: [] });
    expect(sandboxOption({ mode: 'workspace-write', network: false, writableRoots: [], fallback: 'refuse' })).toEqual({
      sandbox: { mode: 'workspace-write', network: false, fallback: 'refuse' },
      problems: [],
    });
    expect(sandboxOption({ mode: 'read-only', writableRoots: [' build ', ''] }).sandbox).toEqual({ mode: 'read-only', writableRoots: ['build'] });
  });

  it('the sandbox option leaves out what is not valid, and says so', () => {
    const bad = sandboxOption({ mode: 'strict' });
    expect(bad.sandbox).toBeUndefined();
    expect(bad.problems[0]).toContain('agentls.sandbox.mode');
    const partly = sandboxOption({ mode: 'workspace-write', network: 'yes', fallback: 'maybe', writableRoots: 'out' });
    expect(partly.sandbox).toEqual({ mode: 'workspace-write' });
    expect(partly.problems.map((p) => p.split(':')[0])).toEqual([
      'agentls.sandbox.network',
      'agentls.sandbox.writableRoots',
      'agentls.sandbox.fallback',
    ]);
  });

  it('the budget option: the limits set (0: none), what is not valid left out and named', () => {
    expect(budgetOption({ maxCostUsd: 0, maxTurns: 0, maxTokens: 0 })).toEqual({ problems: [] });
    expect(budgetOption({ maxCostUsd: 1.5, maxTurns: 2 })).toEqual({ budget: { maxCostUsd: 1.5, maxTurns: 2 }, problems: [] });
    const bad = budgetOption({ maxCostUsd: -1, maxTurns: 2.5, maxTokens: '100' });
    expect(bad.budget).toBeUndefined();
    expect(bad.problems).toEqual([
      'agentls.budget.maxCostUsd: must be more than 0; left out (no limit).',
      'agentls.budget.maxTurns: must be a whole number; left out (no limit).',
      'agentls.budget.maxTokens: not a number; left out (no limit).',
    ]);
  });

  it("parses an input box's limit: empty is none, dollars, whole turns, tokens with k and M", () => {
    expect(parseLimit('maxCostUsd', '')).toEqual({ value: null });
    expect(parseLimit('maxCostUsd', ' $1.50 ')).toEqual({ value: 1.5 });
    expect(parseLimit('maxCostUsd', '.5')).toEqual({ value: 0.5 });
    expect(parseLimit('maxTurns', '20')).toEqual({ value: 20 });
    expect(parseLimit('maxTokens', '200k')).toEqual({ value: 200_000 });
    expect(parseLimit('maxTokens', '1.5M')).toEqual({ value: 1_500_000 });
    expect(parseLimit('maxTokens', '200_000')).toEqual({ value: 200_000 });
    expect(parseLimit('maxTurns', '2.5')).toEqual({ error: 'The turns (model responses) must be a whole number.' });
    expect(parseLimit('maxTurns', '0')).toEqual({ error: 'The turns (model responses) must be more than 0.' });
    expect(parseLimit('maxCostUsd', '-1')).toMatchObject({ error: expect.stringContaining('Not a number') });
    expect(parseLimit('maxCostUsd', '2k')).toMatchObject({ error: expect.stringContaining('without k') });
    expect(parseLimit('maxTurns', 'ten')).toMatchObject({ error: expect.stringContaining('e.g. 20') });
  });

  it("Set Budget's budget: one scope's limits entered, the other's kept; limits shown again in the boxes", () => {
    const current = { maxCostUsd: 1, maxTurns: 10, session: { maxCostUsd: 5 } };
    expect(budgetWith(current, { maxCostUsd: 2, maxTurns: null, maxTokens: 1000 })).toEqual({
      maxCostUsd: 2,
      maxTokens: 1000,
      session: { maxCostUsd: 5 },
    });
    expect(budgetWith({}, { maxCostUsd: null, maxTurns: null, maxTokens: null })).toEqual({});
    expect(budgetWith(current, {})).toEqual(current);
    expect(budgetWith(current, { maxCostUsd: null, maxTurns: 100, maxTokens: null }, 'session')).toEqual({
      maxCostUsd: 1,
      maxTurns: 10,
      session: { maxTurns: 100 },
    });
    expect(budgetWith(current, { maxCostUsd: null, maxTurns: null, maxTokens: null }, 'session')).toEqual({ maxCostUsd: 1, maxTurns: 10 });
    expect(limitsText(current)).toBe('$1.00, 10 turns');
    expect(limitsText({ maxTokens: 200_000 })).toBe('200k tokens');
    expect(limitsText(undefined)).toBe('no limits');
    expect(limitText(1.5)).toBe('1.5');
    expect(limitText(undefined)).toBe('');
  });
});
