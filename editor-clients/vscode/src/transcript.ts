/**
 * The transcript as panel rows, rebuilt from agent events (pure: no VS Code).
 *
 * `message_update` carries only the assistant message event's delta (protocol.md,
 * "Assistant message events"): a `*_start` puts an empty block at `contentIndex`, a
 * `text_delta` / `thinking_delta` appends to it, `toolcall_delta` text is partial JSON
 * kept aside until `toolcall_end` gives the call, and `message_end` carries the final,
 * authoritative message. Tool executions update the row of their call by `toolCallId`.
 *
 * A command the user ran (`agent/bash`) is one row, fed by its `agent/bashOutput` chunks
 * and ended by `agent/bashEnd`; its `bashExecution` message, which joins the transcript
 * through `message_start` / `message_end` (at once, or after the run going on), ends the
 * same row. A compaction is a row from its `agent/compaction` start to its end; its
 * `compactionSummary` message, which joins the transcript in between, fills the same row
 * (and makes the row in a stored transcript).
 *
 * Attachments the user sent with a message (`editorContext`, a `custom` message the server
 * puts just before the user's message) become chips on that user message's row, not a row
 * of their own; one not followed by a user message is shown as a `custom` row.
 *
 * Row ids are stable (`m3/0` for block 0 of the third message), so a consumer can
 * take only the rows that changed since it last looked (`takeChanges`).
 */

import { contextChips, EDITOR_CONTEXT } from './attachments';
import {
  appendTail,
  bashLabel,
  contentText,
  countImages,
  EMPTY_TAIL,
  MAX_OUTPUT,
  type OutputTail,
  prettyArgs,
  summarizeArgs,
  toolTarget,
  summarizePartialArgs,
  tailText,
  truncateHead,
  truncateTail,
} from './format';
import type {
  AgentEvent,
  AssistantMessage,
  AssistantMessageEvent,
  BashExecutionMessage,
  BranchSummaryMessage,
  CompactionNotification,
  CompactionSummaryMessage,
  ContentBlock,
  CustomTypeMessage,
  Message,
  ToolResult,
  ToolResultMessage,
} from './protocol';
import { parseUnifiedDiff } from './diff';
import type { BashStatus, ContextChip, DiffView, PermissionChoice, QuestionDetail, Row, ToolStatus } from './view';

type ToolRow = Extract<Row, { kind: 'tool' }>;
type BashRow = Extract<Row, { kind: 'bash' }>;
type CompactionRow = Extract<Row, { kind: 'compaction' }>;

export class Transcript {
  private readonly list: Row[] = [];
  private readonly byId = new Map<string, Row>();
  private readonly toolRows = new Map<string, ToolRow>();
  private readonly changed = new Set<string>();
  /** Row ids of the user's commands by `bashId`, and by their `bashExecution` message (`bashKey`). */
  private readonly bashById = new Map<string, string>();
  private readonly bashByMessage = new Map<string, string>();
  /** The streamed output of the commands still running, by row id. */
  private readonly bashTails = new Map<string, OutputTail>();
  private messageCount = 0;
  /** `messageCount` at the last `clear`: message `m{N}` is the transcript's message `N - 1 - base`. */
  private base = 0;
  private cleared = 0;
  private noticeCount = 0;
  private compactionCount = 0;
  /** Key of the message between its `message_start` and `message_end`. */
  private current: string | undefined;
  /** Row id of the compaction between its start and end. */
  private compacting: string | undefined;
  /** The budget's questions still open, by run id: a transcript drawn again from the messages keeps them at its end. */
  private readonly openBudget = new Map<string, Extract<Row, { kind: 'budget' }>>();
  /** The chips of the last `editorContext` message, for the user message that follows it. */
  private pendingContext: { key: string; chips: ContextChip[]; text: string } | undefined;

  get rows(): readonly Row[] {
    return this.list;
  }

  /** How many times the transcript was cleared: a consumer that saw another count redraws every row. */
  get resets(): number {
    return this.cleared;
  }

  clear(): void {
    this.cleared += 1;
    this.base = this.messageCount;
    this.list.length = 0;
    this.byId.clear();
    this.toolRows.clear();
    this.bashById.clear();
    this.bashByMessage.clear();
    this.bashTails.clear();
    this.changed.clear();
    this.current = undefined;
    this.compacting = undefined;
    this.pendingContext = undefined;
  }

  /** Rebuild from whole messages (a loaded session's `agent/getMessages`). */
  loadMessages(messages: readonly Message[]): void {
    this.clear();
    for (const message of messages) {
      this.startMessage(message);
      this.endMessage(message);
    }
    this.flushContext();
    for (const row of this.openBudget.values()) this.put(row); // still to be answered
  }

  applyEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'message_start':
        this.startMessage(event.message);
        break;
      case 'message_update':
        this.applyDelta(event.assistantMessageEvent);
        break;
      case 'message_end':
        this.endMessage(event.message);
        break;
      case 'tool_execution_start': {
        const row = this.toolRow(event.toolCallId, event.toolName, event.args);
        this.updateTool(row, { status: 'running', output: '' });
        break;
      }
      case 'tool_execution_update': {
        const row = this.toolRow(event.toolCallId, event.toolName, event.args);
        this.updateTool(row, { status: 'running', output: truncateTail(resultText(event.partialResult)) });
        break;
      }
      case 'tool_execution_end': {
        const row = this.toolRow(event.toolCallId, event.toolName, undefined);
        this.updateTool(row, { status: event.isError ? 'error' : 'done', ...resultView(resultText(event.result), event.result?.details) });
        break;
      }
      default:
        break; // agent_start, turn_start, turn_end, agent_end: nothing to show
    }
  }

  /** A permission question about a running call is open (`true`) or answered (`false`). */
  setAwaitingPermission(toolCallId: string, open: boolean): void {
    const row = this.toolRows.get(toolCallId);
    if (!row) return;
    if (open && (row.status === 'running' || row.status === 'pending')) this.updateTool(row, { status: 'permission' });
    else if (!open && row.status === 'permission') this.updateTool(row, { status: 'running', question: undefined });
    else if (!open && row.question) this.updateTool(row, { question: undefined });
  }

  /**
   * Put a permission question's answers, and what it shows of the call (`detail`), on its
   * call's row (waiting for permission); whether the row can show it.
   */
  askOnRow(toolCallId: string, choices: PermissionChoice[], detail?: QuestionDetail): boolean {
    const row = this.toolRows.get(toolCallId);
    if (!row || row.status !== 'permission') return false;
    this.updateTool(row, { question: choices, questionDetail: detail });
    return true;
  }

  /**
   * The budget's question about the run `runId` (it reached a limit): a card of its own at the
   * end of the transcript, with `title`, `detail` (the limit and its use) and the answers.
   */
  askBudget(runId: string, title: string, detail: string | undefined, choices: PermissionChoice[]): void {
    const row: Extract<Row, { kind: 'budget' }> = { kind: 'budget', id: `budget:${runId}`, runId, title, ...(detail ? { detail } : {}), question: choices };
    this.openBudget.set(runId, row);
    this.put(row);
  }

  /** The budget's question was answered with `label` (`''`: not answered, cancelled): the card keeps the answer, no buttons. */
  budgetAnswered(runId: string, label: string): void {
    this.openBudget.delete(runId);
    const row = this.byId.get(`budget:${runId}`);
    if (row?.kind !== 'budget') return;
    const { question: _answered, ...rest } = row;
    this.put({ ...rest, answer: label });
  }

  /** A call's change waits for review (`true`) or was answered (`false`). */
  setAwaitingReview(toolCallId: string, open: boolean): void {
    const row = this.toolRows.get(toolCallId);
    if (!row) return;
    if (open && (row.status === 'running' || row.status === 'pending')) this.updateTool(row, { status: 'review' });
    else if (!open && row.status === 'review') this.updateTool(row, { status: 'running' });
  }

  // --- the user's commands and compactions --------------------------------------------------

  /** `agent/bash` answered: the command's row (its output may have come before); whether it still runs. */
  bashStarted(bashId: string, command: string, excluded: boolean): boolean {
    const row = this.bashRow(bashId);
    if (row.status !== 'running') return false;
    this.put({ ...row, command, excluded });
    return true;
  }

  /** `agent/bashOutput`: the next piece of the command's output. */
  bashOutput(bashId: string, chunk: string): void {
    const row = this.bashRow(bashId);
    if (row.status !== 'running') return; // the message has the output already
    const tail = appendTail(this.bashTails.get(row.id) ?? EMPTY_TAIL, chunk);
    this.bashTails.set(row.id, tail);
    this.put({ ...row, output: tailText(tail) });
  }

  /** `agent/bashEnd`: the command's `bashExecution` message. */
  bashEnded(bashId: string, message: BashExecutionMessage): void {
    const id = this.bashById.get(bashId) ?? this.bashByMessage.get(bashKey(message)) ?? `bash:${bashId}`;
    this.bashById.set(bashId, id);
    this.putBash(id, message);
  }

  /** `agent/compaction`: a compaction starts or ends (an end may come without a start: a retry given up). */
  applyCompaction(note: CompactionNotification): void {
    if (note.phase === 'start') {
      this.compacting = this.newCompactionId();
      const { reason, tokensBefore } = note;
      this.put({ kind: 'compaction', id: this.compacting, status: 'running', reason, tokensBefore, summary: '' });
      return;
    }
    const id = this.compacting ?? this.newCompactionId();
    this.compacting = undefined;
    const row: CompactionRow = {
      kind: 'compaction',
      id,
      status: note.errorMessage ? 'failed' : note.aborted ? 'aborted' : 'done',
      reason: note.reason,
      tokensBefore: note.tokensBefore,
      summary: note.summary ?? '',
      ...(typeof note.tokensAfter === 'number' ? { tokensAfter: note.tokensAfter } : {}),
      ...(note.errorMessage ? { error: note.errorMessage } : {}),
    };
    this.put(row);
  }

  private newCompactionId(): string {
    this.compactionCount += 1;
    return `compaction:${this.compactionCount}`;
  }

  /** A line of the extension's own (an abort, a failed request, a loaded session). */
  addNotice(text: string, level: 'info' | 'warning' | 'error' = 'info'): void {
    this.noticeCount += 1;
    this.put({ kind: 'notice', id: `n${this.noticeCount}`, level, text });
  }

  /**
   * The index in the transcript (`agent/getMessages`, since the last `clear`) of the user
   * message of row `rowId`; `undefined` for any other row.
   */
  userMessageIndex(rowId: string): number | undefined {
    const row = this.byId.get(rowId);
    const match = row?.kind === 'user' ? /^m(\d+)\/user$/.exec(rowId) : null;
    return match ? Number(match[1]) - 1 - this.base : undefined;
  }

  /** The rows added or changed since the last call, in transcript order. */
  takeChanges(): Row[] {
    if (this.changed.size === 0) return [];
    const rows = this.list.filter((row) => this.changed.has(row.id)).map((row) => ({ ...row }));
    this.changed.clear();
    return rows;
  }

  /** The rows as plain text (tests, the self-test's report). */
  plainText(): string {
    return this.list
      .map((row) => {
        switch (row.kind) {
          case 'user':
            return `> ${row.text}${row.context ? ` [${row.context.map((chip) => chip.label).join(', ')}]` : ''}`;
          case 'text':
            return row.text;
          case 'thinking':
            return `(thinking) ${row.text}`;
          case 'tool':
            return `[${row.name} ${row.summary}: ${row.status}] ${row.output}`;
          case 'bash':
            return `$ ${row.command} [${bashLabel(row)}${row.excluded ? ', not sent to the model' : ''}] ${row.output}`;
          case 'compaction':
            return `[compaction ${row.status}: ${row.tokensBefore} -> ${row.tokensAfter ?? '?'} tokens] ${
              row.error ?? row.summary
            }`;
          case 'branchSummary':
            return `[branch summary] ${row.summary}`;
          case 'notice':
            return `! ${row.text}`;
          case 'budget':
            return `[budget] ${row.title}${row.detail ? ` (${row.detail})` : ''}${
              row.question ? ` [${row.question.map((choice) => choice.label).join(' | ')}]` : row.answer ? ` -> ${row.answer}` : ''
            }`;
          case 'custom':
            return `(${row.role}) ${row.text}`;
        }
      })
      .join('\n');
  }

  // --- messages ----------------------------------------------------------------------------

  private startMessage(message: Message): void {
    this.messageCount += 1;
    const key = `m${this.messageCount}`;
    this.current = key;
    if (message.role !== 'user') this.flushContext(); // an editorContext message before this one had no user message
    if (message.role === 'assistant') {
      this.applyBlocks(key, (message as AssistantMessage).content ?? [], false);
    } else {
      this.showMessage(key, message);
    }
  }

  private endMessage(message: Message): void {
    const key = this.current ?? `m${++this.messageCount}`;
    this.current = undefined;
    if (message.role !== 'assistant') {
      this.showMessage(key, message);
      return;
    }
    const assistant = message as AssistantMessage;
    this.applyBlocks(key, assistant.content ?? [], true);
    const stop = assistant.stopReason;
    if (stop === 'error' || stop === 'aborted') {
      for (const row of this.list) {
        if (row.kind === 'tool' && row.id.startsWith(`${key}/`) && isUnstarted(row.status)) {
          this.updateTool(row, { status: 'skipped' });
        }
      }
      const text = stop === 'aborted' ? `Aborted${detail(assistant.errorMessage)}` : assistant.errorMessage ?? 'Error';
      this.put({ kind: 'notice', id: `${key}/stop`, level: stop === 'aborted' ? 'warning' : 'error', text });
    }
  }

  /** User, tool-result, coding-role and custom messages (whole at start and again at end). */
  private showMessage(key: string, message: Message): void {
    switch (message.role) {
      case 'user': {
        const content = (message as { content: unknown }).content;
        const id = `${key}/user`;
        // Shown at its start and again at its end: the chips are taken at the start.
        const existing = this.byId.get(id);
        const context = this.pendingContext?.chips ?? (existing?.kind === 'user' ? existing.context : undefined);
        this.pendingContext = undefined;
        this.put({
          kind: 'user',
          id,
          text: contentText(content),
          images: countImages(content),
          ...(context ? { context } : {}),
        });
        break;
      }
      case 'toolResult': {
        const result = message as ToolResultMessage;
        const row = this.toolRow(result.toolCallId, result.toolName, undefined);
        this.updateTool(row, { status: result.isError ? 'error' : 'done', ...resultView(contentText(result.content), result.details) });
        break;
      }
      case 'bashExecution': {
        const bash = message as BashExecutionMessage;
        const id = this.bashByMessage.get(bashKey(bash)) ?? this.runningBash(bash.command) ?? `${key}/bash`;
        this.putBash(id, bash);
        break;
      }
      case 'compactionSummary': {
        // Live, the summary joins the transcript between the compaction's start and end: its row, still running.
        const { summary, tokensBefore } = message as CompactionSummaryMessage;
        const running = this.compacting !== undefined ? this.byId.get(this.compacting) : undefined;
        if (running?.kind === 'compaction') this.put({ ...running, tokensBefore, summary });
        else this.put({ kind: 'compaction', id: `${key}/compaction`, status: 'done', tokensBefore, summary });
        break;
      }
      case 'branchSummary':
        this.put({ kind: 'branchSummary', id: `${key}/branch`, summary: (message as BranchSummaryMessage).summary });
        break;
      case 'custom': {
        const custom = message as CustomTypeMessage;
        const chips = custom.customType === EDITOR_CONTEXT ? contextChips(custom.details) : undefined;
        if (custom.display && chips) {
          this.pendingContext = { key, chips, text: contentText(custom.content) };
        } else if (custom.display) {
          const text = contentText(custom.content);
          this.put({ kind: 'custom', id: `${key}/custom`, role: custom.customType, text });
        }
        break;
      }
      default: {
        const content = (message as { content?: unknown }).content;
        const text = typeof content === 'string' || Array.isArray(content) ? contentText(content) : '';
        this.put({ kind: 'custom', id: `${key}/custom`, role: message.role, text: text || JSON.stringify(message) });
      }
    }
  }

  /** An `editorContext` message no user message followed: show it as it is. */
  private flushContext(): void {
    const pending = this.pendingContext;
    if (!pending) return;
    this.pendingContext = undefined;
    this.put({ kind: 'custom', id: `${pending.key}/custom`, role: EDITOR_CONTEXT, text: pending.text });
  }

  /** Put every block of an assistant message at its index; `final` ends streaming. */
  private applyBlocks(key: string, content: readonly ContentBlock[], final: boolean): void {
    content.forEach((block, index) => {
      const id = `${key}/${index}`;
      switch (block.type) {
        case 'text':
          if (block.text !== '' || this.byId.has(id)) {
            this.put({ kind: 'text', id, text: block.text, streaming: !final });
          }
          break;
        case 'thinking':
          this.put({
            kind: 'thinking',
            id,
            text: block.thinking,
            streaming: !final,
            redacted: block.redacted === true,
          });
          break;
        case 'toolCall':
          this.putToolCall(id, block.id, block.name, block.arguments);
          break;
        default:
          break; // images are not shown in the transcript
      }
    });
  }

  // --- deltas ------------------------------------------------------------------------------

  private applyDelta(event: AssistantMessageEvent): void {
    const key = this.current;
    if (key === undefined || !('contentIndex' in event)) return; // start, done, error: message_end follows
    const id = `${key}/${event.contentIndex}`;
    const row = this.byId.get(id);
    switch (event.type) {
      case 'text_start':
        this.put({ kind: 'text', id, text: '', streaming: true });
        break;
      case 'thinking_start':
        this.put({ kind: 'thinking', id, text: '', streaming: true, redacted: false });
        break;
      case 'toolcall_start':
        this.put({ kind: 'tool', id, name: '', summary: '', args: '', status: 'streaming', output: '' });
        break;
      case 'text_delta':
      case 'thinking_delta':
        if (row && (row.kind === 'text' || row.kind === 'thinking')) {
          this.put({ ...row, text: row.text + event.delta });
        } else {
          // a delta without its start (a lost notification): start the block with it
          const kind = event.type === 'text_delta' ? 'text' : 'thinking';
          this.put(
            kind === 'text'
              ? { kind, id, text: event.delta, streaming: true }
              : { kind, id, text: event.delta, streaming: true, redacted: false },
          );
        }
        break;
      case 'toolcall_delta': {
        const args = (row?.kind === 'tool' ? row.args : '') + event.delta;
        const base: ToolRow =
          row?.kind === 'tool' ? row : { kind: 'tool', id, name: '', summary: '', args: '', status: 'streaming', output: '' };
        this.put({ ...base, args, summary: summarizePartialArgs(args) });
        break;
      }
      case 'text_end':
        this.put({ kind: 'text', id, text: event.content, streaming: false });
        break;
      case 'thinking_end':
        this.put({
          kind: 'thinking',
          id,
          text: event.content,
          streaming: false,
          redacted: row?.kind === 'thinking' && row.redacted,
        });
        break;
      case 'toolcall_end':
        this.putToolCall(id, event.toolCall.id, event.toolCall.name, event.toolCall.arguments);
        break;
    }
  }

  // --- bash rows ---------------------------------------------------------------------------

  /** The row of a user's command, made at its first sign (the answer to `agent/bash`, or output before it). */
  private bashRow(bashId: string): BashRow {
    const id = this.bashById.get(bashId) ?? `bash:${bashId}`;
    this.bashById.set(bashId, id);
    const found = this.byId.get(id);
    if (found?.kind === 'bash') return found;
    const row: BashRow = {
      kind: 'bash',
      id,
      command: '',
      output: '',
      status: 'running',
      exitCode: null,
      truncated: false,
      excluded: false,
    };
    this.put(row);
    return row;
  }

  /**
   * The running command's row: its message joined the transcript before its `agent/bashEnd`
   * (one command runs at a time; its command is unknown if only its output has come yet).
   */
  private runningBash(command: string): string | undefined {
    const running = (row: Row): boolean =>
      row.kind === 'bash' && row.status === 'running' && (row.command === command || row.command === '');
    return this.list.find(running)?.id;
  }

  private putBash(id: string, message: BashExecutionMessage): void {
    this.bashTails.delete(id);
    const row: BashRow = {
      kind: 'bash',
      id,
      command: message.command,
      output: truncateTail(message.output, MAX_OUTPUT),
      status: bashStatus(message),
      exitCode: message.exitCode ?? null,
      truncated: message.truncated === true,
      excluded: message.excludeFromContext === true,
      ...(message.fullOutputPath ? { fullOutputPath: message.fullOutputPath } : {}),
    };
    this.put(row);
    this.bashByMessage.set(bashKey(message), id);
  }

  // --- tool rows ---------------------------------------------------------------------------

  /** The call is complete (toolcall_end or a final message): name, arguments and id are known. */
  private putToolCall(id: string, toolCallId: string, name: string, args: unknown): void {
    const existing = this.toolRows.get(toolCallId) ?? this.byId.get(id);
    const status: ToolStatus =
      existing?.kind === 'tool' && existing.status !== 'streaming' ? existing.status : 'pending';
    const output = existing?.kind === 'tool' ? existing.output : '';
    const row: ToolRow = {
      kind: 'tool',
      id: existing?.id ?? id,
      toolCallId,
      name,
      summary: summarizeArgs(name, args),
      args: prettyArgs(args),
      status,
      output,
      ...withTarget(name, args),
    };
    this.put(row);
    this.toolRows.set(toolCallId, row);
  }

  /** The row of a tool call, made when the call was never seen (a loaded transcript's gap). */
  private toolRow(toolCallId: string, name: string, args: unknown): ToolRow {
    const found = this.toolRows.get(toolCallId);
    if (found) return found;
    const row: ToolRow = {
      kind: 'tool',
      id: `tool:${toolCallId}`,
      toolCallId,
      name,
      summary: summarizeArgs(name, args),
      args: prettyArgs(args),
      status: 'pending',
      output: '',
      ...withTarget(name, args),
    };
    this.put(row);
    this.toolRows.set(toolCallId, row);
    return row;
  }

  private updateTool(
    row: ToolRow,
    change: {
      status?: ToolStatus;
      output?: string;
      diff?: DiffView | undefined;
      question?: PermissionChoice[] | undefined;
      questionDetail?: QuestionDetail | undefined;
    },
  ): void {
    const current = (row.toolCallId && this.toolRows.get(row.toolCallId)) || row;
    const { question, questionDetail, diff, ...rest } = { ...current, ...change };
    const base: ToolRow = diff ? { ...rest, diff } : rest;
    // a question lasts only while the call waits for permission
    const asking = question !== undefined && rest.status === 'permission';
    const next: ToolRow = asking ? { ...base, question, ...(questionDetail ? { questionDetail } : {}) } : base;
    this.put(next);
    if (next.toolCallId) this.toolRows.set(next.toolCallId, next);
  }

  private put(row: Row): void {
    const existing = this.byId.get(row.id);
    if (existing) {
      this.list[this.list.lastIndexOf(existing)] = row; // the changing row is nearly always the last
    } else {
      this.list.push(row);
    }
    this.byId.set(row.id, row);
    if (row.kind === 'tool' && row.toolCallId) this.toolRows.set(row.toolCallId, row);
    this.changed.add(row.id);
  }
}

/** `{target}` of a file tool's call (absent for others, so rows without one stay as they were). */
function withTarget(name: string, args: unknown): { target?: { path: string; line?: number } } {
  const target = toolTarget(name, args);
  return target ? { target } : {};
}

function isUnstarted(status: ToolStatus): boolean {
  return status === 'streaming' || status === 'pending';
}

/** As Pi's bash component: cancelled, else an error for a non-zero exit code, else done. */
function bashStatus(message: BashExecutionMessage): BashStatus {
  if (message.cancelled) return 'cancelled';
  return typeof message.exitCode === 'number' && message.exitCode !== 0 ? 'error' : 'done';
}

/** The identity of a `bashExecution` message: the same object comes in `agent/bashEnd` and in the events. */
function bashKey(message: BashExecutionMessage): string {
  return `${message.timestamp}\u0000${message.command}`;
}

/**
 * A result as its row shows it: the text, and the diff of its `details` (an `edit`'s) apart,
 * the text then without the diff it ends with (the row shows it coloured instead).
 */
function resultView(text: string, details: unknown): { output: string; diff?: DiffView } {
  const raw = details !== null && typeof details === 'object' ? (details as { diff?: unknown }).diff : undefined;
  const diff = typeof raw === 'string' && raw !== '' ? parseUnifiedDiff(raw) : undefined;
  if (!diff || typeof raw !== 'string') return { output: truncateHead(text) };
  const rest = text.endsWith(raw) ? text.slice(0, text.length - raw.length).trimEnd().replace(/:$/, '') : text;
  return { output: truncateHead(rest), diff };
}

function resultText(result: ToolResult | undefined): string {
  return contentText(result?.content);
}

function detail(message: string | undefined): string {
  return message && !/\baborted\b/i.test(message) ? `: ${message}` : '';
}
