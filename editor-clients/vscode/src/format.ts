/** Pure text helpers: tool-call summaries, result text, truncation, figures. */

import type { ContentBlock } from './protocol';
import type { BashStatus, SessionEntry, Stats } from './view';

/** Results longer than this are cut in the panel (the transcript on the server keeps all). */
export const MAX_OUTPUT = 20_000;
/** Partial output while a tool runs: only the latest part is shown. */
export const MAX_PARTIAL = 4_000;
const MAX_SUMMARY = 120;

/**
 * Control and invisible characters that untrusted text (a model's command, a file name, an MCP
 * server's label) could use to hide or reorder what a question shows: C0 but tab and newline,
 * DEL, C1, bidi overrides and isolates, zero-width characters, line separators, the BOM.
 */
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
const HIDDEN_OR_NEWLINE = new RegExp(`${HIDDEN.source}|[\\n\\t]`, 'g');
const NAMES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * `text` with those characters written out (`\r`, `\x1b`, `\u202e`), as agentls's terminal
 * shows them; `newlines: false` writes out newlines and tabs too, for text that must stay on one line.
 */
export function visibleControls(text: string, { newlines = true } = {}): string {
  return text.replace(newlines ? HIDDEN : HIDDEN_OR_NEWLINE, (char) => {
    const code = char.charCodeAt(0);
    return NAMES[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}

/** The message of a permission question's dialog: its title on one line, nothing in it hidden. */
export function permissionMessage(title: string): string {
  return `agentls: ${visibleControls(title, { newlines: false })}`;
}

function oneLine(text: string, max = MAX_SUMMARY): string {
  // spaces and newlines fold; a \r, an escape, a bidi override is written out
  const flat = visibleControls(text.replace(/[ \t\n]+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A one-line summary of a tool call's arguments: the command, the path, the pattern. */
export function summarizeArgs(toolName: string, args: unknown): string {
  if (args === null || typeof args !== 'object') {
    return args === undefined ? '' : oneLine(JSON.stringify(args));
  }
  const a = args as Record<string, unknown>;
  const where = str(a.path);
  switch (toolName) {
    case 'bash':
      return oneLine(str(a.command) ?? '');
    case 'edit': {
      const count = Array.isArray(a.edits) ? a.edits.length : 0;
      return oneLine(`${where ?? ''}${count > 1 ? ` (${count} edits)` : ''}`);
    }
    case 'read': {
      const offset = typeof a.offset === 'number' ? `:${a.offset}` : '';
      return oneLine(`${where ?? ''}${offset}`);
    }
    case 'write':
      return oneLine(where ?? '');
    case 'ls':
      return oneLine(where ?? '.');
    case 'find':
    case 'grep': {
      const pattern = str(a.pattern) ?? '';
      return oneLine(where ? `${pattern} in ${where}` : pattern);
    }
    default: {
      const first = str(a.command) ?? str(a.path) ?? str(a.pattern);
      if (first === undefined && toolName.startsWith(MCP_TOOL_PREFIX)) return oneLine(scalarArgs(a));
      return oneLine(first ?? JSON.stringify(args));
    }
  }
}

/** An MCP tool's arguments in one line: `text: hi, count: 2` (nested values as JSON). */
function scalarArgs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');
}

/**
 * A summary from the arguments' JSON text while the model is still writing it:
 * the value of `command`, `path` or `pattern` as far as it has arrived.
 */
export function summarizePartialArgs(json: string): string {
  try {
    return summarizeArgs('', JSON.parse(json));
  } catch {
    const match = /"(?:command|path|pattern)"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(json);
    if (!match?.[1]) return '';
    let value = match[1];
    try {
      value = JSON.parse(`"${value.replace(/\\$/, '')}"`) as string;
    } catch {
      // a half-written escape: show it raw
    }
    return oneLine(value);
  }
}

/** The prefix of the tools of MCP servers: `mcp__SERVER__TOOL`. */
export const MCP_TOOL_PREFIX = 'mcp__';

/**
 * The server and tool of an MCP tool's name (`mcp__SERVER__TOOL`), else `undefined`. The
 * server is the part up to the first `__` after the prefix, unless `servers` (the known
 * names) holds a longer one that matches (a server name may contain `__` itself).
 */
export function splitMcpTool(name: string, servers: readonly string[] = []): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const known = [...servers].sort((a, b) => b.length - a.length).find((server) => rest.startsWith(`${server}__`) && rest.length > server.length + 2);
  if (known !== undefined) return { server: known, tool: rest.slice(known.length + 2) };
  const at = rest.indexOf('__');
  if (at <= 0 || at + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, at), tool: rest.slice(at + 2) };
}

/** A tool's name for people: `SERVER · TOOL` for an MCP tool, else the name itself. */
export function toolLabel(name: string, servers: readonly string[] = []): string {
  const mcp = splitMcpTool(name, servers);
  return mcp ? `${mcp.server} · ${mcp.tool}` : name;
}

/**
 * What a permission question asks about, in the words of the call: `$ command` for
 * `bash`, the tool and its path for file tools, else the arguments (cut at 600 characters).
 */
export function permissionDetail(toolName: string, args: unknown): string {
  if (toolName === MCP_TRUST_TOOL) return MCP_TRUST_DETAIL;
  const a = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const command = str(a.command);
  if (toolName === 'bash' && command) return `$ ${visibleControls(command.length <= 600 ? command : `${command.slice(0, 600)}…`)}`;
  const mcp = splitMcpTool(toolName);
  const name = visibleControls(mcp ? `${mcp.server} · ${mcp.tool} (MCP server ${mcp.server})` : toolName, { newlines: false });
  const where = str(a.path);
  if (where && !mcp) return `${name} ${summarizeArgs(toolName, args)}`;
  const json = visibleControls(prettyArgs(args));
  return `${name}${json && json !== '{}' ? `\n\n${json.length <= 600 ? json : `${json.slice(0, 600)}…`}` : ''}`;
}

/** The `toolName` of the question whether to trust the MCP servers of a project's `.mcp.json`. */
export const MCP_TRUST_TOOL = 'mcp';

/**
 * The detail of the trust question (its title names the folder's project files, the .mcp.json and
 * everything each server runs, secrets masked, and what changed since the last trust).
 */
export const MCP_TRUST_DETAIL =
  "Trusting a folder lets its project files (AGENTS.md, skills, prompt templates) reach the agent, and a project's " +
  '.mcp.json starts these servers whenever a session of this folder starts: their commands run on this ' +
  'machine with your rights (a URL is connected to), and the agent can call their tools. ' +
  'Trust starts them now and is remembered for this folder until the configuration changes. ' +
  'Reject leaves them off; Agent: MCP Servers (or the MCP menu of the panel) asks again.';

/** Pretty JSON of tool arguments for the expanded row. */
export function prettyArgs(args: unknown): string {
  if (args === undefined) return '';
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

/** The text of content blocks (tool results, user messages); images as `[image]`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content as ContentBlock[]) {
    if (block?.type === 'text') parts.push(block.text);
    else if (block?.type === 'image') parts.push('[image]');
  }
  return parts.join('\n');
}

export function countImages(content: unknown): number {
  return Array.isArray(content) ? (content as ContentBlock[]).filter((b) => b?.type === 'image').length : 0;
}

/** The start of a long text, with a note of how much was left out. */
export function truncateHead(text: string, max = MAX_OUTPUT): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${text.length - max} more characters)`;
}

/** The end of streamed output: its latest characters, and how many came before them. */
export interface OutputTail {
  text: string;
  dropped: number;
}

export const EMPTY_TAIL: OutputTail = { text: '', dropped: 0 };

/** `tail` with `chunk` appended, keeping at most `max` characters. */
export function appendTail(tail: OutputTail, chunk: string, max = MAX_PARTIAL): OutputTail {
  const text = tail.text + chunk;
  const cut = Math.max(0, text.length - max);
  return { text: text.slice(cut), dropped: tail.dropped + cut };
}

/** The tail as text, with a note of how much was left out. */
export function tailText(tail: OutputTail): string {
  return tail.dropped > 0 ? `… (${tail.dropped} earlier characters)\n${tail.text}` : tail.text;
}

/** The end of a long text (the latest output of a running tool). */
export function truncateTail(text: string, max = MAX_PARTIAL): string {
  return tailText(appendTail(EMPTY_TAIL, text, max));
}

/** How a command the user ran ended, in a word or two: `running`, `exit 0`, `exit 2`, `cancelled`. */
export function bashLabel(row: { status: BashStatus; exitCode: number | null }): string {
  if (row.status === 'running' || row.status === 'cancelled') return row.status;
  return row.exitCode === null ? 'done' : `exit ${row.exitCode}`;
}

/** `file` relative to `folder` when it is inside it, else as it is. */
export function relativePath(file: string, folder: string | undefined): string {
  if (!folder) return file;
  const base = folder.replace(/[\\/]+$/, '');
  const rest = file.slice(base.length);
  return file.startsWith(base) && /^[\\/]./.test(rest) ? rest.slice(1) : file;
}

/** `1234` -> `1.2k`, `1234567` -> `1.2M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Dollars: `$0.0042`, `$1.23`. */
export function formatCost(dollars: number): string {
  if (dollars === 0) return '$0';
  return dollars < 0.01 ? `$${dollars.toFixed(4)}` : `$${dollars.toFixed(2)}`;
}

export function modelKey(model: { provider: string; id: string } | null | undefined): string | undefined {
  return model ? `${model.provider}/${model.id}` : undefined;
}

/** `provider/id` -> `{provider, id}`; the id may itself contain slashes. */
export function parseModelKey(key: string): { provider: string; id: string } | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return undefined;
  return { provider: key.slice(0, slash), id: key.slice(slash + 1) };
}

/**
 * The models' names for a picker: the name, with the provider after it (`Claude X (anthropic)`)
 * when another provider offers a model of the same name.
 */
export function modelLabels(models: readonly { provider: string; id: string; name?: string }[]): string[] {
  const names = models.map((model) => model.name || model.id);
  const providers = new Map<string, Set<string>>();
  models.forEach((model, i) => {
    const name = names[i] ?? '';
    providers.set(name, (providers.get(name) ?? new Set()).add(model.provider));
  });
  return models.map((model, i) => {
    const name = names[i] ?? '';
    return (providers.get(name)?.size ?? 0) > 1 ? `${name} (${model.provider})` : name;
  });
}

/**
 * The header's figures, each with the words for its tooltip:
 * `↑25k` input, `↓619` output, `R6.6k` cache read, `W25k` cache write, the cost, `ctx 3%` context used.
 */
export function statsParts(stats: Stats): { text: string; title: string }[] {
  const n = (value: number): string => value.toLocaleString('en-US');
  const parts = [
    { text: `↑${formatTokens(stats.input)}`, title: `Input: ${n(stats.input)} tokens sent to the model (not from the cache)` },
    { text: `↓${formatTokens(stats.output)}`, title: `Output: ${n(stats.output)} tokens the model wrote` },
  ];
  if (stats.cacheRead > 0) parts.push({ text: `R${formatTokens(stats.cacheRead)}`, title: `Cache read: ${n(stats.cacheRead)} input tokens read from the prompt cache` });
  if (stats.cacheWrite > 0) parts.push({ text: `W${formatTokens(stats.cacheWrite)}`, title: `Cache write: ${n(stats.cacheWrite)} input tokens written to the prompt cache` });
  parts.push({ text: formatCost(stats.cost), title: `Cost of the session so far: ${formatCost(stats.cost)}` });
  if (stats.contextPercent !== null) {
    parts.push({ text: `ctx ${stats.contextPercent.toFixed(0)}%`, title: `Context used: ${stats.contextPercent.toFixed(1)}% of the model's context window` });
  }
  return parts;
}

/** The tools whose `path` argument names a file or folder the panel can open. */
const PATH_TOOLS = new Set(['read', 'edit', 'write', 'ls', 'find', 'grep']);

/**
 * The file (or folder) a tool call is about, to open from its row: the `path` argument
 * of `read`, `edit`, `write`, `ls`, `find` and `grep` (as the model wrote it, relative
 * to the session's folder or absolute), with the line a `read` starts at.
 */
export function toolTarget(toolName: string, args: unknown): { path: string; line?: number } | undefined {
  if (!PATH_TOOLS.has(toolName) || args === null || typeof args !== 'object') return undefined;
  const a = args as Record<string, unknown>;
  const where = str(a.path);
  if (!where) return undefined;
  const line = toolName === 'read' && typeof a.offset === 'number' && a.offset >= 1 ? Math.floor(a.offset) : undefined;
  return line !== undefined ? { path: where, line } : { path: where };
}

/** How long ago `then` was, in words: `just now`, `5 min ago`, `3 h ago`, `2 days ago`, else the date. */
export function timeAgo(then: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return 'just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  if (days < 30) return `${days} ${days === 1 ? 'day' : 'days'} ago`;
  return new Date(then).toISOString().slice(0, 10);
}

/** A session's title for people: its title, else `(no prompt yet)`. */
export function sessionTitle(session: { title?: string }): string {
  return session.title?.trim() || '(no prompt yet)';
}

/** The sessions of `agent/listSessions` (newest first) as the history's entries. */
export function sessionEntries(
  sessions: readonly { sessionId: string; title?: string; updatedAt: number; messageCount: number }[],
  currentId: string | undefined,
  now: number,
): SessionEntry[] {
  return sessions.map((s) => ({
    sessionId: s.sessionId,
    title: sessionTitle(s),
    detail: `${s.messageCount} ${s.messageCount === 1 ? 'message' : 'messages'} · ${timeAgo(s.updatedAt, now)}`,
    updated: new Date(s.updatedAt).toLocaleString(),
    current: s.sessionId === currentId,
  }));
}
