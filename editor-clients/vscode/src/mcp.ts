/**
 * MCP servers as the editor shows them (pure: no VS Code import, so the webview and the
 * unit tests use it too; no Node import either, for the webview's bundle): the servers of the session (`agent/listMcpServers`) kept up to
 * date by `agent/mcpStatus`, their labels, and the names of their tools.
 */

import { MCP_TOOL_PREFIX, relativePath } from './format';

export { MCP_TOOL_PREFIX, splitMcpTool, toolLabel } from './format';
import type { McpServerInfo, McpStatus, McpStatusNotification } from './protocol';
import type { McpServerView } from './view';

/** The tool names of an MCP server without their `mcp__SERVER__` prefix. */
export function shortToolNames(server: McpServerInfo): string[] {
  const prefix = `${MCP_TOOL_PREFIX}${server.name}__`;
  return server.tools.map((tool) => (tool.startsWith(prefix) ? tool.slice(prefix.length) : tool));
}

export const MCP_STATUS_LABEL: Record<McpStatus, string> = {
  starting: 'starting',
  ready: 'ready',
  failed: 'failed',
  needsTrust: 'not trusted',
};

/** A codicon per status, for the quick pick (`$(name)`). */
export const MCP_STATUS_ICON: Record<McpStatus, string> = {
  starting: 'sync~spin',
  ready: 'pass',
  failed: 'error',
  needsTrust: 'shield',
};

/** One line about a server: its status and tools (`ready · 3 tools`, `not trusted`). */
export function mcpStatusLine(server: McpServerInfo): string {
  const count = server.tools.length;
  const tools = server.status === 'ready' || count > 0 ? ` · ${count} ${count === 1 ? 'tool' : 'tools'}` : '';
  return `${MCP_STATUS_LABEL[server.status]}${tools}`;
}

/** Where a server's configuration comes from, for people: the file's name relative to `cwd`, or the option. */
export function mcpSourceLabel(server: McpServerInfo): string {
  if (server.source === 'initializationOptions') return 'the agentls.mcpServers setting';
  if (server.source === 'newSession') return 'this session';
  return relativePath(server.source, server.cwd);
}

/** What the restart of a server does, for its button's tooltip. */
export function restartTitle(server: McpServerInfo): string {
  return server.status === 'needsTrust'
    ? `Ask again whether to trust ${server.name} (the commands of ${mcpSourceLabel(server)})`
    : `Stop ${server.name} and start it again`;
}

/** Two folder paths name the same folder (the server sends them resolved; a trailing separator aside). */
export function sameFolder(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const trim = (p: string): string => (p.length > 1 ? p.replace(/[\\/]+$/, '') : p);
  return trim(a) === trim(b);
}

/**
 * The session's server list after an `agent/mcpStatus`: the entry of that name and folder
 * replaced in place. `known: false` when the notification is of the session's folder
 * (`cwd`) but the list has no such server: fetch the list again (it may be a server of
 * another session of the same folder, which `agent/listMcpServers` leaves out).
 */
export function applyMcpStatus(
  servers: readonly McpServerInfo[],
  note: McpStatusNotification,
  cwd: string | undefined,
): { servers: McpServerInfo[]; changed: boolean; known: boolean } {
  const index = servers.findIndex((server) => server.name === note.name && sameFolder(server.cwd, note.cwd));
  if (index < 0) return { servers: [...servers], changed: false, known: !sameFolder(note.cwd, cwd) };
  const next = [...servers];
  const entry: McpServerInfo = {
    name: note.name,
    source: note.source ?? servers[index]?.source ?? '',
    transport: note.transport ?? servers[index]?.transport ?? 'stdio',
    status: note.status,
    ...(note.error ? { error: note.error } : {}),
    tools: Array.isArray(note.tools) ? note.tools : [],
    cwd: note.cwd,
  };
  next[index] = entry;
  return { servers: next, changed: JSON.stringify(entry) !== JSON.stringify(servers[index]), known: true };
}

/** The header's MCP button: `MCP 2/3` (ready of all), and the status that needs attention first. */
export function mcpSummary(
  servers: readonly McpServerInfo[],
  problems = 0,
): { text: string; status: McpStatus | 'none'; title: string } {
  const mistakes = problems > 0 ? `\n${problems} ${problems === 1 ? 'mistake' : 'mistakes'} in the MCP configuration` : '';
  if (servers.length === 0) {
    return problems > 0
      ? { text: 'MCP', status: 'failed', title: `No MCP servers in this session${mistakes}` }
      : { text: 'MCP', status: 'none', title: 'No MCP servers in this session' };
  }
  const ready = servers.filter((server) => server.status === 'ready').length;
  const worst: McpStatus = problems > 0 || servers.some((s) => s.status === 'failed')
    ? 'failed'
    : servers.some((s) => s.status === 'needsTrust')
      ? 'needsTrust'
      : servers.some((s) => s.status === 'starting')
        ? 'starting'
        : 'ready';
  const lines = servers.map((server) => `${server.name}: ${mcpStatusLine(server)}`);
  return { text: `MCP ${ready}/${servers.length}`, status: worst, title: `MCP servers of this session\n${lines.join('\n')}${mistakes}` };
}

/** The menu's entries of the session's servers; `logFile` finds a server's log (`undefined`: none known). */
export function mcpViews(servers: readonly McpServerInfo[], logFile: (name: string) => string | undefined = () => undefined): McpServerView[] {
  return servers.map((server) => {
    const log = logFile(server.name);
    return {
      name: server.name,
      status: server.status,
      statusLine: mcpStatusLine(server),
      source: mcpSourceLabel(server),
      transport: server.transport,
      ...(server.error ? { error: server.error } : {}),
      tools: shortToolNames(server),
      restartTitle: restartTitle(server),
      ...(log !== undefined ? { log } : {}),
    };
  });
}
