import { describe, expect, it } from 'vitest';
import { MCP_TRUST_DETAIL, permissionDetail } from '../src/format';
import { applyMcpStatus, mcpSourceLabel, mcpSummary, mcpViews, sameFolder, shortToolNames, splitMcpTool, toolLabel } from '../src/mcp';
import type { McpServerInfo } from '../src/protocol';

const quirky: McpServerInfo = {
  name: 'quirky',
  source: '/w/.mcp.json',
  transport: 'stdio',
  status: 'ready',
  tools: ['mcp__quirky__echo', 'mcp__quirky__add'],
  cwd: '/w',
};
const remote: McpServerInfo = {
  name: 'remote',
  source: 'initializationOptions',
  transport: 'http',
  status: 'starting',
  tools: [],
  cwd: '/w',
};

describe('MCP tool names', () => {
  it('splits mcp__SERVER__TOOL into the server and the tool', () => {
    expect(splitMcpTool('mcp__quirky__echo')).toEqual({ server: 'quirky', tool: 'echo' });
    expect(splitMcpTool('mcp__git__git_status')).toEqual({ server: 'git', tool: 'git_status' });
    expect(splitMcpTool('mcp__my-server__read__file')).toEqual({ server: 'my-server', tool: 'read__file' });
  });

  it('prefers a known server name that itself has __', () => {
    expect(splitMcpTool('mcp__a__b__tool', ['a__b'])).toEqual({ server: 'a__b', tool: 'tool' });
    expect(splitMcpTool('mcp__a__b__tool', ['other'])).toEqual({ server: 'a', tool: 'b__tool' });
  });

  it('leaves the other tools alone', () => {
    for (const name of ['bash', 'mcp', 'mcp__', 'mcp__quirky', 'mcp__quirky__', 'mcp____echo', 'xmcp__a__b']) {
      expect(splitMcpTool(name)).toBeUndefined();
      expect(toolLabel(name)).toBe(name);
    }
  });

  it('labels an MCP tool "SERVER · TOOL"', () => {
    expect(toolLabel('mcp__quirky__echo')).toBe('quirky · echo');
    expect(shortToolNames(quirky)).toEqual(['echo', 'add']);
  });
});

describe('the permission questions of MCP', () => {
  it('says what trusting a .mcp.json does', () => {
    expect(permissionDetail('mcp', { servers: ['quirky'] })).toBe(MCP_TRUST_DETAIL);
    expect(MCP_TRUST_DETAIL).toMatch(/\.mcp\.json/);
    expect(MCP_TRUST_DETAIL).toMatch(/Trust/);
  });

  it('names an MCP tool by its server and tool, with its arguments', () => {
    expect(permissionDetail('mcp__quirky__echo', { text: 'hi' })).toBe(
      'quirky · echo (MCP server quirky)\n\n{\n  "text": "hi"\n}',
    );
    expect(permissionDetail('mcp__quirky__ping', {})).toBe('quirky · ping (MCP server quirky)');
    // a path argument of an MCP tool is not one of agentls's file tools
    expect(permissionDetail('mcp__fs__read', { path: 'a.txt' })).toContain('"path": "a.txt"');
  });
});

describe('the session\'s MCP servers', () => {
  it('updates a server in place from agent/mcpStatus', () => {
    const failed = { ...quirky, status: 'failed' as const, error: 'exited with 1', tools: [] };
    const result = applyMcpStatus([quirky, remote], failed, '/w');
    expect(result).toMatchObject({ changed: true, known: true });
    expect(result.servers).toEqual([failed, remote]);
    expect(applyMcpStatus(result.servers, failed, '/w').changed).toBe(false);
  });

  it('ignores the servers of other folders, and asks for the list for an unknown one of this folder', () => {
    expect(applyMcpStatus([quirky], { ...quirky, cwd: '/other' }, '/w')).toMatchObject({ changed: false, known: true });
    expect(applyMcpStatus([quirky], { ...quirky, name: 'new' }, '/w')).toMatchObject({ changed: false, known: false });
    expect(applyMcpStatus([quirky], { ...quirky, name: 'new', cwd: '/other' }, '/w')).toMatchObject({ known: true });
    expect(applyMcpStatus([], { ...quirky, cwd: '/w/' }, '/w')).toMatchObject({ known: false });
  });

  it('drops a stale error once the server is ready again', () => {
    const failed = { ...quirky, status: 'failed' as const, error: 'boom' };
    const { servers } = applyMcpStatus([failed], { ...quirky }, '/w');
    expect(servers[0]).not.toHaveProperty('error');
  });

  it('compares folders without a trailing separator', () => {
    expect(sameFolder('/w/', '/w')).toBe(true);
    expect(sameFolder('/w', '/wx')).toBe(false);
    expect(sameFolder('/', '/')).toBe(true);
    expect(sameFolder(undefined, '/w')).toBe(false);
  });

  it('sums them up for the header button, the one needing attention first', () => {
    expect(mcpSummary([])).toMatchObject({ text: 'MCP', status: 'none' });
    expect(mcpSummary([quirky])).toMatchObject({ text: 'MCP 1/1', status: 'ready' });
    expect(mcpSummary([quirky, remote])).toMatchObject({ text: 'MCP 1/2', status: 'starting' });
    expect(mcpSummary([quirky, { ...remote, status: 'needsTrust' }]).status).toBe('needsTrust');
    const summary = mcpSummary([{ ...quirky, status: 'failed', tools: [] }, { ...remote, status: 'needsTrust' }]);
    expect(summary.status).toBe('failed');
    expect(summary.title).toBe('MCP servers of this session\nquirky: failed\nremote: not trusted');
  });

  it('makes the menu entries: status, tools, source, restart, log', () => {
    const views = mcpViews(
      [quirky, { ...remote, status: 'needsTrust' }, { ...quirky, name: 'broken', status: 'failed', error: 'spawn ENOENT', tools: [], source: '/elsewhere/mcp.json' }],
      (name) => (name === 'quirky' ? '/data/mcp-logs/quirky.log' : undefined),
    );
    expect(views[0]).toEqual({
      name: 'quirky',
      status: 'ready',
      statusLine: 'ready · 2 tools',
      source: '.mcp.json',
      transport: 'stdio',
      tools: ['echo', 'add'],
      restartTitle: 'Stop quirky and start it again',
      log: '/data/mcp-logs/quirky.log',
    });
    expect(views[1]).toMatchObject({
      statusLine: 'not trusted',
      source: 'the agentls.mcpServers setting',
      restartTitle: 'Ask again whether to trust remote (the commands of the agentls.mcpServers setting)',
    });
    expect(views[1]).not.toHaveProperty('log');
    expect(views[2]).toMatchObject({ statusLine: 'failed', error: 'spawn ENOENT', source: '/elsewhere/mcp.json' });
    expect(mcpSourceLabel({ ...quirky, source: 'newSession' })).toBe('this session');
  });
});

describe('MCP tool rows', () => {
  it('sum up an MCP call by its arguments', async () => {
    const { summarizeArgs } = await import('../src/format');
    expect(summarizeArgs('mcp__quirky__echo', { text: 'hi', count: 2, opts: { a: 1 } })).toBe('text: hi, count: 2, opts: {"a":1}');
    expect(summarizeArgs('mcp__fs__read', { path: 'a.txt' })).toBe('a.txt');
    expect(summarizeArgs('other', { text: 'hi' })).toBe('{"text":"hi"}');
  });
});
