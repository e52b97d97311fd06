/**
 * What the agent panel shows, and the messages between the extension and the panel's webview.
 *
 * Types only, shared by the extension host (which owns the state) and the webview
 * (which renders it). The transcript is a flat list of rows: one per user message, per
 * assistant text or thinking block, per tool call, per command the user ran, per
 * compaction or summary, and per notice.
 */

import type {
  Attachment,
  CommandInfo,
  CompactionReason,
  McpStatus,
  ModelInfo,
  PermissionOutcome,
  PermissionPresetInfo,
  QueueItem,
  SandboxState,
  ThinkingLevel,
} from './protocol';

/** The header's sandbox badge: its text, its tooltip, and the status that colours it. */
export interface SandboxBadge {
  text: string;
  title: string;
  status: SandboxState['status'];
}

/** The header's spend against the budget: `$0.12 / $1.00 · 3/10 turns`, its tooltip, whether a limit is reached. */
export interface BudgetView {
  text: string;
  title: string;
  reached: boolean;
}

/** `add` / `del`: a line added or removed; `ctx`: unchanged; `hunk`: where the next lines are; `note`: `\ No newline…`, a cut. */
export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its `+`/`-`/` ` marker, control characters written out. */
  text: string;
}

export interface DiffView {
  /** The file, as the diff's `+++ b/…` (or `--- a/…`) names it; `''` when it names none. */
  file: string;
  added: number;
  removed: number;
  lines: DiffLine[];
}

/**
 * `streaming`: the model is still writing the call; `pending`: written, not started yet;
 * `permission`: started, waiting for the user's answer to `agent/requestPermission`;
 * `review`: its change waits for the user's Accept or Reject (`agent/reviewEdit`).
 */
export type ToolStatus = 'streaming' | 'pending' | 'running' | 'permission' | 'review' | 'done' | 'error' | 'skipped';

/** A command the user ran (`!cmd`): `error` is a non-zero exit code. */
export type BashStatus = 'running' | 'done' | 'error' | 'cancelled';

export type CompactionStatus = 'running' | 'done' | 'failed' | 'aborted';

export type Row =
  | {
      kind: 'user';
      id: string;
      text: string;
      images: number;
      /** What the editor attached to it (the `editorContext` message before it), as chips. */
      context?: ContextChip[];
    }
  | { kind: 'text'; id: string; text: string; streaming: boolean }
  | { kind: 'thinking'; id: string; text: string; streaming: boolean; redacted: boolean }
  | {
      kind: 'tool';
      id: string;
      toolCallId?: string;
      name: string;
      /** One line: the command, the path, ... */
      summary: string;
      /** The arguments as pretty JSON (or the partial JSON while streaming). */
      args: string;
      status: ToolStatus;
      /** Streamed partial output while running, the result once ended. */
      output: string;
      /** The permission question asked inline about this call (`agentls.permissionPrompt` `inline`): its answers. */
      question?: PermissionChoice[];
      /** What that question shows of the call beside its answers: the whole command, the change, the arguments. */
      questionDetail?: QuestionDetail;
      /** The change an `edit` made (its result's `details.diff`), shown coloured under the result's first line. */
      diff?: DiffView;
      /** The file or folder of a `read`/`edit`/`write`/`ls`/`find`/`grep` call (its `path` argument): a click opens it. */
      target?: { path: string; line?: number };
    }
  | {
      kind: 'bash';
      id: string;
      command: string;
      /** Streamed output while running, the message's output once ended. */
      output: string;
      status: BashStatus;
      exitCode: number | null;
      truncated: boolean;
      fullOutputPath?: string;
      /** `!!cmd`: never sent to the model. */
      excluded: boolean;
    }
  | {
      kind: 'compaction';
      id: string;
      status: CompactionStatus;
      /** Unknown for a compaction loaded from the stored messages. */
      reason?: CompactionReason;
      tokensBefore: number;
      tokensAfter?: number;
      /** Markdown; empty until a compaction has succeeded. */
      summary: string;
      error?: string;
    }
  | { kind: 'branchSummary'; id: string; summary: string }
  | { kind: 'notice'; id: string; level: 'info' | 'warning' | 'error'; text: string }
  /**
   * The budget's question (`agent/requestPermission` `kind: "budget"`): the run `runId` reached a
   * limit; `question`: its answers while it is open (the server's options), `answer`: the label
   * chosen once it was answered (`''`: no answer, the question was cancelled).
   */
  | { kind: 'budget'; id: string; runId: string; title: string; detail?: string; question?: PermissionChoice[]; answer?: string }
  | { kind: 'custom'; id: string; role: string; text: string };

/** A chip on a user message: what the server says it attached (`details.attachments` of `editorContext`). */
export interface ContextChip {
  type: string;
  label: string;
  title: string;
}

/**
 * What the inline permission card shows of its call: `command`, a `bash` call's whole command
 * (control characters written out, newlines kept); `diff`, the change of a `write` or `edit`;
 * `args`, any other tool's arguments (an MCP tool's) as pretty JSON.
 */
export type QuestionDetail =
  | { kind: 'command'; text: string }
  | { kind: 'diff'; diff: DiffView }
  | { kind: 'args'; text: string }
  /** The sandbox's question (`kind: "sandbox"`): the command to run once OUTSIDE the sandbox, and what it may have denied. */
  | { kind: 'sandbox'; command: string; denied?: string };

/**
 * An answer of a permission question: `allowOnce`, `allowAlways`, `allowAlwaysServer` (MCP tools),
 * `runUnsandboxed` (the sandbox's question), `raiseBudget` (the budget's) or `reject`, with the server's label.
 */
export interface PermissionChoice {
  id: PermissionOutcome;
  label: string;
}

/**
 * How the prompt box's text goes (`agent/prompt`'s `whenBusy`): `steer` (Enter) is a prompt when
 * the agent is idle, else delivered after its current turn; `followUp` (Alt+Enter) is a prompt
 * when idle, else delivered when the agent would otherwise stop.
 */
export type SubmitMode = 'steer' | 'followUp';

export type RunStatus = 'idle' | 'running' | 'permission' | 'review';

/** The session's figures, as Pi's footer shows them. */
export interface Stats {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  /** Context use in percent of the model's window, when known. */
  contextPercent: number | null;
}

/** An attachment as the prompt box shows it. */
export interface Chip {
  attachment: Attachment;
  /** `calc.py:3-4`, `README.md`, `2 problems`. */
  label: string;
  /** The tooltip: the full path, the lines. */
  title: string;
}

/** A workspace file the `@` completion offers. */
export interface FileEntry {
  uri: string;
  /** Relative to the workspace folder. */
  path: string;
}

/** What the panel shows of a pending review. */
export interface ReviewInfo {
  id: number;
  sessionId: string;
  toolCallId: string;
  toolName: string;
  /** The file's workspace-relative path (the server's `path`). */
  path: string;
}

/** A server as the panel's MCP menu shows it (`Header.mcp`). */
export interface McpServerView {
  name: string;
  status: McpStatus;
  /** `ready · 2 tools`, `not trusted`, ... */
  statusLine: string;
  /** Where it is configured: `.mcp.json`, `the agentls.mcpServers setting`, ... */
  source: string;
  transport: string;
  error?: string;
  /** Its tools without the `mcp__SERVER__` prefix. */
  tools: string[];
  restartTitle: string;
  /** Its log file (stderr), when the extension knows where it is. */
  log?: string;
}

/** A stored session as the panel's history lists it. */
export interface SessionEntry {
  sessionId: string;
  title: string;
  /** `12 messages · 5 min ago` */
  detail: string;
  /** The full local time, for the tooltip. */
  updated: string;
  current: boolean;
}

/** Everything in the panel except the transcript rows. */
export interface Header {
  connected: boolean;
  /** Set when the server could not be started or the session could not be created. */
  error?: string;
  sessionId?: string;
  status: RunStatus;
  models: ModelInfo[];
  /** `provider/id` of the session's model. */
  model?: string;
  thinkingLevel: ThinkingLevel;
  /** The session's permission preset (the header's toggle), absent when the server has none. */
  permissionPreset?: PermissionPresetInfo;
  /** The preset the toggle (and Shift+Tab in the prompt box) switches to next. */
  nextPermissionPreset?: PermissionPresetInfo;
  queue: QueueItem[];
  stats: Stats;
  canContinue: boolean;
  /** A command the user ran (`!cmd`) is going: Escape or its Stop button aborts it. */
  bashRunning: boolean;
  /** The session's folder, and the project instructions in its system prompt (absolute paths). */
  cwd?: string;
  contextFiles: string[];
  /** The prompt box's chips, sent with the next prompt, steer or follow-up. */
  attachments: Chip[];
  /** The active editor's selection, offered as a chip to click (absent when none, or added already). */
  suggestion?: Chip;
  /** The changes waiting for review (`agent/reviewEdit`), oldest first, of every session. */
  reviews: ReviewInfo[];
  /** How many branches the session's tree has (`agent/getTree`): the header offers the picker from 2. */
  branches: number;
  /** The session's MCP servers (`agent/listMcpServers`, `agent/mcpStatus`): the header's MCP menu, shown when there are any. */
  mcp: McpServerView[];
  /** Mistakes in the session's MCP configuration (the file and the field), shown atop the menu. */
  mcpProblems: string[];
  /** The MCP button: `MCP 1/2` (ready of all), the status that needs attention first, its tooltip. */
  mcpButton: { text: string; status: McpStatus | 'none'; title: string };
  /** The sandbox in force for the agent's bash (`agent/getState`), absent from a server without it. */
  sandbox?: SandboxBadge;
  /** Spend against the budget (`agent/getState`), absent when there are no limits. */
  budget?: BudgetView;
}

/** Extension -> webview. */
export type ToWebview =
  | { type: 'reset'; header: Header; rows: Row[] }
  | { type: 'header'; header: Header }
  | { type: 'rows'; rows: Row[] }
  | { type: 'focusPrompt' }
  | { type: 'setPrompt'; text: string }
  /** The answer to `listCommands`. */
  | { type: 'commands'; commands: CommandInfo[] }
  /** The answer to `listFiles`. */
  | { type: 'files'; files: FileEntry[] }
  /** The answer to `listSessions`: the stored sessions of the workspace, newest first. */
  | { type: 'sessions'; sessions: SessionEntry[] }
  /** Answer with `rendered` (the self-test reads what the panel shows). */
  | { type: 'report' };

/** Webview -> extension. */
export type FromWebview =
  | { type: 'ready' }
  | { type: 'submit'; text: string; mode: SubmitMode }
  | { type: 'abort' }
  | { type: 'abortBash' }
  /** The prompt box starts with `/`: send the templates and skills (`commands`). */
  | { type: 'listCommands' }
  /** An `@` word is being typed: send the workspace's files (`files`). */
  | { type: 'listFiles' }
  /** A file picked from the `@` list: add its chip. */
  | { type: 'addFile'; file: FileEntry }
  /** The × of the chip at `index`. */
  | { type: 'removeAttachment'; index: number }
  /** The suggested chip (the editor's selection) clicked. */
  | { type: 'addSuggestion' }
  | { type: 'continue' }
  | { type: 'newSession' }
  | { type: 'showSessions' }
  | { type: 'removeQueueItem'; id: string }
  /** A queued item edited in place (`agent/editQueueItem`). */
  | { type: 'editQueueItem'; id: string; text: string }
  /** A queued item's ↑ / ↓: one place earlier or later in its own queue (`agent/moveQueueItem`). */
  | { type: 'moveQueueItem'; id: string; by: -1 | 1 }
  /** A user message's Rewind to here / Fork from here (`rowId`: its row). */
  | { type: 'rewind'; rowId: string }
  | { type: 'fork'; rowId: string }
  /** The header's Branches button: pick a branch to switch to (`agent/switchBranch`). */
  | { type: 'switchBranch' }
  /** An answer clicked on a tool row's inline permission question. */
  | { type: 'permission'; toolCallId: string; outcome: PermissionOutcome }
  | { type: 'setModel'; model: string }
  | { type: 'setThinkingLevel'; level: ThinkingLevel }
  /** The header's preset toggle: the next permission preset (`agent/setPermissionPreset`). */
  | { type: 'cyclePermissionPreset' }
  /** A pending review's button: open its diff again, accept or reject it. */
  | { type: 'review'; id: number; action: 'show' | 'accept' | 'reject' }
  /** A Copy button: put `text` on the clipboard. */
  | { type: 'copy'; text: string; what: 'message' | 'code' }
  /** A tool row's path clicked: open it in the editor (relative to the session's folder). */
  | { type: 'openFile'; path: string; line?: number }
  /** The history was opened (or changed): send the stored sessions (`sessions`). */
  | { type: 'listSessions' }
  /** The history's Open, Rename (asks for the name) and Delete (asks first). */
  | { type: 'loadSession'; sessionId: string }
  | { type: 'renameSession'; sessionId: string }
  | { type: 'deleteSession'; sessionId: string }
  /** The text the panel shows, the answer to `report`. */
  | { type: 'rendered'; text: string }
  /** The MCP menu was opened: fetch the session's servers again (`agent/listMcpServers`). */
  | { type: 'listMcpServers' }
  /** The MCP menu's Restart (or Trust… of a server not trusted): `agent/restartMcpServer`. */
  | { type: 'restartMcpServer'; name: string }
  /** The MCP menu's Log: open the server's log file (its stderr). */
  | { type: 'openMcpLog'; name: string };
