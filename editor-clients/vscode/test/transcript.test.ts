import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type {
  AgentEvent,
  AgentNotification,
  AssistantMessage,
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionSummaryMessage,
  CustomTypeMessage,
  EventNotification,
  Message,
} from '../src/protocol';
import { Transcript } from '../src/transcript';
import type { Row } from '../src/view';

interface Recording {
  notifications: { method: string; params: unknown }[];
  messages: Message[];
}

/** Notifications and messages recorded from the real server (see the fixture's _comment). */
const recording = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'edit-run.json'), 'utf8')) as Recording;
const recordedEvents = recording.notifications
  .filter((n) => n.method === 'agent/event')
  .map((n) => (n.params as EventNotification).event);

function kinds(rows: readonly Row[]): string[] {
  return rows.map((row) => row.kind);
}

const assistant = (content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason: 'stop',
  ...extra,
});

describe('Transcript from the recorded run', () => {
  it('rebuilds the messages from the deltas alone', () => {
    const t = new Transcript();
    // Only deltas: leave out every message_end, so nothing final is seen.
    for (const event of recordedEvents) if (event.type !== 'message_end') t.applyEvent(event);
    expect(kinds(t.rows)).toEqual(['user', 'thinking', 'text', 'tool', 'text']);
    const [user, thinking, text, tool, answer] = t.rows;
    expect(user).toMatchObject({ text: 'Make notes.txt greet agentls.' });
    expect(thinking).toMatchObject({ text: 'One edit will do.', streaming: false });
    expect(text).toMatchObject({ text: 'I will edit **notes.txt**.', streaming: false });
    expect(tool).toMatchObject({ name: 'edit', toolCallId: 'call-1', summary: 'notes.txt', status: 'done' });
    expect(tool?.kind === 'tool' && tool.output).toContain('Edited notes.txt');
    expect(answer).toMatchObject({ text: 'Done: notes.txt now greets agentls.' });
  });

  it("shows an edit's diff apart, its lines marked, the file named, and the result's text without it", () => {
    const t = new Transcript();
    for (const event of recordedEvents) t.applyEvent(event);
    const tool = t.rows.find((row) => row.kind === 'tool');
    expect(tool).toMatchObject({
      output: 'Edited notes.txt (1 replacement)',
      diff: {
        file: 'notes.txt',
        added: 1,
        removed: 1,
        lines: [
          { kind: 'hunk', text: '@@ -1 +1 @@' },
          { kind: 'del', text: 'hello world' },
          { kind: 'add', text: 'hello agentls' },
        ],
      },
    });
    const loaded = new Transcript();
    loaded.loadMessages(recording.messages);
    expect(loaded.rows.find((row) => row.kind === 'tool')).toMatchObject({ diff: { file: 'notes.txt' } });
  });

  it('gives the same rows from the events as from the stored messages', () => {
    const live = new Transcript();
    for (const event of recordedEvents) live.applyEvent(event);
    const loaded = new Transcript();
    loaded.loadMessages(recording.messages);
    const strip = (rows: readonly Row[]) => rows.map((row) => ({ ...row, id: '' }));
    expect(strip(loaded.rows)).toEqual(strip(live.rows));
    expect(live.plainText()).toBe(loaded.plainText());
  });

  it('streams text in pieces: each delta appends to the block at its contentIndex', () => {
    const t = new Transcript();
    const seen: string[] = [];
    for (const event of recordedEvents) {
      t.applyEvent(event);
      const last = t.rows.at(-1);
      if (last?.kind === 'text' && last.streaming) seen.push(last.text);
    }
    const answer = 'Done: notes.txt now greets agentls.';
    const pieces = seen.filter((text) => answer.startsWith(text));
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces).toEqual([...pieces].sort((a, b) => a.length - b.length));
  });

  it('shows the tool call while its arguments stream, then its summary', () => {
    const t = new Transcript();
    let sawPartial = false;
    for (const event of recordedEvents) {
      t.applyEvent(event);
      const tool = t.rows.find((row) => row.kind === 'tool');
      if (tool?.kind === 'tool' && tool.status === 'streaming' && tool.args !== '') {
        sawPartial = true;
        expect(tool.name).toBe('');
      }
    }
    expect(sawPartial).toBe(true);
    const tool = t.rows.find((row) => row.kind === 'tool');
    expect(tool?.kind === 'tool' && JSON.parse(tool.args)).toEqual({
      path: 'notes.txt',
      edits: [{ oldText: 'hello world', newText: 'hello agentls' }],
    });
  });
});

describe('Transcript deltas', () => {
  const start: AgentEvent = { type: 'message_start', message: assistant([], { stopReason: 'pending' }) };
  const update = (assistantMessageEvent: Extract<AgentEvent, { type: 'message_update' }>['assistantMessageEvent']): AgentEvent => ({
    type: 'message_update',
    assistantMessageEvent,
  });

  it('keeps blocks apart by contentIndex, interleaved', () => {
    const t = new Transcript();
    t.applyEvent(start);
    t.applyEvent(update({ type: 'thinking_start', contentIndex: 0 }));
    t.applyEvent(update({ type: 'thinking_delta', contentIndex: 0, delta: 'hm' }));
    t.applyEvent(update({ type: 'text_start', contentIndex: 1 }));
    t.applyEvent(update({ type: 'thinking_delta', contentIndex: 0, delta: 'm' }));
    t.applyEvent(update({ type: 'text_delta', contentIndex: 1, delta: 'Hel' }));
    t.applyEvent(update({ type: 'text_delta', contentIndex: 1, delta: 'lo' }));
    expect(t.rows).toMatchObject([
      { kind: 'thinking', text: 'hmm', streaming: true },
      { kind: 'text', text: 'Hello', streaming: true },
    ]);
  });

  it('takes the final message as authoritative', () => {
    const t = new Transcript();
    t.applyEvent(start);
    t.applyEvent(update({ type: 'text_start', contentIndex: 0 }));
    t.applyEvent(update({ type: 'text_delta', contentIndex: 0, delta: 'Hel' }));
    t.applyEvent({ type: 'message_end', message: assistant([{ type: 'text', text: 'Hello!' }]) });
    expect(t.rows).toEqual([{ kind: 'text', id: 'm1/0', text: 'Hello!', streaming: false }]);
  });

  it('starts a block for a delta whose start was lost', () => {
    const t = new Transcript();
    t.applyEvent(start);
    t.applyEvent(update({ type: 'text_delta', contentIndex: 0, delta: 'late' }));
    expect(t.rows).toMatchObject([{ kind: 'text', text: 'late', streaming: true }]);
  });

  it('marks an aborted message and its unstarted tool calls', () => {
    const t = new Transcript();
    t.applyEvent(start);
    t.applyEvent(update({ type: 'text_start', contentIndex: 0 }));
    t.applyEvent(update({ type: 'text_delta', contentIndex: 0, delta: 'Part' }));
    t.applyEvent(update({ type: 'toolcall_start', contentIndex: 1 }));
    t.applyEvent(update({ type: 'toolcall_delta', contentIndex: 1, delta: '{"command":"ls -' }));
    expect(t.rows[1]).toMatchObject({ kind: 'tool', status: 'streaming', summary: 'ls -' });
    t.applyEvent({
      type: 'message_end',
      message: assistant([{ type: 'text', text: 'Part' }, { type: 'toolCall', id: 'c9', name: 'bash', arguments: {} }], {
        stopReason: 'aborted',
        errorMessage: 'Operation aborted',
      }),
    });
    expect(t.rows).toMatchObject([
      { kind: 'text', text: 'Part', streaming: false },
      { kind: 'tool', name: 'bash', status: 'skipped' },
      { kind: 'notice', level: 'warning', text: 'Aborted' },
    ]);
  });

  it('shows an error message as a notice', () => {
    const t = new Transcript();
    t.applyEvent(start);
    t.applyEvent({
      type: 'message_end',
      message: assistant([{ type: 'text', text: '' }], { stopReason: 'error', errorMessage: 'overloaded' }),
    });
    expect(t.rows).toEqual([{ kind: 'notice', id: 'm1/stop', level: 'error', text: 'overloaded' }]);
  });
});

describe('Transcript tool executions', () => {
  function withCall(): Transcript {
    const t = new Transcript();
    t.applyEvent({ type: 'message_start', message: assistant([], { stopReason: 'pending' }) });
    t.applyEvent({
      type: 'message_end',
      message: assistant([{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: 'make test' } }], {
        stopReason: 'toolUse',
      }),
    });
    return t;
  }

  it('goes pending, running with partial output, done with the result', () => {
    const t = withCall();
    expect(t.rows[0]).toMatchObject({ kind: 'tool', name: 'bash', summary: 'make test', status: 'pending' });
    t.applyEvent({ type: 'tool_execution_start', toolCallId: 'c1', toolName: 'bash', args: { command: 'make test' } });
    expect(t.rows[0]).toMatchObject({ status: 'running', output: '' });
    t.applyEvent({
      type: 'tool_execution_update',
      toolCallId: 'c1',
      toolName: 'bash',
      args: {},
      partialResult: { content: [{ type: 'text', text: 'compiling' }] },
    });
    expect(t.rows[0]).toMatchObject({ status: 'running', output: 'compiling' });
    t.applyEvent({
      type: 'tool_execution_end',
      toolCallId: 'c1',
      toolName: 'bash',
      result: { content: [{ type: 'text', text: 'exit 2' }] },
      isError: true,
    });
    expect(t.rows[0]).toMatchObject({ status: 'error', output: 'exit 2' });
    expect(t.rows).toHaveLength(1);
  });

  it('keeps only the latest part of long partial output', () => {
    const t = withCall();
    const long = `${'x'.repeat(10_000)}END`;
    t.applyEvent({
      type: 'tool_execution_update',
      toolCallId: 'c1',
      toolName: 'bash',
      args: {},
      partialResult: { content: [{ type: 'text', text: long }] },
    });
    const row = t.rows[0];
    expect(row?.kind === 'tool' && row.output.endsWith('END')).toBe(true);
    expect(row?.kind === 'tool' && row.output.length).toBeLessThan(4_100);
  });

  it('makes a row for an execution whose call it never saw', () => {
    const t = new Transcript();
    t.applyEvent({ type: 'tool_execution_start', toolCallId: 'zz', toolName: 'read', args: { path: 'a.txt' } });
    expect(t.rows).toMatchObject([{ kind: 'tool', id: 'tool:zz', name: 'read', summary: 'a.txt', status: 'running' }]);
  });
});

describe('Transcript changes', () => {
  it('hands out only the rows that changed, in order, once', () => {
    const t = new Transcript();
    for (const event of recordedEvents.slice(0, 6)) t.applyEvent(event);
    const first = t.takeChanges();
    expect(first.map((row) => row.id)).toEqual(t.rows.map((row) => row.id));
    expect(t.takeChanges()).toEqual([]);
    t.addNotice('hi');
    expect(t.takeChanges()).toMatchObject([{ kind: 'notice', text: 'hi' }]);
  });

  it('hands out copies that later changes do not touch', () => {
    const t = new Transcript();
    t.applyEvent({ type: 'message_start', message: assistant([], { stopReason: 'pending' }) });
    t.applyEvent({ type: 'message_update', assistantMessageEvent: { type: 'text_start', contentIndex: 0 } });
    t.applyEvent({ type: 'message_update', assistantMessageEvent: { type: 'text_delta', contentIndex: 0, delta: 'a' } });
    const [row] = t.takeChanges();
    t.applyEvent({ type: 'message_update', assistantMessageEvent: { type: 'text_delta', contentIndex: 0, delta: 'b' } });
    expect(row).toMatchObject({ text: 'a' });
    expect(t.takeChanges()).toMatchObject([{ text: 'ab' }]);
  });

  it('shows user messages with images and custom messages', () => {
    const t = new Transcript();
    t.loadMessages([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', data: 'AA==', mimeType: 'image/png' },
        ],
      },
      { role: 'bookmark', content: 'here' },
    ]);
    expect(t.rows).toMatchObject([
      { kind: 'user', text: 'look\n[image]', images: 1 },
      { kind: 'custom', role: 'bookmark', text: 'here' },
    ]);
  });
});

/** Notifications and messages of user commands and a compaction, recorded from the real server. */
const commandsRecording = JSON.parse(
  readFileSync(join(__dirname, 'fixtures', 'bash-compact-run.json'), 'utf8'),
) as { notifications: AgentNotification[]; messages: Message[] };

/** What the session controller does with each notification (its own tests check that it does). */
function replay(t: Transcript, notes: readonly AgentNotification[], each?: (note: AgentNotification) => void): void {
  for (const note of notes) {
    if (note.method === 'agent/event') t.applyEvent(note.params.event);
    else if (note.method === 'agent/bashOutput') t.bashOutput(note.params.bashId, note.params.chunk);
    else if (note.method === 'agent/bashEnd') t.bashEnded(note.params.bashId, note.params.message);
    else if (note.method === 'agent/compaction') t.applyCompaction(note.params);
    each?.(note);
  }
}

const bashMessage = (command: string, extra: Partial<BashExecutionMessage> = {}): BashExecutionMessage => ({
  role: 'bashExecution',
  command,
  output: '',
  exitCode: 0,
  cancelled: false,
  truncated: false,
  timestamp: 1700000000000,
  ...extra,
});

describe('Transcript of user commands and a compaction (recorded)', () => {
  it('makes one row per command and one for the compaction', () => {
    const t = new Transcript();
    replay(t, commandsRecording.notifications);
    expect(kinds(t.rows)).toEqual(['bash', 'user', 'text', 'bash', 'bash', 'compaction']);
    const [hi, , , secret, stopped, compaction] = t.rows;
    expect(hi).toMatchObject({ command: 'echo hi', output: 'hi', status: 'done', exitCode: 0, excluded: false });
    expect(secret).toMatchObject({ command: 'echo secret', output: 'secret', status: 'done', excluded: true });
    expect(stopped).toMatchObject({ command: 'echo started; sleep 30', output: 'started', status: 'cancelled', exitCode: null });
    expect(compaction).toEqual({
      kind: 'compaction',
      id: 'compaction:1',
      status: 'done',
      reason: 'manual',
      tokensBefore: 3557,
      tokensAfter: 21,
      summary: '## Goal\nGreet the user.\n\n## Progress\n- ran `echo hi`',
    });
    expect(t.plainText()).toContain('$ echo secret [exit 0, not sent to the model] secret');
    expect(t.plainText()).toContain('$ echo started; sleep 30 [cancelled] started');
  });

  it('streams a running command\'s output into its row', () => {
    const t = new Transcript();
    const seen: unknown[] = [];
    replay(t, commandsRecording.notifications, (note) => {
      if (note.method === 'agent/bashOutput') seen.push(t.rows.find((row) => row.kind === 'bash' && row.status === 'running'));
    });
    expect(seen).toMatchObject([
      { status: 'running', output: 'hi\n' },
      { status: 'running', output: 'secret\n' },
      { status: 'running', output: 'started\n' },
    ]);
  });

  it('gives the rows of the stored messages, but for what only the notifications know of the compaction', () => {
    const live = new Transcript();
    replay(live, commandsRecording.notifications);
    const loaded = new Transcript();
    loaded.loadMessages(commandsRecording.messages);
    const strip = (rows: readonly Row[]) =>
      rows.map((row) =>
        row.kind === 'compaction' ? { ...row, id: '', reason: undefined, tokensAfter: undefined } : { ...row, id: '' },
      );
    expect(strip(loaded.rows)).toEqual(strip(live.rows));
    expect(loaded.rows.at(-1)).toMatchObject({ kind: 'compaction', status: 'done', tokensBefore: 3557 });
  });
});

describe('Transcript user commands', () => {
  it('joins the message to the row whether it comes before agent/bashEnd (idle) or after it (during a run)', () => {
    const message = bashMessage('make', { output: 'built' });
    for (const order of [['event', 'end'], ['end', 'event']]) {
      const t = new Transcript();
      t.bashStarted('b1', 'make', false);
      t.bashOutput('b1', 'bui');
      for (const step of order) {
        if (step === 'end') t.bashEnded('b1', message);
        else {
          t.applyEvent({ type: 'message_start', message });
          t.applyEvent({ type: 'message_end', message });
        }
      }
      expect(t.rows).toMatchObject([{ kind: 'bash', id: 'bash:b1', command: 'make', output: 'built', status: 'done' }]);
    }
  });

  it('takes output that came before the agent/bash answer, and says whether the command still runs', () => {
    const t = new Transcript();
    t.bashOutput('b1', 'early ');
    expect(t.bashStarted('b1', '!!echo', true)).toBe(true);
    t.bashOutput('b1', 'late');
    expect(t.rows).toMatchObject([{ command: '!!echo', output: 'early late', status: 'running', excluded: true }]);
    t.bashEnded('b2', bashMessage('true'));
    expect(t.bashStarted('b2', 'true', false)).toBe(false);
    t.bashOutput('b2', 'ignored: the message has the output');
    expect(t.rows[1]).toMatchObject({ command: 'true', output: '', status: 'done' });
  });

  it('shows a non-zero exit as an error, and the truncation with the full output\'s file', () => {
    const t = new Transcript();
    t.loadMessages([
      bashMessage('false', { exitCode: 1 }),
      bashMessage('yes | head -n 100000', { truncated: true, fullOutputPath: '/tmp/out.log', timestamp: 2 }),
    ]);
    expect(t.rows).toMatchObject([
      { status: 'error', exitCode: 1 },
      { status: 'done', truncated: true, fullOutputPath: '/tmp/out.log' },
    ]);
    expect(t.plainText()).toContain('[exit 1]');
  });

  it('keeps the latest part of a long running output', () => {
    const t = new Transcript();
    t.bashStarted('b1', 'yes', false);
    for (let i = 0; i < 100; i += 1) t.bashOutput('b1', `${'y\n'.repeat(50)}`);
    t.bashOutput('b1', 'END');
    const row = t.rows[0];
    expect(row?.kind === 'bash' && row.output.endsWith('END')).toBe(true);
    expect(row?.kind === 'bash' && row.output).toMatch(/^… \(\d+ earlier characters\)\n/);
  });
});

describe('Transcript compactions', () => {
  it('ends a failed or aborted compaction with what happened', () => {
    const t = new Transcript();
    t.applyCompaction({ sessionId: 's1', phase: 'start', reason: 'threshold', tokensBefore: 9000 });
    expect(t.rows).toMatchObject([{ kind: 'compaction', status: 'running', reason: 'threshold', summary: '' }]);
    t.applyCompaction({
      sessionId: 's1',
      phase: 'end',
      reason: 'threshold',
      tokensBefore: 9000,
      errorMessage: 'Auto-compaction failed: overloaded',
    });
    t.applyCompaction({ sessionId: 's1', phase: 'start', reason: 'manual', tokensBefore: 9000 });
    t.applyCompaction({ sessionId: 's1', phase: 'end', reason: 'manual', tokensBefore: 9000, aborted: true });
    expect(t.rows).toEqual([
      {
        kind: 'compaction',
        id: 'compaction:1',
        status: 'failed',
        reason: 'threshold',
        tokensBefore: 9000,
        summary: '',
        error: 'Auto-compaction failed: overloaded',
      },
      { kind: 'compaction', id: 'compaction:2', status: 'aborted', reason: 'manual', tokensBefore: 9000, summary: '' },
    ]);
  });

  it('makes a row for an end without a start (an overflow retry given up)', () => {
    const t = new Transcript();
    t.applyCompaction({ sessionId: 's1', phase: 'end', reason: 'overflow', tokensBefore: 5, errorMessage: 'recovery failed' });
    expect(t.rows).toMatchObject([{ kind: 'compaction', status: 'failed', reason: 'overflow', error: 'recovery failed' }]);
  });
});

describe('Transcript coding roles from stored messages', () => {
  it('shows custom messages meant for display, branch and compaction summaries', () => {
    const t = new Transcript();
    const messages: (CustomTypeMessage | BranchSummaryMessage | CompactionSummaryMessage)[] = [
      { role: 'custom', customType: 'attachment', content: [{ type: 'text', text: 'a.ts:1-9' }], display: true },
      { role: 'custom', customType: 'hidden', content: 'for the model only', display: false },
      { role: 'branchSummary', summary: 'Tried **X**; went back.', fromId: 'e12' },
      { role: 'compactionSummary', summary: 'Earlier work.', tokensBefore: 120000 },
    ];
    t.loadMessages(messages);
    expect(t.rows).toEqual([
      { kind: 'custom', id: 'm1/custom', role: 'attachment', text: 'a.ts:1-9' },
      { kind: 'branchSummary', id: 'm3/branch', summary: 'Tried **X**; went back.' },
      { kind: 'compaction', id: 'm4/compaction', status: 'done', tokensBefore: 120000, summary: 'Earlier work.' },
    ]);
  });
});

describe('Transcript editor context', () => {
  const details = {
    attachments: [
      {
        type: 'selection',
        uri: 'file:///w/calc.py',
        path: 'calc.py',
        range: { start: { line: 2, character: 0 }, end: { line: 3, character: 16 } },
        startLine: 3,
        endLine: 4,
        language: 'python',
        lines: 2,
        truncated: false,
      },
      { type: 'file', uri: 'file:///w/README.md', path: 'README.md', language: 'markdown', lines: 3, truncated: false },
      { type: 'diagnostics', uri: 'file:///w/calc.py', path: 'calc.py', count: 2, lines: 2, truncated: false },
    ],
  };
  const context: CustomTypeMessage = {
    role: 'custom',
    customType: 'editorContext',
    content: 'The user attached context from the editor:\n\n<selection path="calc.py" lines="3-4">...</selection>',
    display: true,
    details,
  };
  const user: Message = { role: 'user', content: 'Why does add subtract?' };
  const labels = ['calc.py:3-4', 'README.md', '2 problems'];

  it('puts the attachments on the user message that follows as chips, not as a row of their own', () => {
    const t = new Transcript();
    t.loadMessages([context, user, assistant([{ type: 'text', text: 'It subtracts.' }])]);
    expect(kinds(t.rows)).toEqual(['user', 'text']);
    const row = t.rows[0];
    expect(row?.kind === 'user' && row.context?.map((chip) => chip.label)).toEqual(labels);
    expect(row).toMatchObject({ id: 'm2/user', text: 'Why does add subtract?' });
    expect(t.plainText()).toBe('> Why does add subtract? [calc.py:3-4, README.md, 2 problems]\nIt subtracts.');
  });

  it('keeps the chips when the user message ends after it started (live events)', () => {
    const t = new Transcript();
    for (const event of [
      { type: 'message_start', message: context },
      { type: 'message_end', message: context },
      { type: 'message_start', message: user },
      { type: 'message_end', message: user },
      { type: 'message_start', message: { role: 'user', content: 'a later message' } },
      { type: 'message_end', message: { role: 'user', content: 'a later message' } },
    ] as AgentEvent[]) {
      t.applyEvent(event);
    }
    const users = t.rows.filter((row): row is Extract<Row, { kind: 'user' }> => row.kind === 'user');
    expect(users.map((row) => row.context?.map((chip) => chip.label))).toEqual([labels, undefined]);
    expect(t.takeChanges().map((row) => row.id)).toEqual(['m2/user', 'm3/user']);
  });

  it('shows an editorContext message no user message follows as it is, and one of another form too', () => {
    const t = new Transcript();
    const odd: CustomTypeMessage = { ...context, details: { other: true }, content: 'odd' };
    t.loadMessages([context, assistant([{ type: 'text', text: 'hm' }]), odd, context]);
    expect(t.rows.map((row) => [row.kind, row.id])).toEqual([
      ['custom', 'm1/custom'],
      ['text', 'm2/0'],
      ['custom', 'm3/custom'],
      ['custom', 'm4/custom'],
    ]);
    expect(t.rows[0]).toMatchObject({ role: 'editorContext', text: context.content });
  });
});

describe('Transcript tool targets', () => {
  it('gives file tools\' rows the path to open (with a read\'s line), and none to others', () => {
    const t = new Transcript();
    t.applyEvent({ type: 'message_start', message: assistant([], { stopReason: 'pending' }) });
    t.applyEvent({
      type: 'message_end',
      message: assistant(
        [
          { type: 'toolCall', id: 'r', name: 'read', arguments: { path: 'src/a.py', offset: 40, limit: 10 } },
          { type: 'toolCall', id: 'e', name: 'edit', arguments: { path: '/abs/b.ts', edits: [] } },
          { type: 'toolCall', id: 'g', name: 'grep', arguments: { pattern: 'TODO', path: 'src' } },
          { type: 'toolCall', id: 'f', name: 'find', arguments: { pattern: '*.md' } },
          { type: 'toolCall', id: 'b', name: 'bash', arguments: { command: 'cat x', path: 'x' } },
        ],
        { stopReason: 'toolUse' },
      ),
    });
    const targets = Object.fromEntries(t.rows.map((row) => [row.kind === 'tool' ? row.toolCallId : '', row.kind === 'tool' ? row.target : 'x']));
    expect(targets).toEqual({
      r: { path: 'src/a.py', line: 40 },
      e: { path: '/abs/b.ts' },
      g: { path: 'src' },
      f: undefined,
      b: undefined,
    });
    t.applyEvent({ type: 'tool_execution_start', toolCallId: 'r', toolName: 'read', args: {} });
    expect(t.rows[0]).toMatchObject({ status: 'running', target: { path: 'src/a.py', line: 40 } });
  });

  it('the same targets from the recorded events and from the stored messages', () => {
    const live = new Transcript();
    for (const event of recordedEvents) live.applyEvent(event);
    const loaded = new Transcript();
    loaded.loadMessages(recording.messages);
    const targets = (rows: readonly Row[]) => rows.flatMap((row) => (row.kind === 'tool' ? [row.target] : []));
    expect(targets(live.rows)).toEqual([{ path: 'notes.txt' }]);
    expect(targets(loaded.rows)).toEqual(targets(live.rows));
  });

  it('a row for an execution whose call it never saw has the target too', () => {
    const t = new Transcript();
    t.applyEvent({ type: 'tool_execution_start', toolCallId: 'zz', toolName: 'write', args: { path: 'n.txt', content: '' } });
    expect(t.rows[0]).toMatchObject({ target: { path: 'n.txt' } });
  });
});

describe('user messages by row, for Rewind and Fork', () => {
  const user = (text: string): Message => ({ role: 'user', content: text, timestamp: 1 });
  const answer = assistant([{ type: 'text', text: 'ok' }]);

  it('gives the transcript index of a user row, from stored messages and live events, after every clear', () => {
    const t = new Transcript();
    t.loadMessages([user('one'), answer, user('two')]);
    const id = (text: string): string => t.rows.find((row) => row.kind === 'user' && row.text === text)?.id ?? '?';
    expect(t.userMessageIndex(id('one'))).toBe(0);
    expect(t.userMessageIndex(id('two'))).toBe(2);
    expect(t.userMessageIndex(t.rows.find((row) => row.kind === 'text')?.id ?? '?')).toBeUndefined();
    const resets = t.resets;
    t.loadMessages([user('zero'), answer]); // another branch: row ids go on, indexes start again
    expect(t.resets).toBe(resets + 1);
    expect(t.userMessageIndex(id('zero'))).toBe(0);
    expect(t.userMessageIndex('m1/user')).toBeUndefined(); // a row of before the clear
    t.applyEvent({ type: 'message_start', message: user('live') });
    t.applyEvent({ type: 'message_end', message: user('live') });
    expect(t.userMessageIndex(id('live'))).toBe(2);
  });
});

