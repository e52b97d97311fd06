/**
 * The current agent session as the editor sees it: its transcript, queue, run status,
 * model and figures, and the requests that act on it.
 *
 * No VS Code import: the connection is any `AgentRpc`, so the controller runs in unit
 * tests against a fake server. The UI (panel, commands, status bar) listens to
 * `onChange` and calls the actions; actions throw `AgentError` for the UI to show.
 */

import { formatCost, formatTokens, modelKey, parseModelKey } from './format';
import type {
  AbortResult,
  EventNotification,
  Message,
  ModelInfo,
  PromptResult,
  QueueLists,
  QueueNotification,
  SessionInfo,
  SettledNotification,
  StateResult,
  StatsResult,
  ThinkingLevel,
} from './protocol';
import { EMPTY_QUEUE, queueFrom, queueItems, type QueueState, removedText, withoutItem } from './queue';
import { Transcript } from './transcript';
import type { Header, RunStatus, Stats } from './view';

export interface AgentRpc {
  request<R>(method: string, params: object): Promise<R>;
}

export type SubmitMode = 'prompt' | 'steer' | 'followUp';

const EMPTY_STATS: Stats = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, contextPercent: null };

export class SessionController {
  readonly transcript = new Transcript();
  sessionId: string | undefined;
  runId: string | undefined;
  queue: QueueState = EMPTY_QUEUE;
  models: ModelInfo[] = [];
  model: string | undefined;
  thinkingLevel: ThinkingLevel = 'off';
  stats: Stats = EMPTY_STATS;
  messageCount = 0;
  /** Role of the transcript's last message (`agent/continue` answers a user or tool result). */
  lastRole: string | undefined;
  connected = false;
  error: string | undefined;
  /** Every `agent/settled` of this session, oldest first. */
  readonly settled: SettledNotification[] = [];
  private permissionsPending = 0;
  private creating: Promise<string> | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly rpc: AgentRpc,
    /** The folder of new sessions (the first workspace folder). */
    private readonly cwd: () => string | undefined,
  ) {}

  // --- state for the UI --------------------------------------------------------------------

  get status(): RunStatus {
    if (this.permissionsPending > 0 && this.isRunning) return 'permission';
    return this.runId !== undefined ? 'running' : 'idle';
  }

  get isRunning(): boolean {
    return this.runId !== undefined;
  }

  header(): Header {
    return {
      connected: this.connected,
      ...(this.error !== undefined ? { error: this.error } : {}),
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      status: this.status,
      models: this.models,
      ...(this.model !== undefined ? { model: this.model } : {}),
      thinkingLevel: this.thinkingLevel,
      queue: queueItems(this.queue),
      stats: this.stats,
      canContinue: this.canContinue(),
    };
  }

  /**
   * Whether `agent/continue` has something to do: the last message is a user message or
   * a tool result, or items are queued (protocol.md, `agent/continue`).
   */
  canContinue(): boolean {
    if (this.isRunning || this.messageCount === 0) return false;
    return this.lastRole === 'user' || this.lastRole === 'toolResult' || queueItems(this.queue).length > 0;
  }

  /** Call `listener` after every change; returns the function that unsubscribes it. */
  onChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  // --- notifications -----------------------------------------------------------------------

  handleEvent(note: EventNotification): void {
    if (note.sessionId !== this.sessionId) return;
    // Events may arrive before the response of the request that started the run.
    if (!this.settled.some((s) => s.runId === note.runId)) this.runId = note.runId;
    this.transcript.applyEvent(note.event);
    const event = note.event;
    if (event.type === 'message_end') {
      this.messageCount += 1;
      this.lastRole = event.message.role;
      if (event.message.role === 'assistant') void this.refreshStats();
    }
    this.changed();
  }

  handleQueue(note: QueueNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.queue = queueFrom(note);
    this.changed();
  }

  handleSettled(note: SettledNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.settled.push(note);
    if (this.settled.length > 100) this.settled.shift();
    if (this.runId === note.runId) this.runId = undefined;
    // An error or abort is already in the transcript: the final assistant message says it.
    void this.refreshStats();
    this.changed();
  }

  /** A permission question for this session's call is open (`true`) or answered (`false`). */
  permissionPending(sessionId: string, toolCallId: string, open: boolean): void {
    if (sessionId !== this.sessionId) return;
    this.permissionsPending = Math.max(0, this.permissionsPending + (open ? 1 : -1));
    this.transcript.setAwaitingPermission(toolCallId, open);
    this.changed();
  }

  /** The server (re)started (`true`) or stopped (`false`). */
  async connectionChanged(running: boolean): Promise<void> {
    this.connected = running;
    if (!running) {
      this.runId = undefined;
      this.permissionsPending = 0;
      this.changed();
      return;
    }
    this.error = undefined;
    if (this.sessionId !== undefined) {
      // A restarted server has no session loaded: load the stored one again.
      const id = this.sessionId;
      this.sessionId = undefined;
      try {
        await this.loadSession(id);
      } catch {
        this.transcript.addNotice('The server restarted; the session could not be loaded again.', 'warning');
      }
    }
    this.changed();
  }

  failed(message: string): void {
    this.error = message;
    this.changed();
  }

  // --- sessions ----------------------------------------------------------------------------

  /** The current session, created on first use. */
  async ensureSession(): Promise<string> {
    if (this.sessionId !== undefined) return this.sessionId;
    this.creating ??= this.newSession().finally(() => {
      this.creating = undefined;
    });
    return this.creating;
  }

  async newSession(): Promise<string> {
    const cwd = this.cwd();
    const { sessionId } = await this.rpc.request<{ sessionId: string }>('agent/newSession', cwd ? { cwd } : {});
    this.reset(sessionId);
    this.error = undefined;
    await Promise.all([this.refreshState(), this.refreshModels(), this.refreshStats()]);
    this.changed();
    return sessionId;
  }

  async listSessions(): Promise<SessionInfo[]> {
    const cwd = this.cwd();
    const { sessions } = await this.rpc.request<{ sessions: SessionInfo[] }>('agent/listSessions', cwd ? { cwd } : {});
    return sessions;
  }

  /** Load a stored session (or switch to a loaded one) and show its transcript. */
  async loadSession(sessionId: string): Promise<void> {
    await this.rpc.request('agent/loadSession', { sessionId });
    const { messages } = await this.rpc.request<{ messages: Message[]; total: number }>('agent/getMessages', {
      sessionId,
    });
    this.reset(sessionId);
    this.transcript.loadMessages(messages);
    this.messageCount = messages.length;
    this.lastRole = messages.at(-1)?.role;
    this.transcript.addNotice(`Loaded session ${sessionId} (${messages.length} messages).`);
    await Promise.all([this.refreshState(), this.refreshModels(), this.refreshStats()]);
    this.changed();
  }

  private reset(sessionId: string): void {
    this.sessionId = sessionId;
    this.runId = undefined;
    this.queue = EMPTY_QUEUE;
    this.stats = EMPTY_STATS;
    this.messageCount = 0;
    this.lastRole = undefined;
    this.permissionsPending = 0;
    this.settled.length = 0;
    this.transcript.clear();
  }

  // --- runs and queue ----------------------------------------------------------------------

  /** The prompt box: a prompt when idle; while a run goes, steering or a follow-up. */
  async submit(text: string, mode: SubmitMode): Promise<void> {
    if (text.trim() === '') return;
    if (mode === 'steer') await this.steer(text);
    else if (mode === 'followUp') await this.followUp(text);
    else await this.prompt(text);
  }

  /** `agent/prompt`; if the session turned out busy the text is queued as a follow-up. */
  async prompt(text: string): Promise<PromptResult> {
    const sessionId = await this.ensureSession();
    const result = await this.rpc.request<PromptResult>('agent/prompt', { sessionId, text, whenBusy: 'followUp' });
    if (result.runId !== undefined && !this.settled.some((s) => s.runId === result.runId)) {
      this.runId = result.runId;
      this.changed();
    }
    return result;
  }

  async steer(text: string): Promise<string> {
    const sessionId = await this.ensureSession();
    return (await this.rpc.request<{ itemId: string }>('agent/steer', { sessionId, text })).itemId;
  }

  async followUp(text: string): Promise<string> {
    const sessionId = await this.ensureSession();
    return (await this.rpc.request<{ itemId: string }>('agent/followUp', { sessionId, text })).itemId;
  }

  /** `agent/abort`: answered once the run has settled. Queued items stay. */
  async abort(): Promise<AbortResult | undefined> {
    if (this.sessionId === undefined) return undefined;
    const result = await this.rpc.request<AbortResult>('agent/abort', { sessionId: this.sessionId });
    this.queue = queueFrom(result.queue);
    if (result.runId !== undefined && this.runId === result.runId) this.runId = undefined;
    this.changed();
    return result;
  }

  async continue(): Promise<string> {
    const sessionId = await this.ensureSession();
    const { runId } = await this.rpc.request<{ runId: string }>('agent/continue', { sessionId });
    if (!this.settled.some((s) => s.runId === runId)) this.runId = runId;
    this.changed();
    return runId;
  }

  /** Remove a queued item; returns its text (for the prompt box), restores the view on failure. */
  async removeQueueItem(itemId: string): Promise<string> {
    if (this.sessionId === undefined) return '';
    const before = this.queue;
    this.queue = withoutItem(before, itemId);
    this.changed();
    try {
      const removed = await this.rpc.request<QueueLists>('agent/clearQueue', { sessionId: this.sessionId, itemId });
      return removedText(queueFrom(removed));
    } catch (error) {
      this.queue = before;
      this.changed();
      throw error;
    }
  }

  // --- settings ----------------------------------------------------------------------------

  async setModel(key: string): Promise<void> {
    const model = parseModelKey(key);
    if (!model) throw new Error(`Not a model: ${key} (expected provider/id)`);
    const sessionId = await this.ensureSession();
    this.applyState(await this.rpc.request<StateResult>('agent/setModel', { sessionId, ...model }));
    this.changed();
  }

  async setThinkingLevel(level: ThinkingLevel): Promise<void> {
    const sessionId = await this.ensureSession();
    this.applyState(await this.rpc.request<StateResult>('agent/setThinkingLevel', { sessionId, level }));
    this.changed();
  }

  async refreshModels(): Promise<void> {
    const params = this.sessionId !== undefined ? { sessionId: this.sessionId } : {};
    const { models } = await this.rpc.request<{ models: ModelInfo[] }>('agent/listModels', params);
    this.models = models;
  }

  async refreshState(): Promise<void> {
    if (this.sessionId === undefined) return;
    this.applyState(await this.rpc.request<StateResult>('agent/getState', { sessionId: this.sessionId }));
  }

  async refreshStats(): Promise<void> {
    if (this.sessionId === undefined) return;
    const sessionId = this.sessionId;
    try {
      const stats = await this.rpc.request<StatsResult>('agent/getStats', { sessionId });
      if (sessionId !== this.sessionId) return;
      this.stats = {
        input: stats.tokens.input,
        output: stats.tokens.output,
        cacheRead: stats.tokens.cacheRead,
        cacheWrite: stats.tokens.cacheWrite,
        cost: stats.cost,
        contextPercent: stats.context.percent,
      };
      this.changed();
    } catch {
      // figures are best effort: a dead server is reported elsewhere
    }
  }

  private applyState(state: StateResult): void {
    if (state.sessionId !== this.sessionId) return;
    this.model = modelKey(state.model);
    this.thinkingLevel = state.thinkingLevel;
    this.messageCount = state.messageCount;
    this.queue = queueFrom(state.queue);
    if (state.isRunning && state.runId !== undefined) this.runId = state.runId;
  }

  /** One line for the status bar tooltip and the log. */
  describe(): string {
    const stats = this.stats;
    return `${this.model ?? 'no model'} · ↑${formatTokens(stats.input)} ↓${formatTokens(stats.output)} ${formatCost(stats.cost)}`;
  }
}
