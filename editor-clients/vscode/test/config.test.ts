import { describe, expect, it } from 'vitest';
import {
  type Environment,
  initializationOptions,
  mcpLogPath,
  mcpServersOption,
  resolveServerCommand,
  serverDataDir,
  ServerNotFoundError,
  secretKey,
  restartEndsRun,
  serverArguments,
  serverEnvironment,
  sessionDefaults,
  type Settings,
  settingsEffect,
  settingsProblems,
} from '../src/config';

const settings = (over: Partial<Settings> = {}): Settings => ({
  serverCommand: '',
  serverArgs: ['serve'],
  model: '',
  fauxScript: '',
  demo: false,
  dataDir: '',
  initializationOptions: {},
  serverEnv: {},
  thinkingLevel: '',
  permissions: {},
  mcpServers: {},
  ...over,
});

const env = (executables: string[], over: Partial<Environment> = {}): Environment => ({
  folders: ['/work/proj/sub'],
  pathVariable: '/usr/local/bin:/usr/bin',
  platform: 'linux',
  isExecutable: (file) => executables.includes(file),
  ...over,
});

describe('the per-user server', () => {
  it('agentls.server.perUser starts the bridge: serve --attach', () => {
    expect(serverArguments(settings())).toEqual(['serve']);
    expect(serverArguments(settings({ perUser: true }))).toEqual(['serve', '--attach']);
    expect(resolveServerCommand(settings({ perUser: true }), env(['/usr/bin/agentls']))).toEqual({
      command: '/usr/bin/agentls',
      args: ['serve', '--attach'],
      source: 'path',
    });
  });

  it('agentls.server.socket is passed as --listen unix:PATH', () => {
    expect(serverArguments(settings({ perUser: true, socket: ' /run/me/a.sock ' }))).toEqual([
      'serve',
      '--attach',
      '--listen',
      'unix:/run/me/a.sock',
    ]);
    // without the per-user server the socket does nothing
    expect(serverArguments(settings({ socket: '/run/me/a.sock' }))).toEqual(['serve']);
  });

  it('leaves arguments that already ask for it as they are', () => {
    const args = ['serve', '--attach', '--listen', 'unix:/x.sock'];
    expect(serverArguments(settings({ perUser: true, socket: '/y.sock', serverArgs: args }))).toEqual(args);
    expect(serverArguments(settings({ perUser: true, serverArgs: ['serve', '--log-level', 'debug'] }))).toEqual([
      'serve',
      '--log-level',
      'debug',
      '--attach',
    ]);
  });

  it('a restart ends the run, unless a new bridge reaches the same per-user server', () => {
    const bridge = ['serve', '--attach', '--listen', 'unix:/a.sock'];
    expect(restartEndsRun(['serve'], ['serve'])).toBe(true);
    expect(restartEndsRun(undefined, bridge)).toBe(true);
    expect(restartEndsRun(['serve'], bridge)).toBe(true);
    expect(restartEndsRun(bridge, ['serve'])).toBe(true);
    expect(restartEndsRun(bridge, ['serve', '--attach', '--listen', 'unix:/b.sock'])).toBe(true);
    expect(restartEndsRun(bridge, [...bridge])).toBe(false);
  });

  it('a change of either restarts the server', () => {
    expect(settingsEffect((section) => section === 'agentls.server.perUser')).toEqual({ restart: true, session: [] });
    expect(settingsEffect((section) => section === 'agentls.server.socket')).toEqual({ restart: true, session: [] });
  });
});

describe('finding the server', () => {
  it('uses the setting first', () => {
    expect(resolveServerCommand(settings({ serverCommand: 'agentls-dev' }), env([]))).toEqual({
      command: 'agentls-dev',
      args: ['serve'],
      source: 'setting',
    });
  });

  it('names the setting when the configured path is not executable', () => {
    expect(() => resolveServerCommand(settings({ serverCommand: '/nope/agentls' }), env([]))).toThrow(
      /agentls\.serverCommand/,
    );
  });

  it('finds .venv/bin/agentls in a workspace folder or its parents', () => {
    const found = resolveServerCommand(settings(), env(['/work/proj/.venv/bin/agentls', '/usr/bin/agentls']));
    expect(found).toEqual({ command: '/work/proj/.venv/bin/agentls', args: ['serve'], source: 'venv' });
  });

  it('falls back to agentls on PATH', () => {
    expect(resolveServerCommand(settings({ serverArgs: [] }), env(['/usr/bin/agentls']))).toEqual({
      command: '/usr/bin/agentls',
      args: ['serve'],
      source: 'path',
    });
  });

  it('says what to do when there is none', () => {
    const find = () => resolveServerCommand(settings(), env([]));
    expect(find).toThrow(ServerNotFoundError);
    expect(find).toThrow(/set "agentls\.serverCommand"/);
  });
});

describe('initialization options', () => {
  it('puts the specific settings over the free-form ones', () => {
    const options = initializationOptions(
      settings({
        fauxScript: ' /tmp/s.json ',
        dataDir: '/tmp/data',
        model: 'faux/faux-1',
        initializationOptions: { fauxScript: 'old.json', thinkingLevel: 'low' },
      }),
    );
    expect(options).toEqual({
      fauxScript: '/tmp/s.json',
      dataDir: '/tmp/data',
      model: { provider: 'faux', id: 'faux-1' },
      thinkingLevel: 'low',
    });
  });

  it('agentls.demo asks for the bundled demo, and its sessions get no model of the settings', () => {
    const demo = settings({ demo: true, model: 'anthropic/claude-sonnet-4-5' });
    expect(initializationOptions(demo)).toEqual({ demo: true });
    expect(sessionDefaults(demo)).toEqual({});
    expect(settingsEffect((section) => section === 'agentls.demo')).toEqual({ restart: true, session: [] });
  });

  it('leaves empty settings out', () => {
    expect(initializationOptions(settings())).toEqual({});
  });
});

describe('server environment', () => {
  it('puts agentls.serverEnv over the inherited variables and drops what is not a string', () => {
    const env = serverEnvironment(
      settings({ serverEnv: { ANTHROPIC_API_KEY: 'sk-test', PATH: '/opt/bin', BAD: 3 } }),
      { PATH: '/usr/bin', HOME: '/home/me', UNSET: undefined },
    );
    expect(env).toEqual({ PATH: '/opt/bin', HOME: '/home/me', ANTHROPIC_API_KEY: 'sk-test' });
  });
});

describe('typed settings and their changes', () => {
  it('passes the model, thinking level and permissions to new sessions and as initialization options', () => {
    const typed = settings({
      model: 'anthropic/claude-x',
      thinkingLevel: 'low',
      permissions: { bash: 'allow', edit: 'review', read: 'sometimes', write: 3 },
      initializationOptions: { permissions: { grep: 'deny' }, thinkingLevel: 'high' },
    });
    expect(sessionDefaults(typed)).toEqual({
      model: { provider: 'anthropic', id: 'claude-x' },
      thinkingLevel: 'low',
      permissions: { bash: 'allow', edit: 'review' }, // unknown modes are left out
    });
    expect(initializationOptions(typed)).toEqual({
      model: { provider: 'anthropic', id: 'claude-x' },
      thinkingLevel: 'low', // the typed setting wins over the free-form one
      permissions: { grep: 'deny', bash: 'allow', edit: 'review' },
    });
    expect(sessionDefaults(settings({ thinkingLevel: 'bogus' }))).toEqual({});
  });

  it('restarts the server only for the settings it reads at start', () => {
    const effect = (...changed: string[]) => settingsEffect((section) => changed.includes(section));
    expect(effect('agentls.serverEnv')).toEqual({ restart: true, session: [] });
    expect(effect('agentls.model', 'agentls.thinkingLevel')).toEqual({ restart: false, session: ['model', 'thinkingLevel'] });
    expect(effect('agentls.permissionPrompt')).toEqual({ restart: false, session: [] });
  });

  it('puts the API keys of SecretStorage into the server environment, over the settings', () => {
    const env = serverEnvironment(
      settings({ serverEnv: { OPENAI_API_KEY: 'from-settings', OTHER: 'x' } }),
      { PATH: '/bin' },
      { OPENAI_API_KEY: 'from-secrets', ANTHROPIC_API_KEY: undefined, EMPTY: '' },
    );
    expect(env).toEqual({ PATH: '/bin', OPENAI_API_KEY: 'from-secrets', OTHER: 'x' });
    expect(secretKey('OPENAI_API_KEY')).toBe('agentls.env.OPENAI_API_KEY');
  });
});

describe('MCP servers and their logs', () => {
  const quirky = { command: '/venv/bin/python', args: ['quirky.py'], env: { A: '1' } };
  const remote = { type: 'http', url: 'https://mcp.example/x', headers: { Authorization: 'Bearer ${TOKEN}' } };

  it('passes agentls.mcpServers as the mcpServers option', () => {
    expect(initializationOptions(settings({ mcpServers: { quirky, remote } })).mcpServers).toEqual({ quirky, remote });
  });

  it('leaves the option out when the setting names no server', () => {
    expect(initializationOptions(settings())).not.toHaveProperty('mcpServers');
  });

  it('puts the setting\'s servers over those of agentls.initializationOptions', () => {
    const given = { mcpServers: { quirky: { command: 'old' }, other: { command: 'other' } } };
    expect(initializationOptions(settings({ initializationOptions: given, mcpServers: { quirky } })).mcpServers).toEqual({
      quirky,
      other: { command: 'other' },
    });
  });

  it('keeps ACP\'s list form of agentls.initializationOptions when the setting is empty, replaces it otherwise', () => {
    const list = [{ name: 'a', command: 'a', args: [], env: [] }];
    expect(mcpServersOption({}, list)).toBe(list);
    expect(mcpServersOption({ quirky }, list)).toEqual({ quirky });
    expect(mcpServersOption(['not', 'an', 'object'], undefined)).toBeUndefined();
  });

  it('restarts the server when agentls.mcpServers changes', () => {
    expect(settingsEffect((s) => s === 'agentls.mcpServers').restart).toBe(true);
  });

  it('finds the data folder as the server does', () => {
    const home = '/home/u';
    expect(serverDataDir(settings({ dataDir: '/data' }), { AGENTLS_DATA_DIR: '/env' }, 'linux', home)).toBe('/data');
    expect(serverDataDir(settings({ initializationOptions: { dataDir: '~/d' } }), {}, 'linux', home)).toBe('/home/u/d');
    expect(serverDataDir(settings(), { AGENTLS_DATA_DIR: '/env' }, 'linux', home)).toBe('/env');
    expect(serverDataDir(settings(), {}, 'linux', home)).toBe('/home/u/.local/share/agentls');
    expect(serverDataDir(settings(), { XDG_DATA_HOME: '/xdg' }, 'linux', home)).toBe('/xdg/agentls');
    expect(serverDataDir(settings(), {}, 'darwin', home)).toBe('/home/u/Library/Application Support/agentls');
    expect(serverDataDir(settings(), {}, 'linux', '')).toBeUndefined();
    expect(mcpLogPath('/data', 'quirky')).toBe('/data/mcp-logs/quirky.log');
  });
});

describe('the sandbox and budget settings', () => {
  it('become the sandbox and budget initialization options, over those of agentls.initializationOptions', () => {
    const options = initializationOptions(
      settings({
        initializationOptions: { sandbox: { mode: 'read-only', fallback: 'unconfined' }, budget: { session: { maxCostUsd: 5 } } },
        sandbox: { mode: 'workspace-write', network: true, writableRoots: ['build'] },
        budget: { maxCostUsd: 1.5, maxTurns: 20, maxTokens: 0 },
      }),
    );
    expect(options.sandbox).toEqual({ mode: 'workspace-write', network: true, writableRoots: ['build'], fallback: 'unconfined' });
    expect(options.budget).toEqual({ maxCostUsd: 1.5, maxTurns: 20, session: { maxCostUsd: 5 } });
  });

  it('the defaults (off, no limits) leave the options as they are', () => {
    // what VS Code reads when nothing is set: the defaults of package.json
    const defaults = { sandbox: { mode: 'off', network: false, writableRoots: [], fallback: 'refuse' }, budget: { maxCostUsd: 0, maxTurns: 0, maxTokens: 0 } };
    const options = initializationOptions(settings(defaults));
    expect(options).not.toHaveProperty('sandbox');
    expect(options).not.toHaveProperty('budget');
    expect(initializationOptions(settings())).not.toHaveProperty('sandbox');
    const given = { sandbox: { mode: 'workspace-write' }, budget: { maxTurns: 9 } };
    expect(initializationOptions(settings({ ...defaults, initializationOptions: given }))).toMatchObject(given);
  });

  it('values that are not valid are left out and named, so the server still starts', () => {
    const given = settings({ sandbox: { mode: 'jail' }, budget: { maxTurns: -2, maxCostUsd: 0.5 } });
    expect(initializationOptions(given)).toMatchObject({ budget: { maxCostUsd: 0.5 } });
    expect(initializationOptions(given)).not.toHaveProperty('sandbox');
    expect(initializationOptions(given).budget).not.toHaveProperty('maxTurns');
    expect(settingsProblems(given)).toEqual([
      'agentls.sandbox.mode: "jail" is not "off", "workspace-write" or "read-only"; the sandbox is left to the server.',
      'agentls.budget.maxTurns: must be more than 0; left out (no limit).',
    ]);
    expect(settingsProblems(settings())).toEqual([]);
  });

  it('a change restarts the server (the server reads them at start)', () => {
    expect(settingsEffect((section) => section === 'agentls.sandbox')).toEqual({ restart: true, session: [] });
    expect(settingsEffect((section) => section === 'agentls.budget')).toEqual({ restart: true, session: [] });
  });
});
