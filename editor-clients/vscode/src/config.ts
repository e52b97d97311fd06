/**
 * The extension's settings and how they turn into the server command and its
 * initialization options (pure: the file system and environment are passed in).
 */

import * as path from 'node:path';
import { parseModelKey } from './format';
import { budgetOption, type BudgetSettingValues, sandboxOption, type SandboxSettingValues } from './safety';

export interface Settings {
  serverCommand: string;
  serverArgs: string[];
  model: string;
  fauxScript: string;
  /** The bundled demo (`demo` initialization option): the offline faux model without a script of one's own. */
  demo: boolean;
  dataDir: string;
  initializationOptions: Record<string, unknown>;
  /** Extra environment variables of the server process (API keys, provider URLs). */
  serverEnv: Record<string, unknown>;
  /** Default thinking level of new sessions (`''`: the server's). */
  thinkingLevel: string;
  /** Permission modes by tool name over the server's defaults (`allow`, `ask`, `deny`, `review`). */
  permissions: Record<string, unknown>;
  /** MCP servers of every session: `{NAME: {command, args?, env?, cwd?} | {type, url, headers?}}` (the `mcpServers` option). */
  mcpServers: Record<string, unknown>;
  /**
   * `agentls.server.perUser`: start the stdio bridge to the per-user server (`serve --attach`)
   * instead of a server of this window, so runs outlive the window and a reload reattaches.
   */
  perUser?: boolean;
  /** `agentls.server.socket`: the per-user server's socket (`--listen unix:PATH`); empty: the server's default. */
  socket?: string;
  /** `agentls.sandbox.*`: the sandbox of the agent's bash (`mode`, `network`, `writableRoots`, `fallback`). */
  sandbox?: SandboxSettingValues;
  /** `agentls.budget.*`: each run's limits (`maxCostUsd`, `maxTurns`, `maxTokens`). */
  budget?: BudgetSettingValues;
}

/** The settings that take effect only when the server starts again. */
export const RESTART_SETTINGS = [
  'serverCommand',
  'serverArgs',
  'serverEnv',
  'dataDir',
  'fauxScript',
  'demo',
  'initializationOptions',
  'mcpServers',
  'server.perUser',
  'server.socket',
  'sandbox',
  'budget',
];
/** The settings of new sessions (passed to `agent/newSession`), `model` and `thinkingLevel` also applied to the current one. */
export const SESSION_SETTINGS = ['model', 'thinkingLevel', 'permissions'];

/**
 * What a settings change needs (`affects`: `ConfigurationChangeEvent.affectsConfiguration`):
 * a server restart, and which session settings to apply now. Others (`permissionPrompt`)
 * are read when used.
 */
export function settingsEffect(affects: (section: string) => boolean): { restart: boolean; session: string[] } {
  return {
    restart: RESTART_SETTINGS.some((name) => affects(`agentls.${name}`)),
    session: SESSION_SETTINGS.filter((name) => affects(`agentls.${name}`)),
  };
}

const THINKING = new Set(['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const MODES = new Set(['allow', 'ask', 'deny', 'review']);

/**
 * The `agent/newSession` params the settings give: `model`, `thinkingLevel`, `permissions` when
 * set; no `model` with `agentls.demo` (its sessions run the faux model of the demo).
 */
export function sessionDefaults(settings: Settings): {
  model?: { provider: string; id: string };
  thinkingLevel?: string;
  permissions?: Record<string, string>;
} {
  const model = settings.model.trim() && !settings.demo ? parseModelKey(settings.model.trim()) : undefined;
  const permissions = typedPermissions(settings.permissions);
  return {
    ...(model ? { model } : {}),
    ...(THINKING.has(settings.thinkingLevel) ? { thinkingLevel: settings.thinkingLevel } : {}),
    ...(Object.keys(permissions).length > 0 ? { permissions } : {}),
  };
}

function typedPermissions(value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [tool, mode] of Object.entries(value ?? {})) if (typeof mode === 'string' && MODES.has(mode)) out[tool] = mode;
  return out;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** How it was found, for the log. */
  source: 'setting' | 'venv' | 'path';
}

export interface Environment {
  /** The workspace folders' paths. */
  folders: readonly string[];
  /** `PATH`. */
  pathVariable: string;
  platform: NodeJS.Platform;
  isExecutable(file: string): boolean;
}

export class ServerNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerNotFoundError';
  }
}

function venvExecutables(dir: string, platform: NodeJS.Platform): string[] {
  return platform === 'win32'
    ? [path.join(dir, '.venv', 'Scripts', 'agentls.exe')]
    : [path.join(dir, '.venv', 'bin', 'agentls')];
}

/** Each folder and its parents, nearest first (a folder opened inside the project finds its `.venv`). */
function folderAndParents(folder: string): string[] {
  const found: string[] = [];
  let dir = path.resolve(folder);
  for (;;) {
    found.push(dir);
    const parent = path.dirname(dir);
    if (parent === dir) return found;
    dir = parent;
  }
}

/**
 * The server's arguments: `agentls.serverArgs` (default `serve`); with `agentls.server.perUser`,
 * `--attach` after them (the stdio bridge to the per-user server, started by it when none
 * answers) and, with `agentls.server.socket`, `--listen unix:PATH`. Arguments that already
 * ask for it (`--attach`, `--listen`) are left as they are.
 */
export function serverArguments(settings: Settings): string[] {
  const args = settings.serverArgs.length > 0 ? [...settings.serverArgs] : ['serve'];
  if (settings.perUser !== true) return args;
  if (!args.includes('--attach')) args.push('--attach');
  const socket = settings.socket?.trim() ?? '';
  const listens = args.some((arg) => arg === '--listen' || arg.startsWith('--listen='));
  if (socket !== '' && !listens) args.push('--listen', `unix:${socket}`);
  return args;
}

/**
 * Whether restarting the server for a settings change ends a run: not when the server is the
 * per-user one before and after (the same bridge arguments, `--attach`), since a restart then
 * only starts a new bridge and the panel reattaches to the run; always for `agentls serve`.
 */
export function restartEndsRun(before: readonly string[] | undefined, after: readonly string[]): boolean {
  const bridge = (args: readonly string[] | undefined): boolean => args?.includes('--attach') === true;
  return !(bridge(before) && bridge(after) && JSON.stringify(before) === JSON.stringify(after));
}

/**
 * The server to start: `agentls.serverCommand` if set; else `.venv/bin/agentls` in a
 * workspace folder or one of its parents; else `agentls` on `PATH`.
 */
export function resolveServerCommand(settings: Settings, env: Environment): ServerCommand {
  const args = serverArguments(settings);
  const configured = settings.serverCommand.trim();
  if (configured !== '') {
    const isPath = configured.includes('/') || configured.includes('\\');
    if (isPath && !env.isExecutable(configured)) {
      throw new ServerNotFoundError(
        `The agentls server command "${configured}" is not an executable file. ` +
          'Change the setting "agentls.serverCommand" to the path of agentls (or clear it to find one automatically).',
      );
    }
    return { command: configured, args, source: 'setting' };
  }
  for (const folder of env.folders) {
    for (const dir of folderAndParents(folder)) {
      for (const candidate of venvExecutables(dir, env.platform)) {
        if (env.isExecutable(candidate)) return { command: candidate, args, source: 'venv' };
      }
    }
  }
  const name = env.platform === 'win32' ? 'agentls.exe' : 'agentls';
  const separator = env.platform === 'win32' ? ';' : ':';
  for (const dir of env.pathVariable.split(separator)) {
    if (dir !== '' && env.isExecutable(path.join(dir, name))) {
      return { command: path.join(dir, name), args, source: 'path' };
    }
  }
  throw new ServerNotFoundError(
    'The agentls server was not found: no .venv/bin/agentls in the workspace folders or their parents, ' +
      'and no agentls on PATH. Install it (pip install -e . in the agentls repository) or set ' +
      '"agentls.serverCommand" to its path.',
  );
}

/**
 * `initializationOptions` for the server: the free-form setting, then the specific ones over it.
 * `agentls.demo`: `demo: true` (the server's bundled demo script, unless a faux script is given).
 */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = { ...settings.initializationOptions };
  if (settings.fauxScript.trim() !== '') options.fauxScript = settings.fauxScript.trim();
  if (settings.demo) options.demo = true;
  if (settings.dataDir.trim() !== '') options.dataDir = settings.dataDir.trim();
  const defaults = sessionDefaults(settings);
  if (defaults.model) options.model = defaults.model;
  if (defaults.thinkingLevel) options.thinkingLevel = defaults.thinkingLevel;
  if (defaults.permissions) {
    const given = options.permissions;
    options.permissions = { ...(given && typeof given === 'object' ? given : {}), ...defaults.permissions };
  }
  const servers = mcpServersOption(settings.mcpServers, options.mcpServers);
  if (servers !== undefined) options.mcpServers = servers;
  const { sandbox } = sandboxOption(settings.sandbox ?? {});
  if (sandbox) options.sandbox = { ...(isObject(options.sandbox) ? options.sandbox : {}), ...sandbox };
  const { budget } = budgetOption(settings.budget ?? {});
  if (budget) options.budget = { ...(isObject(options.budget) ? options.budget : {}), ...budget };
  return options;
}

/**
 * What is wrong in the settings `initializationOptions` reads (`agentls.sandbox.*`,
 * `agentls.budget.*`), one line each: the values are left out (the server's default applies).
 */
export function settingsProblems(settings: Settings): string[] {
  return [...sandboxOption(settings.sandbox ?? {}).problems, ...budgetOption(settings.budget ?? {}).problems];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The `mcpServers` initialization option: the servers of `agentls.mcpServers` over those of
 * `agentls.initializationOptions.mcpServers` (of the same name: the setting's). A list there
 * (ACP's form) is kept when the setting names none; else the setting's servers replace it.
 * The server checks each server's fields (and reports a mistake in its status).
 */
export function mcpServersOption(setting: unknown, given: unknown): unknown {
  const servers = isObject(setting) ? setting : {};
  if (Object.keys(servers).length === 0) return given;
  return { ...(isObject(given) ? given : {}), ...servers };
}

/**
 * The server process's environment: VS Code's, with `agentls.serverEnv` over it (so a
 * key such as `ANTHROPIC_API_KEY` reaches the server when VS Code was not started from a
 * shell that has it), and the API keys of SecretStorage (**Agent: Set API Key**) over
 * both. Values that are not strings, and empty secrets, are left out.
 */
export function serverEnvironment(
  settings: Settings,
  base: Record<string, string | undefined>,
  secrets: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined) env[name] = value;
  for (const [name, value] of Object.entries(settings.serverEnv)) if (typeof value === 'string') env[name] = value;
  for (const [name, value] of Object.entries(secrets)) if (value) env[name] = value;
  return env;
}

/** The API keys **Agent: Set API Key** keeps in VS Code's SecretStorage (key `agentls.env.<NAME>`). */
export const API_KEYS = [
  { name: 'ANTHROPIC_API_KEY', provider: 'Anthropic' },
  { name: 'OPENAI_API_KEY', provider: 'OpenAI' },
] as const;

export function secretKey(name: string): string {
  return `agentls.env.${name}`;
}

/** Keep a provider's API key under `secretKey(name)`; an empty (or blank) value clears it. */
export async function storeApiKey(
  secrets: { store(key: string, value: string): PromiseLike<void>; delete(key: string): PromiseLike<void> },
  name: string,
  value: string,
): Promise<void> {
  if (value.trim()) await secrets.store(secretKey(name), value.trim());
  else await secrets.delete(secretKey(name));
}

/**
 * The server's data folder as far as the extension can tell: `agentls.dataDir`, else
 * `dataDir` of `agentls.initializationOptions`, else `$AGENTLS_DATA_DIR` of the server's
 * environment (`env`: `serverEnvironment`), else the platform's user data folder (as the
 * server's `platformdirs` finds it). `undefined` when it cannot be told.
 */
export function serverDataDir(
  settings: Settings,
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform,
  home: string,
): string | undefined {
  const expand = (p: string): string => (p === '~' || p.startsWith('~/') ? path.join(home, p.slice(1)) : p);
  const option = settings.initializationOptions?.dataDir;
  const given = [settings.dataDir, option, env.AGENTLS_DATA_DIR].find(
    (value): value is string => typeof value === 'string' && value.trim() !== '',
  );
  if (given !== undefined) return expand(given.trim());
  if (!home) return undefined;
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'agentls');
  if (platform === 'win32') return env.LOCALAPPDATA ? path.join(env.LOCALAPPDATA, 'agentls') : undefined;
  const xdg = env.XDG_DATA_HOME?.trim();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.local', 'share'), 'agentls');
}

/** An MCP server's log file (its stderr): `<dataDir>/mcp-logs/NAME.log`. */
export function mcpLogPath(dataDir: string, name: string): string {
  return path.join(dataDir, 'mcp-logs', `${name}.log`);
}
