/**
 * The current agent session as the editor sees it: its transcript, queue, run status,
 * model and figures, and the requests that act on it.
 *
 * No VS Code import: the connection is any `AgentRpc`, so the controller runs in unit
 * tests against a fake server. The UI (panel, commands, status bar) listens to
 * `onChange` and calls the actions; actions throw `AgentError` for the UI to show.
 */

import { addChip, removeChip, sameAttachment, withoutSent } from './attachments';
import { formatCost, formatTokens, modelKey, parseModelKey } from './format';
import { reattachedNotice, type SeqState, seqOf, seqVerdict, UNKNOWN_SEQ } from './live';
import { applyMcpStatus, mcpSummary, mcpViews } from './mcp';
import { parsePromptInput } from './promptInput';
import { budgetQuestion, questionChoices, questionDetail, questionKind, sandboxQuestionDetail } from './question';
import { budgetNotice, budgetView, isBudgetUsage, sandboxBadge } from './safety';
import type {
  AbortResult,
  AgentNotification,
  AttachResult,
  Attachment,
  BudgetSettings,
  BudgetState,
  BashEndNotification,
  BashOutputNotification,
  BranchNotification,
  BranchOptions,
  BranchResult,
  CommandInfo,
  CompactionNotification,
  CompactResult,
  EventNotification,
  McpServerInfo,
  McpStatusNotification,
  Message,
  MessagesResult,
  ModelInfo,
  PermissionOutcome,
  PermissionPresetInfo,
  PromptResult,
  QueueLists,
  QueueNotification,
  RequestPermissionParams,
  SandboxState,
  SessionInfo,
  SettledNotification,
  StateResult,
  StatsResult,
  ThinkingLevel,
  TreeResult,
} from './protocol';
import {
  EMPTY_QUEUE,
  movedItem,
  positionOf,
  queueFrom,
  queueItems,
  type QueueState,
  removedText,
  withoutItem,
  withText,
} from './queue';
import { Transcript } from './transcript';
import { branchOutcome, entryBefore, findUserMessage } from './tree';
import type { Chip, Header, McpServerView, ReviewInfo, RunStatus, Stats, SubmitMode } from './view';

export interface AgentRpc {
  request<R>(method: string, params: object): Promise<R>;
}

/** What a cancellation token offers (vscode's and the language client's tokens fit). */
export interface CancellationSignal {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

const EMPTY_STATS: Stats = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, contextPercent: null };

export class SessionController {
  readonly transcript = new Transcript();
  sessionId: string | undefined;
  runId: string | undefined;
  queue: QueueState = EMPTY_QUEUE;
  models: ModelInfo[] = [];
  model: string | undefined;
  thinkingLevel: ThinkingLevel = 'off';
  /** The session's permission preset and every preset in cycle order (`agent/getState`; none from an older server). */
  permissionPreset: string | undefined;
  permissionPresets: PermissionPresetInfo[] = [];
  /** The sandbox in force for the agent's bash and the budget's limits and spend (`agent/getState`; none from an older server). */
  sandbox: SandboxState | undefined;
  budget: BudgetState | undefined;
  stats: Stats = EMPTY_STATS;
  messageCount = 0;
  /** Role of the transcript's last message (`agent/continue` answers a user or tool result). */
  lastRole: string | undefined;
  connected = false;
  error: string | undefined;
  /** The session's folder and its project instructions in the system prompt (`agent/getState`). */
  cwd: string | undefined;
  contextFiles: string[] = [];
  /** The user's command going (`!cmd`), until its `agent/bashEnd`. */
  bashId: string | undefined;
  /** The prompt box's chips: sent as `context` with the next prompt, steer or follow-up. */
  attachments: Chip[] = [];
  /** The active editor's selection, offered as a chip the user can click to add. */
  suggestion: Chip | undefined;
  /** How many branches the session's tree has (`agent/getTree`; 0 until known). */
  branchCount = 0;
  /** Every `agent/settled` of this session, oldest first. */
  readonly settled: SettledNotification[] = [];
  /** The session's MCP servers (`agent/listMcpServers`, kept current by `agent/mcpStatus`). */
  mcpServers: McpServerInfo[] = [];
  /** Why the last `agent/listMcpServers` failed (a server without MCP: method not found). */
  mcpError: string | undefined;
  /** Mistakes in the session's MCP configuration, one line each (`problems` of `agent/listMcpServers`). */
  mcpProblems: string[] = [];
  /** Where a server's log file is, if the editor knows and it exists (set by the extension). */
  mcpLogFile: (name: string) => string | undefined = () => undefined;
  /** The menu's entries, made again when the servers change (the log files are looked up then). */
  private mcpViewCache: McpServerView[] = [];
  private permissionsPending = 0;
  /** The inline permission questions waiting for a click, by tool call id. */
  private readonly questions = new Map<string, (outcome: PermissionOutcome) => void>();
  /** The changes waiting for review, of every session (`agent/reviewEdit`). */
  reviews: ReviewInfo[] = [];
  /** The session being created: until its state has come, it is not the current session yet for `ensureSession`. */
  private creating: Promise<string> | undefined;
  /**
   * The branch the transcript was reloaded for: `agent/branch` and the result of the request
   * that moved the session both ask for it, and it is loaded once. A new message forgets it.
   */
  private branch: { leafId: string | null; loaded: Promise<void> } | undefined;
  private readonly listeners = new Set<() => void>();
  /** The current session's `seq`: which notification comes next, whether a sync is under way (see live.ts). */
  private seq: SeqState = { ...UNKNOWN_SEQ };
  /** The sync a gap started, so that more gaps meanwhile start no other. */
  private resyncing: Promise<void> | undefined;
  /**
   * The session to show again once the server is up (the one the window showed before a reload,
   * with the per-user server): `connectionChanged` reattaches to it instead of making a new one.
   */
  restoreSessionId: string | undefined;

  constructor(
    private readonly rpc: AgentRpc,
    /** The folder of new sessions (the first workspace folder). */
    private readonly workspaceFolder: () => string | undefined,
    /** The settings' params of new sessions (`model`, `thinkingLevel`, `permissions`). */
    private readonly sessionDefaults: () => { permissions?: Record<string, string> } & Record<string, unknown> = () => ({}),
  ) {}

  // --- state for the UI --------------------------------------------------------------------

  get status(): RunStatus {
    if (this.permissionsPending > 0 && this.isRunning) return 'permission';
    if (this.isRunning && this.reviews.some((review) => review.sessionId === this.sessionId)) return 'review';
    return this.runId !== undefined ? 'running' : 'idle';
  }

  get isRunning(): boolean {
    return this.runId !== undefined;
  }

  header(): Header {
    const suggestion = this.offeredSuggestion();
    return {
      connected: this.connected,
      ...(this.error !== undefined ? { error: this.error } : {}),
      ...(this.sessionId !== undefined ? { sessionId: this.sessionId } : {}),
      status: this.status,
      models: this.models,
      ...(this.model !== undefined ? { model: this.model } : {}),
      thinkingLevel: this.thinkingLevel,
      ...this.presetHeader(),
      queue: queueItems(this.queue),
      stats: this.stats,
      canContinue: this.canContinue(),
      bashRunning: this.bashId !== undefined,
      ...(this.cwd !== undefined ? { cwd: this.cwd } : {}),
      contextFiles: this.contextFiles,
      attachments: this.attachments,
      ...(suggestion ? { suggestion } : {}),
      reviews: this.reviews,
      branches: this.branchCount,
      mcp: this.mcpViewCache,
      mcpProblems: this.mcpProblems,
      mcpButton: mcpSummary(this.mcpServers, this.mcpProblems.length),
      ...this.safetyHeader(),
    };
  }

  /** The sandbox badge and the spend against the budget. */
  private safetyHeader(): Pick<Header, 'sandbox' | 'budget'> {
    const sandbox = sandboxBadge(this.sandbox);
    const budget = budgetView(this.budget);
    return { ...(sandbox ? { sandbox } : {}), ...(budget ? { budget } : {}) };
  }

  /** The preset and the one after it, for the header's toggle. */
  private presetHeader(): Pick<Header, 'permissionPreset' | 'nextPermissionPreset'> {
    const current = this.permissionPresets.find((preset) => preset.id === this.permissionPreset);
    const next = nextPreset(this.permissionPresets, this.permissionPreset);
    return current && next ? { permissionPreset: current, nextPermissionPreset: next } : {};
  }

  /** The suggestion, unless that attachment is a chip already. */
  private offeredSuggestion(): Chip | undefined {
    const s = this.suggestion;
    return s && !this.attachments.some((chip) => sameAttachment(chip.attachment, s.attachment)) ? s : undefined;
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

  handleNotification(note: AgentNotification): void {
    if (note.method !== 'agent/mcpStatus' && !this.inSequence(note.params)) return;
    switch (note.method) {
      case 'agent/event':
        return this.handleEvent(note.params);
      case 'agent/queue':
        return this.handleQueue(note.params);
      case 'agent/branch':
        return this.handleBranch(note.params);
      case 'agent/settled':
        return this.handleSettled(note.params);
      case 'agent/compaction':
        return this.handleCompaction(note.params);
      case 'agent/bashOutput':
        return this.handleBashOutput(note.params);
      case 'agent/bashEnd':
        return this.handleBashEnd(note.params);
      case 'agent/mcpStatus':
        return this.handleMcpStatus(note.params);
    }
  }

  /**
   * Whether to apply a notification of a session, by its `seq`: those of another session go
   * on (their handlers ignore them); of this one, the next in sequence. A lost one (a gap)
   * brings the transcript up to date: `agent/getMessages`, then `agent/attach` since its `seq`.
   */
  private inSequence(params: { sessionId: string }): boolean {
    if (params.sessionId !== this.sessionId) return true;
    const seq = seqOf(params);
    const verdict = seqVerdict(this.seq, seq);
    if (verdict === 'apply') {
      if (seq !== undefined) this.seq.last = seq;
      return true;
    }
    if (verdict === 'gap') void this.resync();
    return false;
  }

  /** The `seq` of the last notification of the current session applied (`undefined`: not known). */
  get lastSeq(): number | undefined {
    return this.seq.last;
  }

  handleEvent(note: EventNotification): void {
    if (note.sessionId !== this.sessionId) return;
    // Events may arrive before the response of the request that started the run; those of a
    // message joining between runs (a user's command) have no run.
    if (note.runId !== null && !this.settled.some((s) => s.runId === note.runId)) this.runId = note.runId;
    this.transcript.applyEvent(note.event);
    const event = note.event;
    if (event.type === 'message_end') {
      this.branch = undefined;
      this.messageCount += 1;
      this.lastRole = event.message.role;
      if (event.message.role === 'assistant') void this.refreshStats();
    }
    // a turn ended: what the run spent changed (the header's spend against the budget)
    if (event.type === 'turn_end' && this.budget !== undefined) void this.refreshBudget();
    this.changed();
  }

  handleQueue(note: QueueNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.queue = queueFrom(note);
    this.changed();
  }

  /** The session moved to another branch (a rewind or switch, maybe of another client): show that branch. */
  handleBranch(note: BranchNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.showBranch(note.leafId).catch(() => undefined); // a dead server is reported elsewhere
  }

  handleSettled(note: SettledNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.settled.push(note);
    if (this.settled.length > 100) this.settled.shift();
    if (this.runId === note.runId) this.runId = undefined;
    // A budget stopped the run: the transcript says which limit (its last message is the turn's).
    if (isBudgetUsage(note.budget)) this.transcript.addNotice(budgetNotice(note.budget), 'warning');
    // An error or abort is already in the transcript: the final assistant message says it.
    void this.refreshStats();
    // The run re-read the project instructions before each turn: show the files it used.
    Promise.all([this.refreshState(), this.refreshBranches()]).then(
      () => this.changed(),
      () => undefined, // a dead server is reported elsewhere
    );
    this.changed();
  }

  private handleCompaction(note: CompactionNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.transcript.applyCompaction(note);
    if (note.phase === 'end') void this.refreshStats();
    this.changed();
  }

  private handleBashOutput(note: BashOutputNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.transcript.bashOutput(note.bashId, note.chunk);
    this.changed();
  }

  private handleBashEnd(note: BashEndNotification): void {
    if (note.sessionId !== this.sessionId) return;
    this.transcript.bashEnded(note.bashId, note.message);
    if (this.bashId === note.bashId) this.bashId = undefined;
    this.changed();
  }

  /**
   * An MCP server's status or tools changed: its entry is updated when it is one of this
   * session's; a server of this folder not in the list yet brings the whole list again.
   */
  handleMcpStatus(note: McpStatusNotification): void {
    if (this.sessionId === undefined || !note || typeof note.name !== 'string') return;
    const { servers, changed, known } = applyMcpStatus(this.mcpServers, note, this.cwd);
    if (!known) {
      void this.refreshMcpServers().then(() => this.changed());
      return;
    }
    if (!changed) return;
    this.setMcpServers(servers);
    this.changed();
  }

  private setMcpServers(servers: McpServerInfo[]): void {
    this.mcpServers = servers;
    this.mcpViewCache = mcpViews(servers, (name) => this.mcpLogFile(name));
  }

  /** `agent/listMcpServers` of the session (best effort: a server without MCP gives none, `mcpError` says why). */
  async refreshMcpServers(): Promise<McpServerInfo[]> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return [];
    try {
      const { servers, problems } = await this.rpc.request<{ servers: McpServerInfo[]; problems?: unknown }>(
        'agent/listMcpServers',
        { sessionId },
      );
      if (sessionId !== this.sessionId) return this.mcpServers;
      this.mcpError = undefined;
      this.mcpProblems = Array.isArray(problems) ? problems.filter((p): p is string => typeof p === 'string') : [];
      this.setMcpServers(Array.isArray(servers) ? servers : []);
    } catch (error) {
      if (sessionId !== this.sessionId) return this.mcpServers;
      this.mcpError = error instanceof Error ? error.message : String(error);
      this.mcpProblems = [];
      this.setMcpServers([]);
    }
    return this.mcpServers;
  }

  /**
   * `agent/restartMcpServer`: stop the session's server `name` and start it again (one
   * waiting for trust asks again). Its new entry is shown at once; `agent/mcpStatus` follows.
   */
  async restartMcpServer(name: string): Promise<McpServerInfo> {
    const sessionId = await this.ensureSession();
    const entry = await this.rpc.request<McpServerInfo>('agent/restartMcpServer', { name, sessionId });
    if (sessionId === this.sessionId && entry && typeof entry.name === 'string') {
      const index = this.mcpServers.findIndex((server) => server.name === entry.name);
      const next = [...this.mcpServers];
      if (index >= 0) next[index] = entry;
      else next.push(entry);
      this.setMcpServers(next);
      this.changed();
    }
    return entry;
  }

  /** A permission question for this session's call is open (`true`) or answered (`false`). */
  permissionPending(sessionId: string, toolCallId: string, open: boolean): void {
    if (sessionId !== this.sessionId) return;
    this.permissionsPending = Math.max(0, this.permissionsPending + (open ? 1 : -1));
    this.transcript.setAwaitingPermission(toolCallId, open);
    this.changed();
  }

  /**
   * Ask a permission question on its tool row (the panel's buttons answer it): the answer,
   * or `undefined` when the row is not in this session's transcript (ask elsewhere then).
   * Call after `permissionPending(..., true)`. A cancelled question (the server's
   * `$/cancelRequest`, after an abort) is a rejection and leaves the row. The row shows the
   * whole command, the change (`before`: a `write`'s file as it is now) or the arguments.
   */
  askInline(params: RequestPermissionParams, token?: CancellationSignal, before?: string): Promise<PermissionOutcome> | undefined {
    if (params.sessionId !== this.sessionId) return undefined;
    const kind = questionKind(params);
    const choices = questionChoices(params);
    if (kind === 'budget') {
      // no tool row: the question is a card of its own in the transcript
      const { title, detail } = budgetQuestion(params);
      this.transcript.askBudget(params.toolCallId, title, detail, choices);
    } else {
      const detail = kind === 'sandbox' ? sandboxQuestionDetail(params) : questionDetail(params.toolName, params.args, before);
      if (!this.transcript.askOnRow(params.toolCallId, choices, detail)) return undefined;
    }
    this.changed();
    return new Promise<PermissionOutcome>((resolve) => {
      let subscription: { dispose(): void } | undefined;
      const finish = (outcome: PermissionOutcome): void => {
        subscription?.dispose();
        if (this.questions.get(params.toolCallId) !== finish) return;
        this.questions.delete(params.toolCallId);
        if (kind === 'budget') {
          const chosen = choices.find((choice) => choice.id === outcome);
          this.transcript.budgetAnswered(params.toolCallId, token?.isCancellationRequested ? '' : (chosen?.label ?? ''));
        } else {
          this.transcript.setAwaitingPermission(params.toolCallId, false);
        }
        this.changed();
        resolve(outcome);
      };
      this.questions.set(params.toolCallId, finish);
      subscription = token?.onCancellationRequested(() => finish('reject'));
      if (token?.isCancellationRequested) finish('reject');
    });
  }

  /** An answer clicked on a tool row; whether a question was waiting for it. */
  answerPermission(toolCallId: string, outcome: PermissionOutcome): boolean {
    const finish = this.questions.get(toolCallId);
    if (!finish) return false;
    finish(outcome);
    return true;
  }

  /** The inline questions still open, by tool call id. */
  get openQuestions(): string[] {
    return [...this.questions.keys()];
  }

  /** The pending reviews changed: the tool rows of this session's calls show that they wait. */
  setReviews(reviews: ReviewInfo[]): void {
    const waiting = (list: ReviewInfo[]): Set<string> =>
      new Set(list.filter((r) => r.sessionId === this.sessionId).map((r) => r.toolCallId));
    const before = waiting(this.reviews);
    const after = waiting(reviews);
    this.reviews = reviews;
    for (const id of before) if (!after.has(id)) this.transcript.setAwaitingReview(id, false);
    for (const id of after) if (!before.has(id)) this.transcript.setAwaitingReview(id, true);
    this.changed();
  }

  /** The server (re)started (`true`) or stopped (`false`). */
  async connectionChanged(running: boolean): Promise<void> {
    this.connected = running;
    if (!running) {
      this.runId = undefined;
      this.bashId = undefined;
      this.permissionsPending = 0;
      for (const finish of [...this.questions.values()]) finish('reject');
      this.setMcpServers([]); // the server's MCP servers ended with it
      this.changed();
      return;
    }
    this.error = undefined;
    if (this.sessionId !== undefined) {
      // The session again: still live in a per-user server (attach, replaying what this window
      // missed), else loaded from its file (a restarted server has no session loaded).
      const id = this.sessionId;
      this.sessionId = undefined;
      try {
        await this.reattach(id);
      } catch {
        this.transcript.addNotice('The server restarted; the session could not be loaded again.', 'warning');
      }
    } else if (this.restoreSessionId !== undefined && this.creating === undefined) {
      // After a window reload: the session the window showed, else (it is gone) a new one.
      const id = this.restoreSessionId;
      this.restoreSessionId = undefined;
      const restoring: Promise<string> = this.reattach(id)
        .then(
          () => id,
          () => this.createSession({}),
        )
        .finally(() => {
          if (this.creating === restoring) this.creating = undefined;
        });
      this.creating = restoring;
      await restoring.catch(() => undefined); // the panel reports a failed new session when it asks for one
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
    if (this.creating !== undefined) return this.creating;
    if (this.sessionId !== undefined) return this.sessionId;
    return this.newSession();
  }

  /**
   * `cwd`: the session's folder (default: the first workspace folder). Whoever asks for
   * the session meanwhile (`ensureSession`) waits for its state (project instructions, models).
   */
  newSession(options: { permissions?: Record<string, string>; cwd?: string } = {}): Promise<string> {
    const creating: Promise<string> = this.createSession(options).finally(() => {
      if (this.creating === creating) this.creating = undefined;
    });
    this.creating = creating;
    return creating;
  }

  private async createSession(options: { permissions?: Record<string, string>; cwd?: string }): Promise<string> {
    const cwd = options.cwd ?? this.workspaceFolder();
    const defaults = this.sessionDefaults();
    const permissions = { ...defaults.permissions, ...options.permissions };
    const { sessionId } = await this.rpc.request<{ sessionId: string }>('agent/newSession', {
      ...(cwd ? { cwd } : {}),
      ...defaults,
      ...(Object.keys(permissions).length > 0 ? { permissions } : {}),
    });
    this.reset(sessionId);
    this.error = undefined;
    await Promise.all([this.refreshState(), this.refreshModels(), this.refreshStats(), this.refreshMcpServers()]);
    this.changed();
    return sessionId;
  }

  async listSessions(): Promise<SessionInfo[]> {
    const cwd = this.workspaceFolder();
    const { sessions } = await this.rpc.request<{ sessions: SessionInfo[] }>('agent/listSessions', cwd ? { cwd } : {});
    return sessions;
  }

  /**
   * Load a stored session (or switch to a loaded one) and show its transcript. The
   * notice names it by its `title` (looked up with `agent/listSessions` when not given).
   */
  async loadSession(sessionId: string, title?: string): Promise<void> {
    await this.rpc.request('agent/loadSession', { sessionId });
    title ??= await this.titleOf(sessionId);
    // A session live in a per-user server may be running: its messages, then what followed them.
    await this.syncLive(sessionId, true);
    this.transcript.addNotice(loadedNotice(sessionId, title, this.messageCount));
    await this.refreshAll();
    this.changed();
  }

  /**
   * Show a session that may be live in the server (after a window reload with the per-user
   * server, or when the connection came back): `agent/getMessages`, then `agent/attach` since
   * their `seq`, which replays what the messages lack (the message being streamed, the tool
   * calls going, the run's end), and the run streams on with no gap; the header shows it busy
   * while it goes. A session that is not live (the server ended meanwhile) is loaded from its
   * file (`agent/loadSession`). Returns which it was.
   */
  async reattach(sessionId: string, title?: string): Promise<'attached' | 'loaded'> {
    title ??= await this.titleOf(sessionId);
    let attached: AttachResult | undefined;
    try {
      attached = await this.syncLive(sessionId, true);
    } catch (error) {
      if (errorKind(error) !== 'unknownSession') throw error;
    }
    if (attached === undefined) {
      // not live, or a server without agent/attach: load it (which attaches to a live one)
      await this.loadSession(sessionId, title);
      return 'loaded';
    }
    await this.refreshAll();
    this.transcript.addNotice(reattachedNotice(sessionName(sessionId, title), this.messageCount, this.isRunning));
    this.changed();
    return 'attached';
  }

  /** The session's title, from `agent/listSessions` (best effort). */
  private async titleOf(sessionId: string): Promise<string | undefined> {
    return this.listSessions().then(
      (sessions) => sessions.find((s) => s.sessionId === sessionId)?.title,
      () => undefined,
    );
  }

  private async refreshAll(): Promise<void> {
    await Promise.all([
      this.refreshState(),
      this.refreshModels(),
      this.refreshStats(),
      this.refreshBranches(),
      this.refreshMcpServers(),
    ]);
  }

  /**
   * Bring the transcript of `sessionId` up to date with the server: its messages
   * (`agent/getMessages`; `fresh`: as a session newly shown, everything else reset), then
   * `agent/attach {since: seq}`, whose replay comes before its answer. A `gap` in the answer
   * (the server no longer keeps all of them, or numbers anew) does it again. The answer of
   * the last attach; `undefined` from a server without `seq` (nothing attached). Throws
   * `unknownSession` when the session is not live.
   */
  private async syncLive(sessionId: string, fresh: boolean): Promise<AttachResult | undefined> {
    for (let attempt = 1; ; attempt++) {
      if (sessionId === this.sessionId) this.seq.syncing = true;
      let result: MessagesResult;
      try {
        result = await this.rpc.request<MessagesResult>('agent/getMessages', { sessionId });
      } catch (error) {
        if (sessionId === this.sessionId) this.seq.syncing = false;
        throw error;
      }
      if (fresh) this.reset(sessionId);
      else if (sessionId !== this.sessionId) return undefined; // another session is shown meanwhile
      fresh = false;
      this.showMessages(result.messages);
      const since = typeof result.seq === 'number' ? result.seq : undefined;
      this.seq = { last: since, syncing: false, attaching: since !== undefined };
      if (since === undefined) return undefined;
      let attached: AttachResult;
      try {
        attached = await this.rpc.request<AttachResult>('agent/attach', { sessionId, since });
      } finally {
        if (sessionId === this.sessionId) this.seq.attaching = false;
      }
      if (sessionId !== this.sessionId) return attached;
      // Every notification up to `attached.seq` came before the answer: a missing one is a gap too.
      const behind = this.seq.last === undefined || this.seq.last < attached.seq;
      if ((!attached.gap && !behind) || attempt >= 3) {
        if (attached.gap || behind) {
          this.transcript.addNotice('Some of the run may be missing here: the server no longer had all of it.', 'warning');
        }
        return attached;
      }
    }
  }

  /** A gap in the notifications: sync the current session again (once however many gaps meanwhile). */
  private resync(): Promise<void> {
    if (this.resyncing !== undefined) return this.resyncing;
    const sessionId = this.sessionId;
    if (sessionId === undefined) return Promise.resolve();
    this.seq.syncing = true;
    const run = this.syncLive(sessionId, false)
      .then(async (attached) => {
        if (sessionId !== this.sessionId) return;
        if (attached === undefined) await this.reloadTranscript(); // a server without agent/attach
        const state = await this.rpc.request<StateResult>('agent/getState', { sessionId });
        if (sessionId !== this.sessionId) return;
        this.applyState(state);
        // the run is over: its agent/settled may have been among what was lost
        if (!state.isRunning) this.runId = undefined;
        this.changed();
      })
      .catch((error: unknown) => {
        if (sessionId !== this.sessionId) return;
        const why = error instanceof Error ? error.message : String(error);
        this.transcript.addNotice(`Notifications of the session were lost and it could not be read again: ${why}`, 'warning');
        this.changed();
      })
      .finally(() => {
        if (this.resyncing === run) this.resyncing = undefined;
        if (sessionId === this.sessionId) {
          this.seq.syncing = false;
          this.seq.attaching = false;
        }
      });
    this.resyncing = run;
    return run;
  }

  private showMessages(messages: readonly Message[]): void {
    this.transcript.loadMessages(messages);
    this.messageCount = messages.length;
    this.lastRole = messages.at(-1)?.role;
  }

  /** Fetch the transcript again from its start (`agent/getMessages`), e.g. after `agent/branch`. */
  async reloadTranscript(): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return;
    const { messages } = await this.rpc.request<MessagesResult>('agent/getMessages', { sessionId });
    if (sessionId !== this.sessionId) return;
    this.showMessages(messages);
    await Promise.all([this.refreshState(), this.refreshBranches()]);
    this.changed();
  }

  /** Reload the transcript for the branch at `leafId`, once however many ask (see `branch`). */
  private showBranch(leafId: string | null): Promise<void> {
    if (this.branch !== undefined && this.branch.leafId === leafId) return this.branch.loaded;
    const loaded = this.reloadTranscript();
    this.branch = { leafId, loaded };
    return loaded;
  }

  // --- the session tree --------------------------------------------------------------------

  /** `agent/getTree`: the session's entries and branches. */
  async tree(): Promise<TreeResult> {
    const sessionId = await this.ensureSession();
    return this.rpc.request<TreeResult>('agent/getTree', { sessionId });
  }

  /** How many branches the tree has, for the header's picker (best effort: 0 when unknown). */
  async refreshBranches(): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return;
    try {
      const { branches } = await this.rpc.request<TreeResult>('agent/getTree', { sessionId });
      if (sessionId === this.sessionId) this.branchCount = Array.isArray(branches) ? branches.length : 0;
    } catch {
      if (sessionId === this.sessionId) this.branchCount = 0; // a server without the tree
    }
  }

  /**
   * Where a rewind or a fork of the user message of row `rowId` goes: the entry before it
   * (`null`: before the first message), and the message's text for the prompt box.
   */
  async messageTarget(rowId: string): Promise<{ entryId: string | null; text: string }> {
    const sessionId = this.sessionId;
    const row = this.transcript.rows.find((r) => r.id === rowId);
    const index = this.transcript.userMessageIndex(rowId);
    if (sessionId === undefined || row?.kind !== 'user' || index === undefined) {
      throw new Error('That message is no longer in the transcript.');
    }
    const [messages, tree] = await Promise.all([
      this.rpc.request<MessagesResult>('agent/getMessages', { sessionId }),
      this.rpc.request<TreeResult>('agent/getTree', { sessionId }),
    ]);
    const found = findUserMessage(messages, index, row.text);
    const entryId = found ? entryBefore(tree, found.entryId) : undefined;
    if (entryId === undefined) {
      throw new Error('The message was not found in the stored session: load the session again (History, Open) and retry.');
    }
    return { entryId, text: row.text };
  }

  /**
   * `agent/rewind`: continue from `entryId` (`null`: before the first message); what came
   * after stays on its own branch. The transcript is reloaded and a notice says what
   * happened to the files. A `fileConflict` error changes nothing.
   */
  rewind(entryId: string | null, options: BranchOptions): Promise<BranchResult> {
    return this.moveTo('agent/rewind', 'Rewound', entryId, options);
  }

  /** `agent/switchBranch`: continue at the end of another branch (its `leafId`), as `rewind`. */
  switchBranch(entryId: string, options: BranchOptions): Promise<BranchResult> {
    return this.moveTo('agent/switchBranch', 'Switched branch', entryId, options);
  }

  private async moveTo(
    method: 'agent/rewind' | 'agent/switchBranch',
    what: 'Rewound' | 'Switched branch',
    entryId: string | null,
    options: BranchOptions,
  ): Promise<BranchResult> {
    const sessionId = await this.ensureSession();
    const result = await this.rpc.request<BranchResult>(method, {
      sessionId,
      entryId,
      files: options.files,
      summarize: options.summarize,
      ...(options.force ? { force: true } : {}),
    });
    if (sessionId === this.sessionId) {
      await this.showBranch(result.leafId ?? null);
      this.transcript.addNotice(branchOutcome(what, result), result.skipped?.length ? 'warning' : 'info');
      this.changed();
    }
    return result;
  }

  /**
   * Fork at `entryId` (`agent/fork`): a new session with the conversation up to it, shown
   * here; the original stays as it was. `null` (before the first message): a new session
   * in the same folder. Returns the new session's id.
   */
  async fork(entryId: string | null): Promise<string> {
    const sessionId = await this.ensureSession();
    if (entryId === null) return this.newSession(this.cwd !== undefined ? { cwd: this.cwd } : {});
    const { sessionId: forked } = await this.rpc.request<{ sessionId: string }>('agent/fork', { sessionId, entryId });
    await this.loadSession(forked);
    this.transcript.addNotice('Forked: a new session with the conversation up to here; the original is unchanged.');
    this.changed();
    return forked;
  }

  /**
   * Rename a stored session (`agent/renameSession`): `agent/listSessions` then gives `name`
   * as its `title`. An empty name clears it (the title is the first prompt again). Returns
   * the name the server stored, `null` when cleared.
   */
  async renameSession(sessionId: string, name: string): Promise<string | null> {
    const result = await this.rpc.request<{ name: string | null }>('agent/renameSession', { sessionId, name });
    return result.name ?? null;
  }

  /** Delete a stored session (`agent/deleteSession`); the current one is replaced by a new session. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const { deleted } = await this.rpc.request<{ deleted: boolean }>('agent/deleteSession', { sessionId });
    if (sessionId === this.sessionId) {
      this.sessionId = undefined;
      await this.newSession();
    }
    return deleted;
  }

  private reset(sessionId: string): void {
    this.sessionId = sessionId;
    this.runId = undefined;
    this.queue = EMPTY_QUEUE;
    this.stats = EMPTY_STATS;
    this.messageCount = 0;
    this.lastRole = undefined;
    this.bashId = undefined;
    this.cwd = undefined;
    this.contextFiles = [];
    this.permissionPreset = undefined;
    this.sandbox = undefined;
    this.budget = undefined;
    this.permissionsPending = 0;
    this.branchCount = 0;
    this.branch = undefined;
    // another session's transcript: its questions can no longer be answered here
    for (const finish of [...this.questions.values()]) finish('reject');
    this.settled.length = 0;
    this.seq = { ...UNKNOWN_SEQ };
    this.setMcpServers([]);
    this.mcpError = undefined;
    this.mcpProblems = [];
    this.transcript.clear();
  }

  // --- the prompt box's attachments -----------------------------------------------------

  /** Add a chip to the prompt box (once: the same attachment again is ignored). */
  addAttachment(chip: Chip): void {
    this.attachments = addChip(this.attachments, chip);
    this.changed();
  }

  removeAttachment(index: number): void {
    this.attachments = removeChip(this.attachments, index);
    this.changed();
  }

  /** The active editor's selection changed (`undefined`: none, or not a file). */
  setSuggestion(chip: Chip | undefined): void {
    const before = this.suggestion;
    if (before === chip || (before && chip && sameAttachment(before.attachment, chip.attachment))) return;
    this.suggestion = chip;
    this.changed();
  }

  /** The user clicked the suggested chip: it becomes an attachment. */
  addSuggestion(): void {
    if (this.suggestion) this.addAttachment(this.suggestion);
  }

  // --- runs and queue ----------------------------------------------------------------------

  /**
   * The prompt box: `!cmd` / `!!cmd` runs a command; else a prompt when idle, while a run goes
   * steering (`steer`, Enter) or a follow-up (`followUp`, Alt+Enter). One `agent/prompt` with
   * that `whenBusy`, so the server decides whether the session is busy (the panel may be a
   * moment behind). It takes the chips along as `context`; once it is accepted they leave
   * the box (chips added meanwhile stay).
   */
  async submit(text: string, mode: SubmitMode): Promise<void> {
    if (text.trim() === '') return;
    const input = parsePromptInput(text);
    if (input.kind === 'bash') {
      await this.bash(input.command, input.excludeFromContext);
      return;
    }
    const chips = this.attachments;
    await this.prompt(text, chips.map((chip) => chip.attachment), mode);
    if (chips.length > 0) {
      this.attachments = withoutSent(this.attachments, chips);
      this.changed();
    }
  }

  /** `agent/prompt`; if the session is busy the text is queued as `whenBusy` says (default: steering, as Enter). */
  async prompt(text: string, context: readonly Attachment[] = [], whenBusy: SubmitMode = 'steer'): Promise<PromptResult> {
    const sessionId = await this.ensureSession();
    const result = await this.rpc.request<PromptResult>('agent/prompt', {
      sessionId,
      text,
      ...withContext(context),
      whenBusy,
    });
    if (result.runId !== undefined && !this.settled.some((s) => s.runId === result.runId)) {
      this.runId = result.runId;
      this.changed();
    }
    return result;
  }

  async steer(text: string, context: readonly Attachment[] = []): Promise<string> {
    const sessionId = await this.ensureSession();
    const params = { sessionId, text, ...withContext(context) };
    return (await this.rpc.request<{ itemId: string }>('agent/steer', params)).itemId;
  }

  async followUp(text: string, context: readonly Attachment[] = []): Promise<string> {
    const sessionId = await this.ensureSession();
    const params = { sessionId, text, ...withContext(context) };
    return (await this.rpc.request<{ itemId: string }>('agent/followUp', params)).itemId;
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

  /**
   * `agent/bash`: run the user's command in the session's folder; its output streams into
   * its row. `excludeFromContext` (`!!cmd`) keeps it from the model. Returns its `bashId`.
   */
  async bash(command: string, excludeFromContext: boolean): Promise<string> {
    if (this.bashId !== undefined) throw new Error('A command is already running: press Escape to stop it first.');
    const sessionId = await this.ensureSession();
    const { bashId } = await this.rpc.request<{ bashId: string }>('agent/bash', {
      sessionId,
      command,
      excludeFromContext,
    });
    // Its agent/bashEnd may have come first (a quick command).
    if (this.transcript.bashStarted(bashId, command, excludeFromContext)) this.bashId = bashId;
    this.changed();
    return bashId;
  }

  /** `agent/abortBash`: stop the user's command (answered after its `agent/bashEnd`); whether one ran. */
  async abortBash(): Promise<boolean> {
    if (this.sessionId === undefined) return false;
    const { aborted } = await this.rpc.request<{ aborted: boolean }>('agent/abortBash', { sessionId: this.sessionId });
    return aborted;
  }

  /** `agent/compact`: summarise the context now; the `agent/compaction` notifications show it. */
  async compact(instructions?: string): Promise<CompactResult> {
    const sessionId = await this.ensureSession();
    return this.rpc.request<CompactResult>('agent/compact', { sessionId, ...(instructions ? { instructions } : {}) });
  }

  /** `agent/listCommands`: the prompt templates and skills the prompt box completes after `/`. */
  async listCommands(): Promise<CommandInfo[]> {
    const sessionId = await this.ensureSession();
    return (await this.rpc.request<{ commands: CommandInfo[] }>('agent/listCommands', { sessionId })).commands;
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

  /** `agent/editQueueItem`: the item gets `text` and keeps its place; shown at once, undone if refused. */
  async editQueueItem(itemId: string, text: string): Promise<void> {
    await this.changeQueue(withText(this.queue, itemId, text), 'agent/editQueueItem', { itemId, text });
  }

  /** `agent/moveQueueItem`: move the item `by` places within its own queue (-1: earlier). */
  async moveQueueItem(itemId: string, by: number): Promise<void> {
    const { index } = positionOf(this.queue, itemId);
    if (index < 0) return;
    const to = Math.max(0, index + by);
    await this.changeQueue(movedItem(this.queue, itemId, to), 'agent/moveQueueItem', { itemId, index: to });
  }

  /** Show `optimistic` at once, then the queue the server answers; back to what it was if it refuses. */
  private async changeQueue(optimistic: QueueState, method: string, params: object): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return;
    const before = this.queue;
    this.queue = optimistic;
    this.changed();
    try {
      const lists = await this.rpc.request<QueueLists>(method, { sessionId, ...params });
      if (sessionId === this.sessionId) this.queue = queueFrom(lists);
    } catch (error) {
      if (sessionId === this.sessionId) this.queue = before;
      throw error;
    } finally {
      this.changed();
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

  /** `agent/setPermissionPreset`: the session's permission preset (`ask`, `acceptEdits`, `plan`, `bypass`). */
  async setPermissionPreset(preset: string): Promise<void> {
    const sessionId = await this.ensureSession();
    this.applyState(await this.rpc.request<StateResult>('agent/setPermissionPreset', { sessionId, preset }));
    this.changed();
  }

  /** The next preset in the server's order, after the last one the first (the header's toggle, Shift+Tab); its id. */
  async cyclePermissionPreset(): Promise<string> {
    await this.ensureSession();
    const next = nextPreset(this.permissionPresets, this.permissionPreset);
    if (!next) throw new Error('This agentls server has no permission presets (agent/setPermissionPreset): update it.');
    await this.setPermissionPreset(next.id);
    return next.id;
  }

  /**
   * `agent/setBudget`: the session's limits replaced (`{}` lifts them all), from the next check
   * on, the running run's included. The header shows the new limits.
   */
  async setBudget(budget: BudgetSettings): Promise<void> {
    const sessionId = await this.ensureSession();
    this.applyState(await this.rpc.request<StateResult>('agent/setBudget', { sessionId, budget }));
    this.changed();
  }

  /** What the run and the session spent (`agent/getState`'s `budget`), for the header; best effort. */
  async refreshBudget(): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return;
    try {
      const state = await this.rpc.request<StateResult>('agent/getState', { sessionId });
      if (sessionId !== this.sessionId) return;
      this.budget = state.budget && typeof state.budget === 'object' ? state.budget : undefined;
      this.changed();
    } catch {
      // a dead server is reported elsewhere
    }
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
    this.cwd = state.cwd;
    this.contextFiles = state.contextFiles;
    this.permissionPreset = state.permissionPreset;
    this.permissionPresets = Array.isArray(state.permissionPresets) ? state.permissionPresets : [];
    this.sandbox = state.sandbox && typeof state.sandbox === 'object' ? state.sandbox : undefined;
    this.budget = state.budget && typeof state.budget === 'object' ? state.budget : undefined;
    if (state.isRunning && state.runId !== undefined) this.runId = state.runId;
  }

  /** One line for the status bar tooltip and the log. */
  describe(): string {
    const stats = this.stats;
    return `${this.model ?? 'no model'} · ↑${formatTokens(stats.input)} ↓${formatTokens(stats.output)} ${formatCost(stats.cost)}`;
  }
}

/** The preset after `current` in `presets` (cycle order, wrapping); the first when `current` is not one of them. */
export function nextPreset(presets: readonly PermissionPresetInfo[], current: string | undefined): PermissionPresetInfo | undefined {
  const index = presets.findIndex((preset) => preset.id === current);
  return presets[(index + 1) % presets.length];
}

/** `{context}` when there are attachments (else nothing: a server without editor context still accepts the request). */
function withContext(context: readonly Attachment[]): { context?: Attachment[] } {
  return context.length > 0 ? { context: [...context] } : {};
}

/** The notice after a load: `Loaded "Fix the tests" (12 messages).`, the id when the session has no title. */
export function loadedNotice(sessionId: string, title: string | undefined, messages: number): string {
  return `Loaded ${sessionName(sessionId, title)} (${messages} ${messages === 1 ? 'message' : 'messages'}).`;
}

/** A session as notices name it: `"Fix the tests"` (its title, on one line, at most 80 characters), else `session ID`. */
export function sessionName(sessionId: string, title: string | undefined): string {
  const flat = title?.trim().replace(/\s+/g, ' ') ?? '';
  return flat ? `"${flat.length > 80 ? `${flat.slice(0, 79)}…` : flat}"` : `session ${sessionId}`;
}

/** The `data.kind` of a failed request (`AgentError`), if it has one. */
function errorKind(error: unknown): string | undefined {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' ? kind : undefined;
}
