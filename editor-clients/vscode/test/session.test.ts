import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentNotification, EventNotification, QueueNotification, SettledNotification } from '../src/protocol';
import { chipFor } from '../src/attachments';
import { type AgentRpc, loadedNotice, nextPreset, SessionController } from '../src/session';

const recording = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'edit-run.json'), 'utf8')) as {
  notifications: { method: string; params: unknown }[];
};

const STATE = {
  sessionId: 's1',
  cwd: '/w',
  model: { provider: 'faux', id: 'faux-1' },
  thinkingLevel: 'off',
  isRunning: false,
  messageCount: 0,
  queue: { steering: [], followUp: [] },
  contextFiles: ['/w/AGENTS.md', '/home/u/.local/share/agentls/AGENTS.md'],
};

/** A fake server: canned answers per method, every request recorded. */
class FakeServer implements AgentRpc {
  readonly calls: { method: string; params: object }[] = [];
  answers: Record<string, (params: Record<string, unknown>) => unknown> = {
    'agent/newSession': () => ({ sessionId: 's1' }),
    'agent/getState': () => STATE,
    'agent/listModels': () => ({ models: [{ provider: 'faux', id: 'faux-1', name: 'faux-1' }] }),
    'agent/getStats': () => ({
      tokens: { input: 10, output: 5, cacheRead: 2, cacheWrite: 0, total: 17 },
      cost: 0.5,
      context: { tokens: 17, contextWindow: 100, percent: 17 },
    }),
    'agent/prompt': () => ({ runId: 'run-1' }),
    'agent/steer': () => ({ itemId: 'q1' }),
    'agent/clearQueue': (p) => ({ steering: [{ id: p.itemId, kind: 'steering', text: 'back' }], followUp: [] }),
    'agent/abort': () => ({ aborted: true, runId: 'run-1', queue: { steering: [], followUp: [] } }),
    'agent/bash': () => ({ bashId: `bash-${this.calls.filter((call) => call.method === 'agent/bash').length}` }),
    'agent/abortBash': () => ({ aborted: true }),
    'agent/compact': () => ({ summary: 'S', firstKeptEntryId: 'e1', tokensBefore: 3557, tokensAfter: 21 }),
    'agent/listCommands': () => ({
      commands: [
        { name: 'review', description: 'Review a file', kind: 'template', argumentHint: '<file>', path: '/w/p/review.md' },
      ],
    }),
  };

  async request<R>(method: string, params: object): Promise<R> {
    this.calls.push({ method, params });
    const answer = this.answers[method];
    if (!answer) throw new Error(`unexpected ${method}`);
    return answer(params as Record<string, unknown>) as R;
  }
}

/** A controller connected to a fake server, its session created; `answering` changes the server's answers first. */
async function started(answering?: (server: FakeServer) => void): Promise<{ server: FakeServer; c: SessionController }> {
  const server = new FakeServer();
  answering?.(server);
  const c = new SessionController(server, () => '/w');
  await c.connectionChanged(true);
  await c.ensureSession();
  return { server, c };
}

/** Prompt `text`; its run (run-1) starts the tool call `toolCallId`. */
async function runningTool(c: SessionController, text: string, toolCallId: string, toolName: string, args: Record<string, unknown>): Promise<void> {
  await c.prompt(text);
  c.handleEvent({ sessionId: 's1', runId: 'run-1', seq: 1, event: { type: 'tool_execution_start', toolCallId, toolName, args } });
}

function play(c: SessionController): void {
  for (const { method, params } of recording.notifications) {
    if (method === 'agent/event') c.handleEvent(params as EventNotification);
    else if (method === 'agent/queue') c.handleQueue(params as QueueNotification);
    else if (method === 'agent/settled') c.handleSettled(params as SettledNotification);
  }
}

describe('SessionController', () => {
  it('creates one session in the workspace folder, however many ask at once', async () => {
    const server = new FakeServer();
    const c = new SessionController(server, () => '/w');
    const [a, b] = await Promise.all([c.ensureSession(), c.ensureSession()]);
    expect([a, b]).toEqual(['s1', 's1']);
    expect(server.calls.filter((call) => call.method === 'agent/newSession')).toEqual([
      { method: 'agent/newSession', params: { cwd: '/w' } },
    ]);
    expect(c.header()).toMatchObject({ model: 'faux/faux-1', thinkingLevel: 'off', sessionId: 's1' });
  });

  it('is running from the prompt until its run settles', async () => {
    const { c } = await started();
    await c.prompt('hi');
    expect(c.status).toBe('running');
    expect(c.header().canContinue).toBe(false);
    play(c);
    expect(c.status).toBe('idle');
    expect(c.settled).toMatchObject([{ runId: 'run-1', stopReason: 'stop' }]);
    expect(c.transcript.rows.map((row) => row.kind)).toEqual(['user', 'thinking', 'text', 'tool', 'text']);
    expect(c.header().canContinue).toBe(false); // the assistant answered: nothing to continue
    c.handleQueue({ sessionId: 's1', steering: [], followUp: [{ id: 'q1', kind: 'followUp', text: 'more' }] });
    expect(c.header().canContinue).toBe(true);
  });

  it('does not go back to running when the prompt answer comes after the settle', async () => {
    const { c } = await started();
    play(c);
    await c.prompt('hi'); // the fake answers run-1, already settled
    expect(c.status).toBe('idle');
  });

  it('ignores notifications of other sessions', async () => {
    const { c } = await started();
    c.handleEvent({ sessionId: 'other', runId: 'r', seq: 1, event: { type: 'agent_start' } });
    c.handleQueue({ sessionId: 'other', steering: [{ id: 'x', kind: 'steering', text: 't' }], followUp: [] });
    expect(c.status).toBe('idle');
    expect(c.header().queue).toEqual([]);
  });

  it('sends the prompt box text as one agent/prompt whose whenBusy is Enter\'s steer or Alt+Enter\'s follow-up', async () => {
    const { server, c } = await started();
    await c.submit('one', 'steer');
    await c.submit('two', 'followUp');
    await c.submit('   ', 'steer');
    const sent = server.calls.filter((call) => ['agent/prompt', 'agent/steer', 'agent/followUp'].includes(call.method));
    expect(sent).toEqual([
      { method: 'agent/prompt', params: { sessionId: 's1', text: 'one', whenBusy: 'steer' } },
      { method: 'agent/prompt', params: { sessionId: 's1', text: 'two', whenBusy: 'followUp' } },
    ]);
  });

  it('steers a session the panel still thinks idle (the server decides, Enter steers)', async () => {
    const { server, c } = await started((s) => {
      s.answers['agent/prompt'] = () => ({ queued: 'q7' });
    });
    expect(c.isRunning).toBe(false);
    await c.submit('stop and use pytest', 'steer');
    expect(server.calls.at(-1)).toEqual({ method: 'agent/prompt', params: { sessionId: 's1', text: 'stop and use pytest', whenBusy: 'steer' } });
    expect(c.isRunning).toBe(false); // queued, no run of its own
  });

  it('removes a queued item at once and returns its text', async () => {
    const { c } = await started();
    c.handleQueue({ sessionId: 's1', steering: [{ id: 'q1', kind: 'steering', text: 'back' }], followUp: [] });
    expect(c.header().queue).toHaveLength(1);
    const removal = c.removeQueueItem('q1');
    expect(c.header().queue).toHaveLength(0);
    expect(await removal).toBe('back');
  });

  it('puts a queued item back when the server refuses the removal', async () => {
    const { server, c } = await started();
    server.answers['agent/clearQueue'] = () => {
      throw new Error('unknownQueueItem');
    };
    c.handleQueue({ sessionId: 's1', steering: [{ id: 'q1', kind: 'steering', text: 'x' }], followUp: [] });
    await expect(c.removeQueueItem('q1')).rejects.toThrow('unknownQueueItem');
    expect(c.header().queue).toHaveLength(1);
  });

  it('shows waiting for permission while a question is open', async () => {
    const { c } = await started();
    await runningTool(c, 'hi', 'c1', 'bash', { command: 'ls' });
    c.permissionPending('s1', 'c1', true);
    expect(c.status).toBe('permission');
    expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', status: 'permission' });
    c.permissionPending('s1', 'c1', false);
    expect(c.status).toBe('running');
    expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', status: 'running' });
  });

  describe('inline permission questions', () => {
    const PARAMS = {
      sessionId: 's1',
      toolCallId: 'c1',
      toolName: 'bash',
      args: { command: 'ls' },
      title: 'Run bash: ls',
      options: [
        { id: 'allowOnce', label: 'Allow once' },
        { id: 'allowAlways', label: 'Allow always' },
        { id: 'reject', label: 'Reject' },
      ],
    } as const;

    /** A cancellation token the test cancels (the server's $/cancelRequest). */
    function token(): { isCancellationRequested: boolean; cancel(): void; onCancellationRequested(l: () => void): { dispose(): void } } {
      const listeners = new Set<() => void>();
      return {
        isCancellationRequested: false,
        cancel() {
          this.isCancellationRequested = true;
          for (const l of listeners) l();
        },
        onCancellationRequested(l) {
          listeners.add(l);
          return { dispose: () => listeners.delete(l) };
        },
      };
    }

    async function asking(): Promise<SessionController> {
      const { c } = await started();
      await runningTool(c, 'hi', 'c1', 'bash', { command: 'ls' });
      c.permissionPending('s1', 'c1', true);
      return c;
    }

    it('puts the answers on the tool row; a click answers and takes them away', async () => {
      const c = await asking();
      const answer = c.askInline({ ...PARAMS, options: [...PARAMS.options] });
      expect(answer).toBeDefined();
      expect(c.transcript.rows[0]).toMatchObject({
        kind: 'tool',
        status: 'permission',
        question: [{ id: 'allowOnce' }, { id: 'allowAlways' }, { id: 'reject' }],
      });
      expect(c.openQuestions).toEqual(['c1']);
      expect(c.answerPermission('c1', 'allowAlways')).toBe(true);
      await expect(answer).resolves.toBe('allowAlways');
      expect(c.answerPermission('c1', 'reject')).toBe(false); // answered once
      c.permissionPending('s1', 'c1', false);
      expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', status: 'running' });
      expect(c.transcript.rows[0]).not.toHaveProperty('question');
    });

    it('shows the whole command on the card, newlines kept, until the question is answered', async () => {
      const { c } = await started();
      const command = `echo ${'word '.repeat(40)}\n  && touch done\x1b[2K`;
      await runningTool(c, 'hi', 'c1', 'bash', { command });
      c.permissionPending('s1', 'c1', true);
      void c.askInline({ ...PARAMS, args: { command }, options: [...PARAMS.options] });
      expect(c.transcript.rows[0]).toMatchObject({
        questionDetail: { kind: 'command', text: `echo ${'word '.repeat(40)}\n  && touch done\\x1b[2K` },
      });
      c.answerPermission('c1', 'allowOnce');
      expect(c.transcript.rows[0]).not.toHaveProperty('questionDetail');
    });

    it("shows a write's change against the file's text it is given", async () => {
      const { c } = await started();
      const args = { path: 'a.txt', content: 'one\ntwo\n' };
      await runningTool(c, 'hi', 'w1', 'write', args);
      c.permissionPending('s1', 'w1', true);
      void c.askInline({ ...PARAMS, toolCallId: 'w1', toolName: 'write', args, options: [...PARAMS.options] }, undefined, 'one\n');
      expect(c.transcript.rows[0]).toMatchObject({
        questionDetail: { kind: 'diff', diff: { file: 'a.txt', lines: [{ kind: 'ctx', text: 'one' }, { kind: 'add', text: 'two' }] } },
      });
    });

    it("the row's summary and answers show control characters written out", async () => {
      const { c } = await started();
      await runningTool(c, 'hi', 'c1', 'bash', { command: 'touch PWNED #\r\x1b[2KRun: ls' });
      c.permissionPending('s1', 'c1', true);
      const options = [{ id: 'allowAlwaysServer' as const, label: 'Allow always: every tool of \u202eevil' }, PARAMS.options[2]];
      c.askInline({ ...PARAMS, options });
      expect(c.transcript.rows[0]).toMatchObject({
        summary: 'touch PWNED #\\r\\x1b[2KRun: ls',
        question: [{ label: 'Allow always: every tool of \\u202eevil' }, { label: 'Reject' }],
      });
    });

    it('a question the server cancels (an abort) is a rejection and leaves the row', async () => {
      const c = await asking();
      const cancel = token();
      const answer = c.askInline({ ...PARAMS, options: [...PARAMS.options] }, cancel);
      cancel.cancel();
      await expect(answer).resolves.toBe('reject');
      expect(c.openQuestions).toEqual([]);
      expect(c.transcript.rows[0]).not.toHaveProperty('question');
    });

    it('cannot ask about a call of another session or one without a row (the modal asks then)', async () => {
      const c = await asking();
      expect(c.askInline({ ...PARAMS, options: [...PARAMS.options], sessionId: 'other' })).toBeUndefined();
      expect(c.askInline({ ...PARAMS, options: [...PARAMS.options], toolCallId: 'unseen' })).toBeUndefined();
    });

    it('rejects the open questions when the server stops', async () => {
      const c = await asking();
      const answer = c.askInline({ ...PARAMS, options: [] }); // no options: the default three
      expect(c.transcript.rows[0]).toMatchObject({ question: [{ id: 'allowOnce' }, { id: 'allowAlways' }, { id: 'reject' }] });
      await c.connectionChanged(false);
      await expect(answer).resolves.toBe('reject');
    });
  });

  it('shows a change waiting for review on its tool row and in the status, and lists every pending review', async () => {
    const { c } = await started();
    await runningTool(c, 'edit it', 'c1', 'edit', { path: 'm.py', edits: [] });
    const review = { id: 1, sessionId: 's1', toolCallId: 'c1', toolName: 'edit', path: 'm.py' };
    const elsewhere = { id: 2, sessionId: 'other', toolCallId: 'c9', toolName: 'write', path: 'n.py' };
    c.setReviews([elsewhere]);
    expect(c.status).toBe('running'); // another session's review
    c.setReviews([elsewhere, review]);
    expect(c.status).toBe('review');
    expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', status: 'review' });
    expect(c.header().reviews).toEqual([elsewhere, review]);
    c.setReviews([elsewhere]);
    expect(c.status).toBe('running');
    expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', status: 'running' });
    expect(c.header().reviews).toEqual([elsewhere]);
  });

  it('passes the permissions of a new session to agent/newSession', async () => {
    const { server, c } = await started();
    await c.newSession({ permissions: { edit: 'review', write: 'review' } });
    expect(server.calls.filter((call) => call.method === 'agent/newSession').at(-1)?.params).toEqual({
      cwd: '/w',
      permissions: { edit: 'review', write: 'review' },
    });
  });

  it('adds up the figures from agent/getStats', async () => {
    const { c } = await started();
    await c.refreshStats();
    expect(c.header().stats).toEqual({ input: 10, output: 5, cacheRead: 2, cacheWrite: 0, cost: 0.5, contextPercent: 17 });
  });

  it('is idle after an abort', async () => {
    const { c } = await started();
    await c.prompt('hi');
    const result = await c.abort();
    expect(result?.aborted).toBe(true);
    expect(c.status).toBe('idle');
  });
});

const commandsRecording = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'bash-compact-run.json'), 'utf8')) as {
  notifications: AgentNotification[];
};

describe('SessionController: permission presets', () => {
  const PRESETS = [
    { id: 'ask', name: 'Ask before edits', description: 'Asks before every edit and command.' },
    { id: 'acceptEdits', name: 'Accept edits', description: 'Edits run; commands ask.' },
    { id: 'plan', name: 'Read-only', description: 'Reads only.' },
    { id: 'bypass', name: 'Bypass permissions', description: 'Everything runs unasked.' },
  ];

  /** A server with presets: agent/setPermissionPreset answers the state with the new preset. */
  async function withPresets(): Promise<{ server: FakeServer; c: SessionController }> {
    let preset = 'acceptEdits';
    return started((server) => {
      server.answers['agent/getState'] = () => ({ ...STATE, permissionPreset: preset, permissionPresets: PRESETS });
      server.answers['agent/setPermissionPreset'] = (p) => {
        preset = String(p.preset);
        return { ...STATE, permissionPreset: preset, permissionPresets: PRESETS };
      };
    });
  }

  it("shows the session's preset and the next one in the header", async () => {
    const { c } = await withPresets();
    expect(c.header()).toMatchObject({ permissionPreset: PRESETS[1], nextPermissionPreset: PRESETS[2] });
  });

  it('cycles through the presets in the order of agent/getState, wrapping, with agent/setPermissionPreset', async () => {
    const { server, c } = await withPresets();
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(await c.cyclePermissionPreset());
    expect(seen).toEqual(['plan', 'bypass', 'ask', 'acceptEdits']);
    expect(server.calls.filter((call) => call.method === 'agent/setPermissionPreset').map((call) => call.params)).toEqual(
      seen.map((preset) => ({ sessionId: 's1', preset })),
    );
    expect(c.header().permissionPreset?.name).toBe('Accept edits');
  });

  it('shows no toggle, and says so when cycled, with a server without presets', async () => {
    const { c } = await started();
    expect(c.header()).not.toHaveProperty('permissionPreset');
    await expect(c.cyclePermissionPreset()).rejects.toThrow(/no permission presets/);
  });

  it('nextPreset starts at the first preset when the current one is unknown', () => {
    expect(nextPreset(PRESETS, 'nope')?.id).toBe('ask');
    expect(nextPreset([], 'ask')).toBeUndefined();
  });
});

describe('SessionController: user commands, compaction, templates', () => {
  it('runs !cmd and !!cmd from the prompt box as agent/bash, whatever the mode', async () => {
    const { server, c } = await started();
    await c.submit('!ls -la', 'steer');
    c.handleNotification({ method: 'agent/bashEnd', params: { sessionId: 's1', bashId: 'bash-1', message: {
      role: 'bashExecution', command: 'ls -la', output: '', exitCode: 0, cancelled: false, truncated: false, timestamp: 1,
    } } });
    await c.submit('  !!git status', 'steer');
    const sent = server.calls.filter((call) => ['agent/bash', 'agent/prompt', 'agent/steer'].includes(call.method));
    expect(sent).toEqual([
      { method: 'agent/bash', params: { sessionId: 's1', command: 'ls -la', excludeFromContext: false } },
      { method: 'agent/bash', params: { sessionId: 's1', command: 'git status', excludeFromContext: true } },
    ]);
  });

  it('is running a command from agent/bash until its agent/bashEnd, and refuses a second one meanwhile', async () => {
    const { server, c } = await started();
    await c.bash('sleep 9', false);
    expect(c.header()).toMatchObject({ bashRunning: true, status: 'idle' });
    expect(c.transcript.rows).toMatchObject([{ kind: 'bash', id: 'bash:bash-1', command: 'sleep 9', status: 'running' }]);
    await expect(c.submit('!ls', 'steer')).rejects.toThrow('A command is already running');
    expect(await c.abortBash()).toBe(true);
    expect(server.calls.at(-1)).toEqual({ method: 'agent/abortBash', params: { sessionId: 's1' } });
    c.handleNotification({ method: 'agent/bashEnd', params: { sessionId: 's1', bashId: 'bash-1', message: {
      role: 'bashExecution', command: 'sleep 9', output: '', exitCode: null, cancelled: true, truncated: false, timestamp: 1,
    } } });
    expect(c.header().bashRunning).toBe(false);
    expect(c.transcript.rows).toMatchObject([{ kind: 'bash', status: 'cancelled' }]);
  });

  it('does not take the events of a message joining between runs (runId null) for a run', async () => {
    const { c } = await started();
    for (const note of commandsRecording.notifications.slice(0, 4)) c.handleNotification(note);
    expect(c.status).toBe('idle');
    expect(c.transcript.rows).toMatchObject([{ kind: 'bash', command: 'echo hi', status: 'done' }]);
    expect(c.lastRole).toBe('bashExecution');
  });

  it('plays the recorded commands and compaction into rows, refreshing the figures after the compaction', async () => {
    const { server, c } = await started();
    const notes = commandsRecording.notifications;
    const end = notes.at(-1);
    expect(end).toMatchObject({ method: 'agent/compaction', params: { phase: 'end' } });
    for (const note of notes.slice(0, -1)) c.handleNotification(note);
    // the summary message came between the start and the end: one row, running until the end
    const summary = expect.stringContaining('## Goal');
    expect(c.transcript.rows.at(-1)).toMatchObject({ kind: 'compaction', status: 'running', summary });
    expect(c.lastRole).toBe('compactionSummary');
    const statsCalls = (): number => server.calls.filter((call) => call.method === 'agent/getStats').length;
    const before = statsCalls();
    if (end) c.handleNotification(end);
    expect(statsCalls()).toBe(before + 1);
    expect(c.transcript.rows.at(-1)).toMatchObject({ kind: 'compaction', status: 'done', tokensBefore: 3557, tokensAfter: 21 });
    expect(c.transcript.rows.map((row) => row.kind)).toEqual(['bash', 'user', 'text', 'bash', 'bash', 'compaction']);
    expect(c.status).toBe('idle');
  });

  it('ignores commands and compactions of other sessions', async () => {
    const { c } = await started();
    c.handleNotification({ method: 'agent/bashOutput', params: { sessionId: 'other', bashId: 'b', chunk: 'x' } });
    c.handleNotification({
      method: 'agent/compaction',
      params: { sessionId: 'other', phase: 'start', reason: 'manual', tokensBefore: 1 },
    });
    expect(c.transcript.rows).toEqual([]);
  });

  it('compacts with the instructions given, and without when there are none', async () => {
    const { server, c } = await started();
    expect(await c.compact('Keep the API decisions.')).toMatchObject({ tokensBefore: 3557, tokensAfter: 21 });
    await c.compact();
    expect(server.calls.filter((call) => call.method === 'agent/compact')).toEqual([
      { method: 'agent/compact', params: { sessionId: 's1', instructions: 'Keep the API decisions.' } },
      { method: 'agent/compact', params: { sessionId: 's1' } },
    ]);
  });

  it('lists the templates and skills of agent/listCommands', async () => {
    const { server, c } = await started();
    expect(await c.listCommands()).toMatchObject([{ name: 'review', argumentHint: '<file>' }]);
    expect(server.calls.at(-1)).toEqual({ method: 'agent/listCommands', params: { sessionId: 's1' } });
  });

  it('shows the context files of agent/getState, refreshed when a run settles', async () => {
    const { server, c } = await started();
    expect(c.header()).toMatchObject({ cwd: '/w', contextFiles: ['/w/AGENTS.md', '/home/u/.local/share/agentls/AGENTS.md'] });
    server.answers['agent/getState'] = () => ({ ...STATE, contextFiles: ['/w/AGENTS.md', '/w/sub/CLAUDE.md'] });
    c.handleSettled({ sessionId: 's1', runId: 'run-9', stopReason: 'stop' });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(c.header().contextFiles).toEqual(['/w/AGENTS.md', '/w/sub/CLAUDE.md']);
  });

  it('sends the prompt box chips as context with a prompt, steer or follow-up, then clears them', async () => {
    const { server, c } = await started();
    server.answers['agent/followUp'] = () => ({ itemId: 'q2' });
    const sel = chipFor(
      { type: 'selection', uri: 'file:///w/calc.py', range: { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } } },
      'calc.py',
    );
    const readme = chipFor({ type: 'file', uri: 'file:///w/README.md' }, 'README.md');
    c.addAttachment(sel);
    c.addAttachment(readme);
    c.addAttachment(readme);
    expect(c.header().attachments.map((chip) => chip.label)).toEqual(['calc.py:3-4', 'README.md']);
    await c.submit('!ls', 'steer'); // a command takes no attachments
    expect(c.header().attachments).toHaveLength(2);
    await c.submit('why?', 'steer');
    expect(server.calls.find((call) => call.method === 'agent/prompt')?.params).toEqual({
      sessionId: 's1',
      text: 'why?',
      context: [sel.attachment, readme.attachment],
      whenBusy: 'steer',
    });
    expect(c.header().attachments).toEqual([]);
    c.addAttachment(readme);
    await c.submit('steer', 'steer');
    c.addAttachment(sel);
    c.removeAttachment(0);
    await c.submit('later', 'followUp');
    const queued = server.calls.filter((call) => call.method === 'agent/prompt').slice(1);
    expect(queued.map((call) => call.params)).toEqual([
      { sessionId: 's1', text: 'steer', context: [readme.attachment], whenBusy: 'steer' },
      { sessionId: 's1', text: 'later', whenBusy: 'followUp' },
    ]);
  });

  it('keeps the chips when the server refuses the message', async () => {
    const { server, c } = await started();
    server.answers['agent/prompt'] = () => {
      throw new Error('context[0]: not a file');
    };
    c.addAttachment(chipFor({ type: 'file', uri: 'file:///elsewhere/x' }, '/elsewhere/x'));
    await expect(c.submit('hi', 'steer')).rejects.toThrow('context[0]');
    expect(c.header().attachments).toHaveLength(1);
  });

  it('offers the editor selection as a chip until it is added', async () => {
    const { c } = await started();
    const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 3 } };
    const sel = chipFor({ type: 'selection', uri: 'file:///w/a.py', range }, 'a.py');
    let changes = 0;
    c.onChange(() => changes++);
    c.setSuggestion(sel);
    c.setSuggestion(chipFor({ type: 'selection', uri: 'file:///w/a.py', range }, 'a.py')); // the same: no change
    expect(changes).toBe(1);
    expect(c.header().suggestion?.label).toBe('a.py:1-2');
    c.addSuggestion();
    expect(c.header().attachments.map((chip) => chip.label)).toEqual(['a.py:1-2']);
    expect(c.header().suggestion).toBeUndefined(); // added already
    c.setSuggestion(undefined);
    c.addSuggestion();
    expect(c.header().attachments).toHaveLength(1);
  });
});

describe('SessionController sessions', () => {
  const stored = [
    { sessionId: 's9', cwd: '/w', title: 'Fix the tests', createdAt: 1, updatedAt: 2, messageCount: 1, loaded: false },
    { sessionId: 's8', cwd: '/w', createdAt: 1, updatedAt: 2, messageCount: 0, loaded: false },
  ];
  /** A started session whose server then answers from `stored`. */
  async function withStore(): Promise<{ server: FakeServer; c: SessionController }> {
    const { server, c } = await started();
    server.answers['agent/listSessions'] = () => ({ sessions: stored });
    server.answers['agent/loadSession'] = (p) => ({ sessionId: p.sessionId, messageCount: 1 });
    server.answers['agent/getMessages'] = () => ({ messages: [{ role: 'user', content: 'hi', timestamp: 1 }], total: 1 });
    server.answers['agent/deleteSession'] = () => ({ deleted: true });
    return { server, c };
  }
  const notices = (c: SessionController) => c.transcript.rows.filter((row) => row.kind === 'notice').map((row) => row.kind === 'notice' && row.text);

  it('names a loaded session by its title, looked up when not given, else by its id', async () => {
    const { server, c } = await withStore();
    await c.loadSession('s9');
    expect(notices(c)).toEqual(['Loaded "Fix the tests" (1 message).']);
    expect(server.calls.filter((call) => call.method === 'agent/listSessions')).toEqual([
      { method: 'agent/listSessions', params: { cwd: '/w' } },
    ]);
    await c.loadSession('s9', 'Given title');
    expect(notices(c)).toEqual(['Loaded "Given title" (1 message).']);
    expect(server.calls.filter((call) => call.method === 'agent/listSessions')).toHaveLength(1);
    await c.loadSession('s8');
    expect(notices(c)).toEqual(['Loaded session s8 (1 message).']);
  });

  it('renames a session with agent/renameSession: the stored name, null when cleared', async () => {
    const { server, c } = await withStore();
    server.answers['agent/renameSession'] = (p) => ({ name: p.name === '' ? null : p.name });
    expect(await c.renameSession('s9', 'Tests, fixed')).toBe('Tests, fixed');
    expect(await c.renameSession('s9', '')).toBeNull();
    expect(server.calls.filter((call) => call.method === 'agent/renameSession')).toEqual([
      { method: 'agent/renameSession', params: { sessionId: 's9', name: 'Tests, fixed' } },
      { method: 'agent/renameSession', params: { sessionId: 's9', name: '' } },
    ]);
    expect(c.sessionId).toBe('s1'); // renaming another session keeps the current one
  });

  it('a failed title lookup still loads the session', async () => {
    const { server, c } = await withStore();
    delete server.answers['agent/listSessions'];
    await c.loadSession('s9');
    expect(c.sessionId).toBe('s9');
    expect(notices(c)).toEqual(['Loaded session s9 (1 message).']);
  });

  it('the server restarted: the notice has the title too', async () => {
    const { c } = await withStore();
    await c.loadSession('s9');
    await c.connectionChanged(false);
    await c.connectionChanged(true);
    expect(c.sessionId).toBe('s9');
    expect(notices(c)).toEqual(['Loaded "Fix the tests" (1 message).']);
  });

  it('deletes a stored session; deleting the current one starts a new session', async () => {
    const { server, c } = await withStore();
    expect(await c.deleteSession('s9')).toBe(true);
    expect(c.sessionId).toBe('s1');
    expect(server.calls.filter((call) => call.method === 'agent/newSession')).toHaveLength(1);
    await c.deleteSession('s1');
    expect(server.calls.filter((call) => call.method === 'agent/deleteSession').map((call) => call.params)).toEqual([
      { sessionId: 's9' },
      { sessionId: 's1' },
    ]);
    expect(server.calls.filter((call) => call.method === 'agent/newSession')).toHaveLength(2);
    expect(c.sessionId).toBe('s1');
  });

  it('cuts a long title and flattens its whitespace', () => {
    expect(loadedNotice('id', 'a\n  b', 3)).toBe('Loaded "a b" (3 messages).');
    expect(loadedNotice('id', 'x'.repeat(100), 2)).toBe(`Loaded "${'x'.repeat(79)}…" (2 messages).`);
    expect(loadedNotice('id', '  ', 0)).toBe('Loaded session id (0 messages).');
  });

  describe('the session tree', () => {
    const text = (t: string) => [{ type: 'text', text: t }];
    /** The stored branch: a first prompt and its answer, a second prompt whose run edited a file. */
    const FULL = [
      { role: 'user', content: text('one'), timestamp: 1 },
      { role: 'assistant', content: text('ok'), timestamp: 2 },
      { role: 'user', content: text('two'), timestamp: 3 },
      { role: 'assistant', content: text('edited a.txt'), timestamp: 4 },
    ];
    const TREE = {
      leafId: 'e4',
      entries: FULL.map((m, i) => ({
        id: `e${i + 1}`,
        parentId: i === 0 ? null : `e${i}`,
        type: 'message',
        role: m.role,
        preview: m.content[0]?.text,
        timestamp: m.timestamp,
        onBranch: true,
      })),
      branches: [{ leafId: 'e4', preview: 'edited a.txt', timestamp: 4, messageCount: 4, current: true }],
    };
    const REWOUND = { leafId: 'e2', messageCount: 2, reverted: [{ path: 'a.txt', action: 'reverted' }], skipped: [] };

    /** A session showing FULL; `stored` is what agent/getMessages answers from now on. */
    async function onTree(): Promise<{ server: FakeServer; c: SessionController; stored: { messages: unknown[] } }> {
      const { server, c } = await started();
      const stored = { messages: FULL as unknown[] };
      server.answers['agent/getMessages'] = () => ({
        messages: stored.messages,
        total: stored.messages.length,
        entryIds: stored.messages.map((_, i) => `e${i + 1}`),
      });
      server.answers['agent/getTree'] = () => TREE;
      await c.reloadTranscript();
      return { server, c, stored };
    }
    const userRowId = (c: SessionController, t: string): string =>
      c.transcript.rows.find((row) => row.kind === 'user' && row.text === t)?.id ?? '?';
    const count = (server: FakeServer, method: string): number => server.calls.filter((call) => call.method === method).length;
    const shown = (c: SessionController): string[] =>
      c.transcript.rows.map((row) => (row.kind === 'user' || row.kind === 'text' || row.kind === 'notice' ? row.text : row.kind));

    it('finds the entry before a user message (null before the first), and its text', async () => {
      const { c } = await onTree();
      await expect(c.messageTarget(userRowId(c, 'two'))).resolves.toEqual({ entryId: 'e2', text: 'two' });
      await expect(c.messageTarget(userRowId(c, 'one'))).resolves.toEqual({ entryId: null, text: 'one' });
      const answer = c.transcript.rows.find((row) => row.kind === 'text')?.id ?? '?';
      await expect(c.messageTarget(answer)).rejects.toThrow('no longer in the transcript');
    });

    it('rewinds, then shows the branch once whether agent/branch comes before or after the result', async () => {
      for (const order of ['notification first', 'result first'] as const) {
        const { server, c, stored } = await onTree();
        const note = { method: 'agent/branch', params: { sessionId: 's1', leafId: 'e2', messageCount: 2 } } as const;
        server.answers['agent/rewind'] = () => {
          stored.messages = FULL.slice(0, 2);
          if (order === 'notification first') c.handleNotification(note);
          return REWOUND;
        };
        const before = count(server, 'agent/getMessages');
        const result = await c.rewind('e2', { files: true, summarize: false });
        if (order === 'result first') c.handleNotification(note);
        await Promise.resolve();
        expect(result).toEqual(REWOUND);
        expect(server.calls.filter((call) => call.method === 'agent/rewind').map((call) => call.params)).toEqual([
          { sessionId: 's1', entryId: 'e2', files: true, summarize: false },
        ]);
        expect(count(server, 'agent/getMessages') - before).toBe(1);
        expect(shown(c)).toEqual(['one', 'ok', 'Rewound: reverted a.txt.']);
        expect(c.lastRole).toBe('assistant');
      }
    });

    it('sends force when asked, and a switch of branch with its files', async () => {
      const { server, c } = await onTree();
      server.answers['agent/rewind'] = () => ({ ...REWOUND, skipped: [{ path: 'b.txt', reason: 'changed since' }] });
      server.answers['agent/switchBranch'] = () => ({ leafId: 'e4', messageCount: 4, reverted: [{ path: 'a.txt', action: 'applied' }], skipped: [] });
      await c.rewind(null, { files: false, summarize: true, force: true });
      const notice = c.transcript.rows.at(-1);
      expect(notice).toMatchObject({ kind: 'notice', level: 'warning', text: 'Rewound: reverted a.txt. Skipped: b.txt (changed since).' });
      await c.switchBranch('e4', { files: true, summarize: false });
      expect(server.calls.filter((call) => call.method === 'agent/rewind' || call.method === 'agent/switchBranch').map((call) => call.params)).toEqual([
        { sessionId: 's1', entryId: null, files: false, summarize: true, force: true },
        { sessionId: 's1', entryId: 'e4', files: true, summarize: false },
      ]);
      expect(shown(c).at(-1)).toBe('Switched branch: applied again a.txt.');
    });

    it('reloads on agent/branch of its session only, and again for the same leaf after a new message', async () => {
      const { server, c } = await onTree();
      const before = count(server, 'agent/getMessages');
      const branch = (sessionId: string) =>
        c.handleNotification({ method: 'agent/branch', params: { sessionId, leafId: 'e2', messageCount: 2 } });
      branch('other');
      branch('s1');
      branch('s1'); // the same move: one reload
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(count(server, 'agent/getMessages') - before).toBe(1);
      c.handleEvent({ sessionId: 's1', runId: null, seq: 1, event: { type: 'message_end', message: { role: 'user', content: 'x' } } });
      branch('s1'); // rewound to the same entry again later
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(count(server, 'agent/getMessages') - before).toBe(2);
    });

    it('counts the branches for the header, 0 for a server without agent/getTree', async () => {
      const { server, c } = await onTree();
      expect(c.header().branches).toBe(1);
      server.answers['agent/getTree'] = () => ({ ...TREE, branches: [...TREE.branches, { ...TREE.branches[0], leafId: 'e2', current: false }] });
      await c.refreshBranches();
      expect(c.header().branches).toBe(2);
      delete server.answers['agent/getTree'];
      await c.refreshBranches();
      expect(c.header().branches).toBe(0);
    });

    it('forks at an entry into a new session it shows; before the first message, a new session in its folder', async () => {
      const { server, c } = await onTree();
      server.answers['agent/fork'] = () => ({ sessionId: 's2' });
      server.answers['agent/loadSession'] = (p) => ({ sessionId: p.sessionId, messageCount: 2 });
      server.answers['agent/listSessions'] = () => ({ sessions: [] });
      server.answers['agent/getState'] = (p) => ({ ...STATE, sessionId: p.sessionId, cwd: '/w/sub' });
      expect(await c.fork('e2')).toBe('s2');
      expect(server.calls.find((call) => call.method === 'agent/fork')?.params).toEqual({ sessionId: 's1', entryId: 'e2' });
      expect(c.sessionId).toBe('s2');
      expect(shown(c).at(-1)).toMatch(/^Forked: .*the original is unchanged/);
      server.answers['agent/newSession'] = () => ({ sessionId: 's3' });
      expect(await c.fork(null)).toBe('s3');
      expect(server.calls.filter((call) => call.method === 'agent/newSession').at(-1)?.params).toEqual({ cwd: '/w/sub' });
      expect(count(server, 'agent/fork')).toBe(1);
    });

    it('edits and moves a queued item at once, then shows the queue the server answers; undoes a refusal', async () => {
      const { server, c } = await started();
      const items = [
        { id: 'q1', kind: 'steering', text: 'a' },
        { id: 'q2', kind: 'steering', text: 'b' },
      ] as const;
      c.handleQueue({ sessionId: 's1', steering: [...items], followUp: [] });
      let seen: string[] = [];
      server.answers['agent/editQueueItem'] = (p) => {
        seen = c.header().queue.map((item) => item.text); // the view while the request is out
        return { steering: [{ ...items[0], text: `${p.text} (expanded)` }, items[1]], followUp: [] };
      };
      await c.editQueueItem('q1', '/tpl');
      expect(seen).toEqual(['/tpl', 'b']);
      expect(c.header().queue.map((item) => item.text)).toEqual(['/tpl (expanded)', 'b']);
      server.answers['agent/moveQueueItem'] = (p) => {
        seen = c.header().queue.map((item) => item.id);
        return p.index === 0 ? { steering: [items[1], items[0]], followUp: [] } : { steering: [...items], followUp: [] };
      };
      await c.moveQueueItem('q2', -1);
      expect(seen).toEqual(['q2', 'q1']);
      expect(server.calls.filter((call) => call.method === 'agent/moveQueueItem').map((call) => call.params)).toEqual([
        { sessionId: 's1', itemId: 'q2', index: 0 },
      ]);
      server.answers['agent/editQueueItem'] = () => {
        throw new Error('unknownQueueItem');
      };
      const before = c.header().queue;
      await expect(c.editQueueItem('q2', 'new')).rejects.toThrow('unknownQueueItem');
      expect(c.header().queue).toEqual(before);
      await c.moveQueueItem('nope', 1); // not queued: nothing asked
      expect(server.calls.filter((call) => call.method === 'agent/moveQueueItem')).toHaveLength(1);
    });
  });
});


describe('SessionController: MCP servers', () => {
  const quirky = {
    name: 'quirky',
    source: '/w/.mcp.json',
    transport: 'stdio' as const,
    status: 'starting' as const,
    tools: [] as string[],
    cwd: '/w',
  };

  const withMcp = (): Promise<{ server: FakeServer; c: SessionController }> =>
    started((server) => {
      server.answers['agent/listMcpServers'] = () => ({ servers: [quirky] });
      server.answers['agent/restartMcpServer'] = (p) => ({ ...quirky, name: p.name, status: 'starting', tools: [] });
    });

  it('lists the servers of a new session, for the header', async () => {
    const { server, c } = await withMcp();
    expect(server.calls.filter((call) => call.method === 'agent/listMcpServers').map((call) => call.params)).toEqual([
      { sessionId: 's1' },
    ]);
    expect(c.header().mcp).toMatchObject([{ name: 'quirky', status: 'starting', statusLine: 'starting' }]);
    expect(c.header().mcpButton).toMatchObject({ text: 'MCP 0/1', status: 'starting' });
  });

  it('follows agent/mcpStatus of the session\'s folder', async () => {
    const { c } = await withMcp();
    let changes = 0;
    c.onChange(() => changes++);
    c.handleNotification({
      method: 'agent/mcpStatus',
      params: { ...quirky, status: 'ready', tools: ['mcp__quirky__echo'] },
    });
    expect(changes).toBe(1);
    expect(c.header().mcp).toMatchObject([{ status: 'ready', statusLine: 'ready · 1 tool', tools: ['echo'] }]);
    // another folder's server of the same name changes nothing
    c.handleNotification({ method: 'agent/mcpStatus', params: { ...quirky, cwd: '/other', status: 'failed' } });
    expect(changes).toBe(1);
    expect(c.mcpServers[0]?.status).toBe('ready');
  });

  it('fetches the list again for a server of this folder it does not know', async () => {
    const { server, c } = await withMcp();
    server.answers['agent/listMcpServers'] = () => ({ servers: [quirky, { ...quirky, name: 'second' }] });
    c.handleNotification({ method: 'agent/mcpStatus', params: { ...quirky, name: 'second' } });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(c.mcpServers.map((s) => s.name)).toEqual(['quirky', 'second']);
  });

  it('restarts a server and shows its new entry at once', async () => {
    const { server, c } = await withMcp();
    c.handleNotification({ method: 'agent/mcpStatus', params: { ...quirky, status: 'failed', error: 'boom' } });
    const entry = await c.restartMcpServer('quirky');
    expect(entry.status).toBe('starting');
    expect(server.calls.at(-1)).toEqual({ method: 'agent/restartMcpServer', params: { name: 'quirky', sessionId: 's1' } });
    expect(c.mcpServers).toEqual([{ ...quirky, status: 'starting', tools: [] }]);
  });

  it('shows the mistakes of the MCP configuration (problems), the button in the error colour', async () => {
    const { c } = await started((server) => {
      server.answers['agent/listMcpServers'] = () => ({ servers: [], problems: ['/w/.mcp.json: mcpServers.x.command: not a string'] });
    });
    expect(c.header().mcpProblems).toEqual(['/w/.mcp.json: mcpServers.x.command: not a string']);
    expect(c.header().mcpButton).toMatchObject({ text: 'MCP', status: 'failed' });
  });

  it('has no servers with a server that does not know MCP, and says why', async () => {
    const { c } = await started(); // the fake answers no agent/listMcpServers
    expect(c.mcpServers).toEqual([]);
    expect(c.mcpError).toMatch(/agent\/listMcpServers/);
    expect(c.header().mcp).toEqual([]);
  });

  it('forgets the servers when the server stops, and lists them again for a loaded session', async () => {
    const { server, c } = await withMcp();
    await c.connectionChanged(false);
    expect(c.mcpServers).toEqual([]);
    server.answers['agent/loadSession'] = () => ({});
    server.answers['agent/getMessages'] = () => ({ messages: [] });
    server.answers['agent/listSessions'] = () => ({ sessions: [] });
    server.answers['agent/getTree'] = () => ({ entries: [], branches: [] });
    await c.connectionChanged(true);
    expect(c.mcpServers.map((s) => s.name)).toEqual(['quirky']);
  });

  it('asks an MCP tool\'s question with its fourth answer, allow always for the server', async () => {
    const { c } = await withMcp();
    await runningTool(c, 'echo', 'm1', 'mcp__quirky__echo', { text: 'hi' });
    c.permissionPending('s1', 'm1', true);
    const options = [
      { id: 'allowOnce', label: 'Allow once' },
      { id: 'allowAlways', label: 'Allow always' },
      { id: 'allowAlwaysServer', label: 'Allow all quirky tools' },
      { id: 'reject', label: 'Reject' },
    ] as const;
    const answer = c.askInline({ sessionId: 's1', toolCallId: 'm1', toolName: 'mcp__quirky__echo', args: { text: 'hi' }, title: 'Run quirky echo', options: [...options] });
    expect(c.transcript.rows[0]).toMatchObject({ kind: 'tool', name: 'mcp__quirky__echo', question: options });
    c.answerPermission('m1', 'allowAlwaysServer');
    await expect(answer).resolves.toBe('allowAlwaysServer');
  });
});

describe('SessionController: the sandbox and the budget', () => {
  const SANDBOX = {
    mode: 'workspace-write',
    network: false,
    writableRoots: ['/w', '/tmp/t'],
    readOnly: ['/w/.git'],
    fallback: 'refuse',
    status: 'enforced',
  };
  const BUDGET = { limits: { maxTurns: 2, maxCostUsd: 1 }, run: { costUsd: 0.12, tokens: 300, turns: 1 }, session: { costUsd: 0.12, tokens: 300, turns: 1 } };
  const withState = (extra: Record<string, unknown>) => (server: FakeServer): void => {
    server.answers['agent/getState'] = () => ({ ...STATE, ...extra });
  };

  it('the header has the sandbox badge and the spend against the budget of agent/getState', async () => {
    const { c } = await started(withState({ sandbox: SANDBOX, budget: BUDGET }));
    expect(c.header()).toMatchObject({
      sandbox: { text: 'sandbox: workspace-write · no network', status: 'enforced' },
      budget: { text: '$0.12 / $1.00 · 1/2 turns', reached: false },
    });
  });

  it('a refused sandbox shows as such, with the reason; an older server shows neither', async () => {
    const refused = { ...SANDBOX, status: 'refused', reason: 'this kernel has no Landlock' };
    const { c } = await started(withState({ sandbox: refused, budget: { ...BUDGET, limits: {} } }));
    expect(c.header().sandbox).toMatchObject({ text: 'sandbox refused: workspace-write', status: 'refused' });
    expect(c.header().sandbox?.title).toContain('this kernel has no Landlock');
    expect(c.header()).not.toHaveProperty('budget'); // no limits
    const { c: old } = await started();
    expect(old.header()).not.toHaveProperty('sandbox');
    expect(old.header()).not.toHaveProperty('budget');
  });

  it('the spend is read again at each turn end and when the run settles', async () => {
    let turns = 1;
    const { server, c } = await started((s) => {
      s.answers['agent/getState'] = () => ({ ...STATE, budget: { ...BUDGET, run: { ...BUDGET.run, turns } } });
    });
    await c.prompt('go');
    turns = 2;
    const before = server.calls.filter((call) => call.method === 'agent/getState').length;
    const message = { role: 'assistant', content: [], stopReason: 'toolUse', timestamp: 1 } as never;
    c.handleEvent({ sessionId: 's1', runId: 'run-1', seq: 1, event: { type: 'turn_end', message, toolResults: [] } });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(server.calls.filter((call) => call.method === 'agent/getState').length).toBe(before + 1);
    expect(c.header().budget).toMatchObject({ text: '$0.12 / $1.00 · 2/2 turns', reached: true });
  });

  it('a run a budget stopped: a notice in the transcript says which limit', async () => {
    const { c } = await started(withState({ budget: BUDGET }));
    await c.prompt('go');
    c.handleSettled({ sessionId: 's1', runId: 'run-1', stopReason: 'toolUse', budget: { kind: 'maxTurns', scope: 'run', limit: 2, used: 2 } });
    expect(c.transcript.rows.at(-1)).toMatchObject({
      kind: 'notice',
      level: 'warning',
      text: expect.stringContaining("Stopped by the run's budget: 2 of 2 turns."),
    });
    c.handleSettled({ sessionId: 's1', runId: 'run-2', stopReason: 'stop' });
    expect(c.transcript.rows.filter((row) => row.kind === 'notice')).toHaveLength(1);
  });

  it("the sandbox's question goes on the bash row: the command, what was denied, the server's answers", async () => {
    const { c } = await started();
    await runningTool(c, 'hi', 'c1', 'bash', { command: 'touch /root/x' });
    c.permissionPending('s1', 'c1', true);
    const answer = c.askInline({
      sessionId: 's1',
      toolCallId: 'c1',
      toolName: 'bash',
      kind: 'sandbox',
      args: { command: 'touch /root/x' },
      title: 'The sandbox denied the command: touch /root/x\nRun it once outside the sandbox?\n[Denied:\n  touch: Permission denied]',
      options: [
        { id: 'runUnsandboxed', label: 'Run once outside the sandbox' },
        { id: 'reject', label: 'Keep the failure' },
      ],
    });
    expect(c.transcript.rows[0]).toMatchObject({
      status: 'permission',
      questionDetail: { kind: 'sandbox', command: 'touch /root/x', denied: '[Denied:\n  touch: Permission denied]' },
      question: [
        { id: 'runUnsandboxed', label: 'Run once outside the sandbox' },
        { id: 'reject', label: 'Keep the failure' },
      ],
    });
    c.answerPermission('c1', 'runUnsandboxed');
    await expect(answer).resolves.toBe('runUnsandboxed');
    expect(c.transcript.rows[0]).not.toHaveProperty('question');
  });

  it("the budget's question is a card of its own (no tool row), keeping the answer once answered", async () => {
    const { c } = await started();
    await c.prompt('go');
    c.permissionPending('s1', 'run-1', true);
    expect(c.status).toBe('permission');
    const params = {
      sessionId: 's1',
      toolCallId: 'run-1',
      toolName: 'budget',
      kind: 'budget' as const,
      args: { kind: 'maxTurns', scope: 'run', limit: 2, used: 2 },
      budget: { kind: 'maxTurns' as const, scope: 'run' as const, limit: 2, used: 2 },
      title: 'The run reached its budget: 2 of 2 turns. Go on?',
      options: [
        { id: 'raiseBudget' as const, label: 'Continue, the limit raised to 4 turns' },
        { id: 'reject' as const, label: 'Stop' },
      ],
    };
    const answer = c.askInline(params);
    expect(answer).toBeDefined();
    expect(c.transcript.rows.at(-1)).toEqual({
      kind: 'budget',
      id: 'budget:run-1',
      runId: 'run-1',
      title: 'The run reached its budget: 2 of 2 turns. Go on?',
      detail: 'Limit: 2 turns (this run) · used: 2 turns',
      question: params.options,
    });
    expect(c.openQuestions).toEqual(['run-1']);
    expect(c.answerPermission('run-1', 'reject')).toBe(true);
    await expect(answer).resolves.toBe('reject');
    c.permissionPending('s1', 'run-1', false);
    expect(c.transcript.rows.at(-1)).toEqual({
      kind: 'budget',
      id: 'budget:run-1',
      runId: 'run-1',
      title: 'The run reached its budget: 2 of 2 turns. Go on?',
      detail: 'Limit: 2 turns (this run) · used: 2 turns',
      answer: 'Stop',
    });
    expect(c.transcript.plainText()).toContain('[budget] The run reached its budget: 2 of 2 turns. Go on? (Limit: 2 turns (this run) · used: 2 turns) -> Stop');
  });

  it('Agent: Set Budget sends agent/setBudget and shows the limits the server answers', async () => {
    const { server, c } = await started(withState({ budget: BUDGET }));
    server.answers['agent/setBudget'] = (p) => ({ ...STATE, budget: { ...BUDGET, limits: p.budget } });
    await c.setBudget({ maxCostUsd: 2, session: { maxTurns: 50 } });
    expect(server.calls.at(-1)).toEqual({ method: 'agent/setBudget', params: { sessionId: 's1', budget: { maxCostUsd: 2, session: { maxTurns: 50 } } } });
    expect(c.header().budget?.text).toBe('$0.12 / $2.00 · session 1/50 turns');
  });
});

describe('Transcript: the budget card', () => {
  it('an open card stays at the end when the transcript is drawn again from the messages; an answered one does not come back', async () => {
    const { Transcript } = await import('../src/transcript');
    const t = new Transcript();
    t.askBudget('run-1', 'Go on?', undefined, [{ id: 'reject', label: 'Stop' }]);
    t.loadMessages([{ role: 'user', content: 'hi', timestamp: 1 } as never]);
    expect(t.rows.map((row) => row.kind)).toEqual(['user', 'budget']);
    t.budgetAnswered('run-1', 'Stop');
    expect(t.rows.at(-1)).toMatchObject({ kind: 'budget', answer: 'Stop' });
    expect(t.rows.at(-1)).not.toHaveProperty('question');
    t.loadMessages([{ role: 'user', content: 'hi', timestamp: 1 } as never]);
    expect(t.rows.map((row) => row.kind)).toEqual(['user']);
  });
});
