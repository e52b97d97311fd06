/**
 * The MCP servers of the session in VS Code's UI: **Agent: MCP Servers** (a quick pick that
 * follows `agent/mcpStatus` while it is open, with Restart and Open Log on each server), and
 * the actions the panel's MCP menu shares with it.
 */

import * as vscode from 'vscode';
import { MCP_STATUS_ICON, mcpSourceLabel, mcpStatusLine, restartTitle, shortToolNames } from './mcp';
import type { McpServerInfo } from './protocol';
import type { SessionController } from './session';

/** `agent/restartMcpServer` of the session's server `name` (one not trusted asks for trust again). */
export async function restartMcpServer(c: SessionController, name: string): Promise<McpServerInfo> {
  const before = c.mcpServers.find((server) => server.name === name);
  vscode.window.setStatusBarMessage(
    before?.status === 'needsTrust' ? `agentls: asking again whether to trust ${name}` : `agentls: restarting ${name}`,
    3000,
  );
  return c.restartMcpServer(name);
}

/** Open the log file (stderr) of the server `name`, at its end. */
export async function openMcpLog(c: SessionController, name: string): Promise<void> {
  const file = c.mcpLogFile(name);
  if (file === undefined) {
    void vscode.window.showInformationMessage(`agentls: no log of the MCP server ${name} was found (it is in the server's data folder, mcp-logs/${name}.log).`);
    return;
  }
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const editor = await vscode.window.showTextDocument(document, { preview: true });
  const end = document.lineAt(Math.max(0, document.lineCount - 1)).range.end;
  editor.selection = new vscode.Selection(end, end);
  editor.revealRange(new vscode.Range(end, end));
}

const RESTART_BUTTON = (server: McpServerInfo): vscode.QuickInputButton => ({
  iconPath: new vscode.ThemeIcon(server.status === 'needsTrust' ? 'shield' : 'debug-restart'),
  tooltip: server.status === 'needsTrust' ? `Trust… (${restartTitle(server)})` : `Restart (${restartTitle(server)})`,
});
const LOG_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('output'), tooltip: 'Open Log' };

interface ServerItem extends vscode.QuickPickItem {
  server: McpServerInfo;
}

/** A server's row: its status icon and name; status, tools and source; the error when it failed. */
export function serverItem(server: McpServerInfo, hasLog: boolean): ServerItem {
  const tools = shortToolNames(server);
  const about = server.error
    ? server.error.replace(/\s+/g, ' ').trim()
    : tools.length > 0
      ? `Tools: ${tools.join(', ')}`
      : server.status === 'needsTrust'
        ? 'Its commands start once you trust them: Trust… asks again.'
        : '';
  return {
    label: `$(${MCP_STATUS_ICON[server.status]}) ${server.name}`,
    description: `${mcpStatusLine(server)} · ${server.transport} · ${mcpSourceLabel(server)}`,
    detail: about.length > 300 ? `${about.slice(0, 299)}…` : about,
    buttons: hasLog ? [RESTART_BUTTON(server), LOG_BUTTON] : [RESTART_BUTTON(server)],
    server,
  };
}

/** What the quick pick offers about one server once picked. */
async function serverActions(c: SessionController, server: McpServerInfo): Promise<void> {
  const log = c.mcpLogFile(server.name);
  const restart = server.status === 'needsTrust' ? '$(shield) Trust…' : '$(debug-restart) Restart';
  type ActionItem = vscode.QuickPickItem & { action?: 'restart' | 'log' | 'error' };
  const items: ActionItem[] = [{ label: restart, detail: restartTitle(server), action: 'restart' }];
  if (log) items.push({ label: '$(output) Open Log', detail: log, action: 'log' });
  if (server.error) items.push({ label: '$(copy) Copy the Error', detail: server.error.split('\n')[0] ?? '', action: 'error' });
  if (server.tools.length > 0) {
    items.push({ label: 'Tools', kind: vscode.QuickPickItemKind.Separator });
    shortToolNames(server).forEach((tool, index) => items.push({ label: `$(tools) ${tool}`, description: server.tools[index] ?? '' }));
  }
  const pick = await vscode.window.showQuickPick(items, { title: `MCP server ${server.name}: ${mcpStatusLine(server)}` });
  if (pick?.action === 'restart') await restartMcpServer(c, server.name);
  else if (pick?.action === 'log') await openMcpLog(c, server.name);
  else if (pick?.action === 'error' && server.error) await vscode.env.clipboard.writeText(server.error);
}

/**
 * **Agent: MCP Servers**: the session's servers with their status, kept current while open;
 * each row's buttons restart it (Trust… for one not trusted) and open its log; picking a
 * row offers the same and lists its tools.
 */
export async function showMcpServers(c: SessionController): Promise<void> {
  await c.ensureSession();
  const servers = await c.refreshMcpServers();
  for (const problem of c.mcpProblems) void vscode.window.showWarningMessage(`agentls: MCP configuration: ${problem}`);
  if (servers.length === 0) {
    const message = c.mcpError
      ? `agentls: the server lists no MCP servers (${c.mcpError}).`
      : 'agentls: no MCP servers in this session. Add them to .mcp.json in the workspace folder, or to the agentls.mcpServers setting.';
    const choice = await vscode.window.showInformationMessage(message, 'Open Settings');
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentls.mcpServers');
    return;
  }
  const pick = vscode.window.createQuickPick<ServerItem>();
  pick.title = 'Agent: MCP Servers';
  pick.placeholder = 'The MCP servers of this session: pick one for its actions and tools';
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  let key = '';
  const update = (): void => {
    const next = JSON.stringify(c.mcpServers);
    if (next === key) return;
    key = next;
    const active = pick.activeItems[0]?.server.name;
    pick.items = c.mcpServers.map((server) => serverItem(server, c.mcpLogFile(server.name) !== undefined));
    const again = pick.items.find((item) => item.server.name === active);
    if (again) pick.activeItems = [again];
  };
  update();
  const chosen = await new Promise<McpServerInfo | undefined>((resolve) => {
    const subscriptions = [
      c.onChange(update),
      pick.onDidTriggerItemButton((event) => {
        const name = event.item.server.name;
        if (event.button === LOG_BUTTON) {
          void openMcpLog(c, name).catch((error: unknown) => void vscode.window.showErrorMessage(`agentls: ${String(error)}`));
          pick.hide();
        } else {
          void restartMcpServer(c, name).catch(
            (error: unknown) => void vscode.window.showErrorMessage(`agentls: ${error instanceof Error ? error.message : String(error)}`),
          );
        }
      }),
      pick.onDidAccept(() => {
        const server = pick.selectedItems[0]?.server;
        resolve(server);
        pick.hide();
      }),
      pick.onDidHide(() => {
        for (const subscription of subscriptions) subscription.dispose();
        pick.dispose();
        resolve(undefined);
      }),
    ];
    pick.show();
  });
  if (chosen) await serverActions(c, c.mcpServers.find((server) => server.name === chosen.name) ?? chosen);
}
