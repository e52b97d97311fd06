import { describe, expect, it } from 'vitest';
import { reattachedNotice, type SeqState, seqOf, seqVerdict, UNKNOWN_SEQ } from '../src/live';
import type { AgentEvent, AgentNotification, Message } from '../src/protocol';
import { type AgentRpc, SessionController, sessionName } from '../src/session';

const state = (over: Partial<SeqState> = {}): SeqState => ({ ...UNKNOWN_SEQ, ...over });

describe('seqVerdict', () => {
  it('applies the next seq, and the first one when none is known', () => {
    expect(seqVerdict(state({ last: 4 }), 5)).toBe('apply');
    expect(seqVerdict(state(), 17)).toBe('apply');
  });
  it('applies notifications of a server without seq', () => {
    expect(seqVerdict(state({ last: 4, syncing: true }), undefined)).toBe('apply');
  });
  it('drops what was applied already (a replay of one that came live)', () => {
    expect(seqVerdict(state({ last: 4 }), 4)).toBe('duplicate');
    expect(seqVerdict(state({ last: 4 }), 1)).toBe('duplicate');
  });
  it('a missing seq is a gap, unless an attach in flight replays it', () => {
    expect(seqVerdict(state({ last: 4 }), 6)).toBe('gap');
    expect(seqVerdict(state({ last: 4, attaching: true }), 6)).toBe('skip');
    expect(seqVerdict(state({ last: 4, attaching: true }), 5)).toBe('apply');
  });
  it('drops everything while the transcript is being read again', () => {
    expect(seqVerdict(state({ last: 4, syncing: true }), 5)).toBe('skip');
    expect(seqVerdict(state({ syncing: true }), 9)).toBe('skip');
  });
});

describe('seqOf and the notices', () => {
  it('reads a numeric seq only', () => {
    expect(seqOf({ sessionId: 's', seq: 3 })).toBe(3);
    expect(seqOf({ sessionId: 's', seq: '3' })).toBeUndefined();
    expect(seqOf({ sessionId: 's' })).toBeUndefined();
    expect(seqOf(null)).toBeUndefined();
  });
  it('says whether the agent is still working', () => {
    expect(reattachedNotice(sessionName('s1', 'Fix it'), 3, true)).toBe('Reattached to "Fix it" (3 messages): the agent is still working.');
    expect(reattachedNotice(sessionName('s1', undefined), 1, false)).toBe('Reattached to session s1 (1 message).');
  });
});

// --- the controller against a fake per-user server ------------------------------------------

const user = (text: string): Message => ({ role: 'user', content: text, timestamp: 1 }) as Message;
const assistant = (text: string): Message =>
  ({ role: 'assistant', content: [{ type: 'text', text }], stopReason: 'stop', timestamp: 2 }) as Message;

/** The notifications of one streamed assistant answer `text` in `pieces`, from `seq` on. */
function answer(sessionId: string, runId: string, seq: number, pieces: string[]): AgentNotification[] {
  const text = pieces.join('');
  const events: AgentEvent[] = [
    { type: 'message_start', message: { role: 'assistant', content: [], stopReason: 'pending' } as Message },
    { type: 'message_update', assistantMessageEvent: { type: 'text_start', contentIndex: 0 } },
    ...pieces.map(
      (delta): AgentEvent => ({ type: 'message_update', assistantMessageEvent: { type: 'text_delta', contentIndex: 0, delta } }),
    ),
    { type: 'message_update', assistantMessageEvent: { type: 'text_end', contentIndex: 0, content: text } },
    { type: 'message_end', message: assistant(text) },
  ];
  return events.map((event, i) => ({ method: 'agent/event', params: { sessionId, runId, seq: seq + i, event } }));
}

function settled(sessionId: string, runId: string, seq: number): AgentNotification {
  return { method: 'agent/settled', params: { sessionId, runId, seq, stopReason: 'stop' } };
}

class StoppedError extends Error {
  constructor(readonly kind: string) {
    super(kind);
  }
}

/**
 * A per-user server holding session `s1` live: its stored `messages` (with their `seq`), and the
 * notifications after them; `agent/attach {since}` sends those after `since` to the client
 * before answering, as the server does.
 */
class LiveServer implements AgentRpc {
  readonly calls: { method: string; params: Record<string, unknown> }[] = [];
  client: SessionController | undefined;
  live = true;
  messages: Message[] = [user('Tell a story'), assistant('Part one.')];
  messagesSeq = 10;
  /** Notifications after `messagesSeq`, the server keeps them (for the replay). */
  after: AgentNotification[] = [];
  running = true;
  /** Answer `gap: true` to the first attach (the server no longer kept them). */
  gapOnce = false;

  async request<R>(method: string, params: object): Promise<R> {
    const p = params as Record<string, unknown>;
    this.calls.push({ method, params: p });
    switch (method) {
      case 'agent/getMessages':
        if (!this.live) throw new StoppedError('unknownSession');
        return { messages: this.messages, total: this.messages.length, entryIds: [], seq: this.messagesSeq } as R;
      case 'agent/attach': {
        if (!this.live) throw new StoppedError('unknownSession');
        const since = p.since as number;
        if (this.gapOnce) {
          this.gapOnce = false;
          return { attached: true, replayed: 0, gap: true, seq: this.lastSeq() } as R;
        }
        const replay = this.after.filter((note) => seqOf(note.params)! > since);
        for (const note of replay) this.client?.handleNotification(note);
        return { attached: true, replayed: replay.length, gap: false, seq: this.lastSeq() } as R;
      }
      case 'agent/loadSession':
        this.live = true;
        this.running = false;
        return { sessionId: p.sessionId, messageCount: this.messages.length } as R;
      case 'agent/listSessions':
        return { sessions: [{ sessionId: 's1', cwd: '/w', title: 'A story', createdAt: 1, updatedAt: 2, messageCount: 2 }] } as R;
      case 'agent/getState':
        return {
          sessionId: p.sessionId,
          cwd: '/w',
          model: { provider: 'faux', id: 'faux-1' },
          thinkingLevel: 'off',
          isRunning: this.running,
          ...(this.running ? { runId: 'run-1' } : {}),
          messageCount: this.messages.length + this.after.filter((n) => n.method === 'agent/event' && n.params.event.type === 'message_end').length,
          queue: { steering: [], followUp: [] },
          contextFiles: [],
        } as R;
      case 'agent/listModels':
        return { models: [] } as R;
      case 'agent/getStats':
        return { tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 }, cost: 0, context: { tokens: 0, contextWindow: 1, percent: 0 } } as R;
      case 'agent/getTree':
        return { branches: [] } as R;
      case 'agent/listMcpServers':
        return { servers: [] } as R;
      case 'agent/newSession':
        return { sessionId: 's2' } as R;
      default:
        throw new Error(`unexpected ${method}`);
    }
  }

  lastSeq(): number {
    return this.after.reduce((last, note) => Math.max(last, seqOf(note.params)!), this.messagesSeq);
  }

  count(method: string): number {
    return this.calls.filter((call) => call.method === method).length;
  }
}

function connect(server: LiveServer): SessionController {
  const c = new SessionController(server, () => '/w');
  server.client = c;
  return c;
}

const texts = (c: SessionController): string[] =>
  c.transcript.rows.filter((row) => row.kind === 'text').map((row) => (row.kind === 'text' ? row.text : ''));

describe('reattaching to a live session', () => {
  it('after a reload: the messages, then the replay of the streaming answer, then the live rest, with no gap', async () => {
    const server = new LiveServer();
    // part two was streaming while the window reloaded: its start is kept for the replay
    const stream = answer('s1', 'run-1', 11, ['Part ', 'two ', 'goes ', 'on.']);
    server.after = stream.slice(0, 4);
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    expect(c.sessionId).toBe('s1');
    expect(server.calls.find((call) => call.method === 'agent/attach')?.params).toEqual({ sessionId: 's1', since: 10 });
    expect(server.count('agent/newSession')).toBe(0);
    expect(c.isRunning).toBe(true);
    expect(c.status).toBe('running');
    expect(texts(c)).toEqual(['Part one.', 'Part two ']);
    // the rest streams in live
    for (const note of stream.slice(4)) c.handleNotification(note);
    c.handleNotification(settled('s1', 'run-1', 11 + stream.length));
    expect(texts(c)).toEqual(['Part one.', 'Part two goes on.']);
    expect(c.isRunning).toBe(false);
    expect(c.settled.map((s) => s.runId)).toEqual(['run-1']);
    expect(c.transcript.plainText()).toContain('Reattached to "A story" (2 messages): the agent is still working.');
  });

  it('a run that ended while the window reloaded: its end is replayed, the panel is idle', async () => {
    const server = new LiveServer();
    server.after = [...answer('s1', 'run-1', 11, ['Done.']), settled('s1', 'run-1', 16)];
    server.running = false;
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    expect(texts(c)).toEqual(['Part one.', 'Done.']);
    expect(c.isRunning).toBe(false);
    expect(c.lastSeq).toBe(16);
    expect(c.transcript.plainText()).toContain('Reattached to "A story" (3 messages).');
  });

  it('a session no longer live (the server ended) is loaded from its file', async () => {
    const server = new LiveServer();
    server.live = false;
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    expect(c.sessionId).toBe('s1');
    expect(server.count('agent/loadSession')).toBe(1);
    expect(c.transcript.plainText()).toContain('Loaded "A story" (2 messages).');
  });

  it('a stored session that is gone: a new session instead', async () => {
    const server = new LiveServer();
    server.live = false;
    server.request = (async (method: string, params: object) => {
      if (method === 'agent/loadSession') throw new StoppedError('unknownSession');
      return LiveServer.prototype.request.call(server, method, params);
    }) as LiveServer['request'];
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    expect(c.sessionId).toBe('s2');
    expect(await c.ensureSession()).toBe('s2');
  });

  it('gap: true in the answer of agent/attach reads the transcript again and attaches with its seq', async () => {
    const server = new LiveServer();
    server.gapOnce = true;
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    expect(server.count('agent/getMessages')).toBe(2);
    expect(server.calls.filter((call) => call.method === 'agent/attach').map((call) => call.params.since)).toEqual([10, 10]);
    expect(texts(c)).toEqual(['Part one.']);
  });

  it('a missing seq in the live notifications reads the transcript again and replays what it lacks', async () => {
    const server = new LiveServer();
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    const stream = answer('s1', 'run-1', 11, ['Part ', 'two.']);
    c.handleNotification(stream[0]!); // 11: message_start
    // 12 and 13 are lost; the server has them
    server.after = stream;
    c.handleNotification(stream[3]!); // 14: a gap
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(server.calls.filter((call) => call.method === 'agent/attach').map((call) => call.params.since)).toEqual([10, 10]);
    expect(texts(c)).toEqual(['Part one.', 'Part two.']);
    expect(c.lastSeq).toBe(16);
    // a late copy of one already applied changes nothing
    c.handleNotification(stream[2]!);
    expect(texts(c)).toEqual(['Part one.', 'Part two.']);
  });

  it('a live notification that comes while the attach is in flight is applied once, in order', async () => {
    const server = new LiveServer();
    const stream = answer('s1', 'run-1', 11, ['a', 'b', 'c']);
    server.after = stream.slice(0, 3);
    const c = connect(server);
    // the server sends 11 live (the client is attached by the load), then 13 live, then the replay of 11..13
    const original = server.request.bind(server);
    server.request = (async (method: string, params: object) => {
      if (method === 'agent/attach') {
        c.handleNotification(stream[0]!);
        c.handleNotification(stream[2]!);
      }
      return original(method, params);
    }) as LiveServer['request'];
    await c.loadSession('s1');
    for (const note of stream.slice(3)) c.handleNotification(note);
    expect(texts(c)).toEqual(['Part one.', 'abc']);
    expect(c.lastSeq).toBe(11 + stream.length - 1);
  });

  it('the connection came back: the current session is reattached, not loaded again', async () => {
    const server = new LiveServer();
    const c = connect(server);
    c.restoreSessionId = 's1';
    await c.connectionChanged(true);
    await c.connectionChanged(false);
    await c.connectionChanged(true);
    expect(c.sessionId).toBe('s1');
    expect(server.count('agent/loadSession')).toBe(0);
    expect(server.count('agent/attach')).toBe(2);
    expect(c.status).toBe('running');
  });

  it('without a session to restore, connecting makes none (the panel asks for one)', async () => {
    const server = new LiveServer();
    const c = connect(server);
    await c.connectionChanged(true);
    expect(c.sessionId).toBeUndefined();
    expect(server.calls).toEqual([]);
  });
});
