/**
 * The parts of the agentls wire protocol (../../protocol.md) the extension uses.
 *
 * Types only: no VS Code import, so the pure modules and the webview can share them.
 */

export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export const THINKING_LEVELS: readonly ThinkingLevel[] = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

/**
 * The answers of `agent/requestPermission`. `allowAlwaysServer`: the question about an MCP
 * tool (`mcp__SERVER__TOOL`) also offers to allow every tool of that server (remembered as
 * `mcp__SERVER__*`). `runUnsandboxed`: the sandbox's question (`kind: "sandbox"`), run a denied
 * `bash` call once outside the sandbox; `raiseBudget`: the budget's (`kind: "budget"`), go on
 * with the limit raised.
 */
export type PermissionOutcome = 'allowOnce' | 'allowAlways' | 'allowAlwaysServer' | 'runUnsandboxed' | 'raiseBudget' | 'reject';

/** What a permission question is about: a tool call, a call the sandbox denied, a run that reached its budget. */
export type PermissionKind = 'tool' | 'sandbox' | 'budget';

// --- sandbox and budget (protocol.md: Sandbox, Budgets) --------------------------------------

export type SandboxMode = 'off' | 'workspace-write' | 'read-only';

/** The `sandbox` setting: initialization options, `agent/newSession`. */
export interface SandboxSettings {
  mode: SandboxMode;
  network?: boolean;
  writableRoots?: string[];
  fallback?: 'refuse' | 'unconfined';
}

/** `agent/getState`'s `sandbox`: the sandbox in force for the agent's `bash`. */
export interface SandboxState {
  mode: SandboxMode;
  network: boolean;
  /** Every folder a confined command may write in (the session's folder, its temporary one, the others). */
  writableRoots: string[];
  /** Folders kept read-only inside a writable one (the session's `.git`). */
  readOnly: string[];
  fallback: 'refuse' | 'unconfined';
  /** `enforced`: commands run confined; `refused`: the kernel cannot, commands do not run; `unconfined`: it cannot and the fallback lets them run. */
  status: 'off' | 'enforced' | 'refused' | 'unconfined';
  /** Why the kernel cannot enforce it. */
  reason?: string;
}

export type BudgetKind = 'maxCostUsd' | 'maxTokens' | 'maxTurns';

export interface BudgetLimits {
  maxCostUsd?: number;
  maxTokens?: number;
  maxTurns?: number;
}

/** The `budget` setting (initialization options, `agent/newSession`, `agent/setBudget`): a run's limits, and the session's. */
export interface BudgetSettings extends BudgetLimits {
  session?: BudgetLimits;
}

export interface BudgetSpent {
  costUsd: number;
  tokens: number;
  turns: number;
}

/** `agent/getState`'s `budget`: the limits, and what the current (or last) run and the whole session spent. */
export interface BudgetState {
  limits: BudgetSettings;
  run: BudgetSpent;
  session: BudgetSpent;
}

/** A limit that was reached (`agent/settled`'s and the budget question's `budget`). */
export interface BudgetUsage {
  kind: BudgetKind;
  scope: 'run' | 'session';
  limit: number;
  used: number;
}

export interface ModelRef {
  provider: string;
  id: string;
}

export interface ModelInfo extends ModelRef {
  name: string;
  reasoning?: boolean;
  contextWindow?: number;
}

// --- content blocks and messages -----------------------------------------------------------

export interface TextContent {
  type: 'text';
  text: string;
}
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  redacted?: boolean;
}
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}
export interface ToolCall {
  type: 'toolCall';
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export type ContentBlock = TextContent | ThinkingContent | ImageContent | ToolCall;

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { total: number };
}

export interface UserMessage {
  role: 'user';
  content: string | ContentBlock[];
  timestamp?: number;
}
export interface AssistantMessage {
  role: 'assistant';
  content: ContentBlock[];
  provider?: string;
  model?: string;
  usage?: Usage;
  stopReason?: string;
  errorMessage?: string;
  timestamp?: number;
}
export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: ContentBlock[];
  /** The tool's own data: `edit` gives `{path, diff, replacements}`. */
  details?: unknown;
  isError?: boolean;
  timestamp?: number;
}
/** A command the user ran (`agent/bash`, the prompt box's `!cmd` / `!!cmd`). */
export interface BashExecutionMessage {
  role: 'bashExecution';
  command: string;
  output: string;
  /** `null` when the command was cancelled. */
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  /** The whole output, when `output` is only its end. */
  fullOutputPath?: string;
  /** `!!cmd`: kept in the transcript, never sent to the model. */
  excludeFromContext?: boolean;
  timestamp: number;
}
/** Content an application adds; `display: false` keeps it out of the transcript view. */
export interface CustomTypeMessage {
  role: 'custom';
  customType: string;
  content: string | ContentBlock[];
  display: boolean;
  details?: unknown;
  timestamp?: number;
}
export interface BranchSummaryMessage {
  role: 'branchSummary';
  summary: string;
  fromId: string;
  timestamp?: number;
}
/** Where a compaction replaced the messages before it (`agent/getMessages` keeps them all). */
export interface CompactionSummaryMessage {
  role: 'compactionSummary';
  summary: string;
  tokensBefore: number;
  timestamp?: number;
}
/** Any other role (a bookmark, a note): shown as it is. */
export interface CustomMessage {
  role: string;
  content?: unknown;
  timestamp?: number;
}
export type Message = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage;

export interface ToolResult {
  content?: ContentBlock[];
  details?: unknown;
}

// --- editor context and diagnostics --------------------------------------------------------

export interface LspPosition {
  line: number;
  character: number;
}
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** What the user attaches to a prompt, a steer or a follow-up (`context`, protocol.md "Editor context"). */
export type Attachment =
  | { type: 'selection'; uri: string; range: LspRange }
  | { type: 'file'; uri: string }
  | { type: 'diagnostics'; uri?: string };

/** One attachment as the server reports it in the `details` of its `editorContext` message (for chips). */
export interface EditorContextAttachmentInfo {
  type: string;
  uri?: string;
  /** Relative to the session's folder. */
  path?: string;
  range?: LspRange;
  /** 1-based. */
  startLine?: number;
  endLine?: number;
  language?: string;
  lines?: number;
  truncated?: boolean;
  /** Diagnostics: how many. */
  count?: number;
}

/** 1 error, 2 warning, 3 information, 4 hint. */
export type LspDiagnosticSeverity = 1 | 2 | 3 | 4;

/** An LSP `Diagnostic`, as `agent/getDiagnostics` answers it. */
export interface LspDiagnostic {
  range: LspRange;
  severity: LspDiagnosticSeverity;
  message: string;
  source?: string;
  code?: string | number;
}

export interface GetDiagnosticsParams {
  uris?: string[];
}

export interface GetDiagnosticsResult {
  diagnostics: { uri: string; items: LspDiagnostic[] }[];
}

// --- events --------------------------------------------------------------------------------

export type AssistantMessageEvent =
  | { type: 'start' }
  | { type: 'text_start' | 'thinking_start' | 'toolcall_start'; contentIndex: number }
  | { type: 'text_delta' | 'thinking_delta' | 'toolcall_delta'; contentIndex: number; delta: string }
  | { type: 'text_end' | 'thinking_end'; contentIndex: number; content: string }
  | { type: 'toolcall_end'; contentIndex: number; toolCall: ToolCall }
  | { type: 'done'; reason: string; message: AssistantMessage }
  | { type: 'error'; reason: string; error: AssistantMessage };

export type AgentEvent =
  | { type: 'agent_start' | 'turn_start' }
  | { type: 'agent_end'; messages: Message[] }
  | { type: 'turn_end'; message: Message; toolResults: Message[] }
  | { type: 'message_start' | 'message_end'; message: Message }
  | { type: 'message_update'; assistantMessageEvent: AssistantMessageEvent }
  | { type: 'tool_execution_start'; toolCallId: string; toolName: string; args: unknown }
  | { type: 'tool_execution_update'; toolCallId: string; toolName: string; args: unknown; partialResult: ToolResult }
  | { type: 'tool_execution_end'; toolCallId: string; toolName: string; result: ToolResult; isError: boolean };

export interface EventNotification {
  sessionId: string;
  /** `null` for a message that joins the transcript between runs (a user's `agent/bash`). */
  runId: string | null;
  /** 1 for the session's first notification in this server, one more with each (a missing one: a gap). */
  seq: number;
  event: AgentEvent;
}

export interface QueueItem {
  id: string;
  kind: 'steering' | 'followUp';
  text: string;
  images?: unknown[];
  context?: Attachment[];
}

export interface QueueLists {
  steering: QueueItem[];
  followUp: QueueItem[];
}

export interface QueueNotification extends QueueLists {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
}

export interface SettledNotification {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
  runId: string;
  stopReason: string;
  errorMessage?: string;
  /** The limit that stopped the run, when a budget did. */
  budget?: BudgetUsage;
}

export type CompactionReason = 'threshold' | 'overflow' | 'manual';

/** `agent/compaction`: a compaction starts (`phase: "start"`) or ends (`"end"`). */
export interface CompactionNotification {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
  /** Absent for `agent/compact`. */
  runId?: string;
  phase: 'start' | 'end';
  reason: CompactionReason;
  tokensBefore: number;
  /** On a successful end, as are `summary` and `firstKeptEntryId`. */
  tokensAfter?: number;
  summary?: string;
  firstKeptEntryId?: string;
  willRetry?: boolean;
  /** On an end: aborted, the session is as it was. */
  aborted?: boolean;
  /** On an end: failed, the session is as it was. */
  errorMessage?: string;
}

/** `agent/bashOutput`: the next piece of a user command's output. */
export interface BashOutputNotification {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
  bashId: string;
  chunk: string;
}

/** `agent/bashEnd`: the command ended; `message` is its `bashExecution` message. */
export interface BashEndNotification {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
  bashId: string;
  message: BashExecutionMessage;
}

/** `agent/branch`: the session moved to another branch (a rewind, a branch switch); fetch its transcript again. */
export interface BranchNotification {
  sessionId: string;
  /** One more than the session's previous notification (see `EventNotification.seq`). */
  seq?: number;
  leafId: string | null;
  messageCount: number;
}

/** Every server -> client notification the extension handles, by method. */
export interface AgentNotifications {
  'agent/event': EventNotification;
  'agent/queue': QueueNotification;
  'agent/branch': BranchNotification;
  'agent/settled': SettledNotification;
  'agent/compaction': CompactionNotification;
  'agent/bashOutput': BashOutputNotification;
  'agent/bashEnd': BashEndNotification;
  'agent/mcpStatus': McpStatusNotification;
}
export type AgentNotification = {
  [M in keyof AgentNotifications]: { method: M; params: AgentNotifications[M] };
}[keyof AgentNotifications];
export const AGENT_NOTIFICATIONS: readonly (keyof AgentNotifications)[] = [
  'agent/event',
  'agent/queue',
  'agent/branch',
  'agent/settled',
  'agent/compaction',
  'agent/bashOutput',
  'agent/bashEnd',
  'agent/mcpStatus',
];

export type McpStatus = 'starting' | 'ready' | 'failed' | 'needsTrust';
export type McpTransport = 'stdio' | 'http' | 'sse';

/** An MCP server of `agent/listMcpServers` (and `agent/restartMcpServer`'s answer). */
export interface McpServerInfo {
  name: string;
  /** The configuration file's path, `initializationOptions` or `newSession`. */
  source: string;
  transport: McpTransport;
  status: McpStatus;
  /** Why it failed (with the tail of its stderr), or what is wrong with its configuration. */
  error?: string;
  /** Its tools, by their agentls names (`mcp__SERVER__TOOL`). */
  tools: string[];
  /** The folder whose sessions share it. */
  cwd: string;
}

/** `agent/mcpStatus`: a server's status or tool list changed (of any folder: filter by `cwd`). */
export type McpStatusNotification = McpServerInfo;

// --- request results -----------------------------------------------------------------------

export interface PromptResult {
  runId?: string;
  queued?: string;
}

/** `agent/getMessages`: the current branch's transcript from `since`, with the session-file entry of each message. */
export interface MessagesResult {
  messages: Message[];
  total: number;
  entryIds: string[];
  /** The `seq` of the session's last notification the messages reflect (for `agent/attach {since}`); absent from an older server. */
  seq?: number;
}

/** `agent/attach`'s result (protocol.md "Live sessions: the per-user server"). */
export interface AttachResult {
  attached: boolean;
  /** How many notifications after `since` were sent again (before this result). */
  replayed: number;
  /** Some after `since` are no longer kept (or the server numbers anew): reload with `agent/getMessages`, attach again. */
  gap: boolean;
  /** The session's last `seq` when the replay ended. */
  seq: number;
}

// --- the session tree (protocol.md "Session tree: rewind, switch branch, fork") -------------

/** An entry of `agent/getTree`: a message, a compaction or a branch summary. */
export interface TreeEntry {
  id: string;
  /** The nearest conversation entry above it; `null` at the root. */
  parentId: string | null;
  type: 'message' | 'compaction' | 'branchSummary';
  role?: string;
  /** One line of at most 120 characters. */
  preview: string;
  timestamp: number;
  label?: string;
  /** On the path from the root to the current position. */
  onBranch: boolean;
  /** The files a `write`/`edit` changed (relative to the session's folder), on its tool result. */
  files?: string[];
}

/** A tip of the tree (or the current position when it is not one). */
export interface BranchInfo {
  leafId: string;
  preview: string;
  timestamp: number;
  messageCount: number;
  current: boolean;
}

export interface TreeResult {
  /** The current position; `null`: before the first message. */
  leafId: string | null;
  entries: TreeEntry[];
  branches: BranchInfo[];
}

/** A file `agent/rewind` / `agent/switchBranch` put back (`applied`: a change of the branch gone to, done again). */
export interface FileChange {
  path: string;
  action: 'reverted' | 'deleted' | 'restored' | 'applied';
}

/** A file that could not be reverted: in `data.files` of a `fileConflict` error, and in `skipped`. */
export interface FileProblem {
  path: string;
  reason: string;
}

/** The result of `agent/rewind` and `agent/switchBranch`. */
export interface BranchResult {
  leafId: string | null;
  messageCount: number;
  reverted: FileChange[];
  skipped: FileProblem[];
  summary?: string;
}

/** The choices of a rewind or a branch switch (`force`: revert the files without a conflict, skip the others). */
export interface BranchOptions {
  files: boolean;
  summarize: boolean;
  force?: boolean;
}

export interface StateResult {
  sessionId: string;
  cwd: string;
  model: ModelRef | null;
  thinkingLevel: ThinkingLevel;
  isRunning: boolean;
  runId?: string;
  messageCount: number;
  errorMessage?: string;
  queue: QueueLists;
  /** The absolute paths of the project instructions (`AGENTS.md`, ...) in the system prompt. */
  contextFiles: string[];
  /** The session's permission preset (`ask`, `acceptEdits`, `plan`, `bypass`); absent from servers before presets. */
  permissionPreset?: string;
  /** Every preset, in the order a one-key switch cycles through them. */
  permissionPresets?: PermissionPresetInfo[];
  /** The sandbox in force for the agent's `bash`; absent from servers before the sandbox. */
  sandbox?: SandboxState;
  /** The limits and what was spent; absent from servers before budgets. */
  budget?: BudgetState;
}

/** A permission preset of `agent/getState` ("modes" as Claude Code and Zed call them). */
export interface PermissionPresetInfo {
  id: string;
  /** Its short name for the header: `Ask before edits`, `Accept edits`, `Read-only`, `Bypass permissions`. */
  name: string;
  description: string;
}

/** A prompt template or a skill of `agent/listCommands`, completed after `/`. */
export interface CommandInfo {
  /** What follows the `/`: a template's name, or `skill:` and a skill's name. */
  name: string;
  description: string;
  kind: 'template' | 'skill';
  argumentHint?: string;
  path: string;
}

export interface CompactResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  tokensAfter?: number;
}

export interface StatsResult {
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  cost: number;
  context: { tokens: number; contextWindow: number; percent: number | null };
}

export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title?: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  model?: ModelRef;
  loaded: boolean;
  /** A run goes on (live sessions, protocol.md "Live sessions: the per-user server"). */
  running?: boolean;
  /** How many clients are attached. */
  clients?: number;
}

export interface AbortResult {
  aborted: boolean;
  runId?: string;
  queue: QueueLists;
}

export interface RequestPermissionParams {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  args?: unknown;
  title: string;
  options: { id: PermissionOutcome; label: string }[];
  /** `tool` (absent from older servers), `sandbox` (run a denied call once outside it), `budget` (`toolCallId` is the run's id). */
  kind?: PermissionKind;
  /** With `kind: "budget"`: the limit reached. */
  budget?: BudgetUsage;
}

/** `agent/reviewEdit`: a `write` or `edit` whose mode is `review` shows its change before it lands. */
export interface ReviewEditParams {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  uri: string;
  /** The file's path relative to the session's folder, as the tool names it. */
  path: string;
  /** The whole file before (the buffer when open, `""` for a new file) and after. */
  oldText: string;
  newText: string;
  /** The diff of `oldText` -> `newText` (absent from servers before hunk-by-hunk review). */
  hunks?: Hunk[];
}

/**
 * The answer to `agent/reviewEdit`: `accept` lands the whole change, `accept` with `hunks`
 * only those (indexes into the params' `hunks`), `accept` with `text` the user's edited text.
 */
export interface ReviewEditResult {
  outcome: 'accept' | 'reject';
  reason?: string;
  hunks?: number[];
  text?: string;
}

/** A hunk of a unified diff with 3 lines of context (`lines`: each with its `" "`, `"-"` or `"+"`). */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed';

/** A file of `agent/getChanges`: its net change over the span, and who made it. */
export interface ChangedFile {
  path: string;
  uri: string;
  status: ChangeStatus;
  oldPath?: string;
  by: string[];
  hunks: Hunk[];
  binary?: boolean;
  recorded?: boolean;
  oldText?: string;
  newText?: string;
}

/** The result of `agent/getChanges`. */
export interface ChangesResult {
  runId?: string;
  fromEntryId: string | null;
  toEntryId: string | null;
  files: ChangedFile[];
  checkpoints: 'on' | 'off' | 'unavailable';
}

/** The result of `agent/revertChanges`. */
export interface RevertResult {
  reverted: { path: string; action: string; hunks?: number[] }[];
  skipped: FileProblem[];
}

export interface SaveDocumentsParams {
  uris: string[];
}

/** Error kinds in `data.kind` of a `-32000` error. */
export type ErrorKind =
  | 'busy'
  | 'unknownSession'
  | 'cannotContinue'
  | 'noModel'
  | 'unknownModel'
  | 'unknownQueueItem'
  | 'invalidParams'
  | 'storage'
  | 'summaryFailed'
  | 'fileConflict'
  | 'compactionFailed';
