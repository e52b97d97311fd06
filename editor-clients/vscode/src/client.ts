/**
 * The connection to `agentls serve`: a vscode-languageclient `LanguageClient` that
 * advertises the agent client capabilities and answers the server's requests.
 *
 * vscode-languageclient handles text synchronisation of every file document (so the
 * agent's tools see unsaved buffers), `workspace/applyEdit` (versioned edits that land
 * in the open editors and undo with Ctrl+Z) and `$/progress` natively.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  CancellationToken,
  type ClientCapabilities,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  ResponseError,
  type ServerOptions,
  State,
  type StaticFeature,
} from 'vscode-languageclient/node';
import {
  type Environment,
  initializationOptions,
  resolveServerCommand,
  type ServerCommand,
  serverEnvironment,
  settingsProblems,
  type Settings,
} from './config';
import {
  AGENT_NOTIFICATIONS,
  type AgentNotification,
  type GetDiagnosticsParams,
  type GetDiagnosticsResult,
  type PermissionOutcome,
  type RequestPermissionParams,
  type ReviewEditParams,
  type ReviewEditResult,
  type SaveDocumentsParams,
} from './protocol';

/** What the client tells the server it can do (`capabilities.experimental.agent`). */
export const AGENT_CLIENT_CAPABILITIES = {
  requestPermission: true,
  saveDocuments: true,
  diagnostics: true,
  reviewEdit: true,
} as const;

/** Adds `capabilities.experimental.agent` to the `initialize` request. */
class AgentCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, agent: { ...AGENT_CLIENT_CAPABILITIES } };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

/** A failed `agent/*` request, with the server's `data.kind` (`busy`, `unknownSession`, ...) and its `data`. */
export class AgentError extends Error {
  constructor(
    message: string,
    readonly kind: string,
    /** The error's whole `data` (`fileConflict`: `{kind, files}`). */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

export interface ServerRequestHandlers {
  /** The token is cancelled when the server cancels the question (an abort). */
  requestPermission(params: RequestPermissionParams, token: CancellationToken): Promise<PermissionOutcome>;
  saveDocuments(params: SaveDocumentsParams): Promise<{ saved: string[] }>;
  getDiagnostics(params: GetDiagnosticsParams): GetDiagnosticsResult;
  /** `agent/reviewEdit`: no time limit; the token is cancelled when the server cancels the request (an abort). */
  reviewEdit(params: ReviewEditParams, token: CancellationToken): Promise<ReviewEditResult>;
}

export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration('agentls');
  return {
    serverCommand: config.get<string>('serverCommand', ''),
    serverArgs: config.get<string[]>('serverArgs', ['serve']),
    model: config.get<string>('model', ''),
    fauxScript: config.get<string>('fauxScript', ''),
    demo: config.get<boolean>('demo', false) === true,
    dataDir: config.get<string>('dataDir', ''),
    initializationOptions: config.get<Record<string, unknown>>('initializationOptions', {}),
    serverEnv: config.get<Record<string, unknown>>('serverEnv', {}),
    thinkingLevel: config.get<string>('thinkingLevel', ''),
    permissions: config.get<Record<string, unknown>>('permissions', {}),
    mcpServers: config.get<Record<string, unknown>>('mcpServers', {}),
    perUser: config.get<boolean>('server.perUser', false) === true,
    socket: config.get<string>('server.socket', ''),
    sandbox: {
      mode: config.get<unknown>('sandbox.mode'),
      network: config.get<unknown>('sandbox.network'),
      writableRoots: config.get<unknown>('sandbox.writableRoots'),
      fallback: config.get<unknown>('sandbox.fallback'),
    },
    budget: {
      maxCostUsd: config.get<unknown>('budget.maxCostUsd'),
      maxTurns: config.get<unknown>('budget.maxTurns'),
      maxTokens: config.get<unknown>('budget.maxTokens'),
    },
  };
}

function environment(): Environment {
  return {
    folders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
    pathVariable: process.env.PATH ?? '',
    platform: process.platform,
    isExecutable(file: string): boolean {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
}

export class AgentConnection implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly notificationEmitter = new vscode.EventEmitter<AgentNotification>();
  private readonly stateEmitter = new vscode.EventEmitter<boolean>();
  /** Every `agent/*` notification (`AGENT_NOTIFICATIONS`), in order. */
  readonly onNotification = this.notificationEmitter.event;
  /** Fires `true` when the server is (again) running, `false` when it stopped. */
  readonly onRunning = this.stateEmitter.event;
  command: ServerCommand | undefined;
  /** Why the last start failed, for the errors of later requests. */
  private startError: string | undefined;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly handlers: ServerRequestHandlers,
    /** The API keys of SecretStorage, for the server's environment. */
    private readonly secrets: () => Promise<Record<string, string | undefined>> = async () => ({}),
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Start the server; throws `ServerNotFoundError` (naming the setting to change) or the start failure. */
  async start(): Promise<void> {
    try {
      await this.startClient();
      this.startError = undefined;
    } catch (error) {
      this.startError = error instanceof Error ? error.message : String(error);
      throw error;
    }
  }

  private async startClient(): Promise<void> {
    const settings = readSettings();
    const command = resolveServerCommand(settings, environment());
    const secrets = await this.secrets();
    this.command = command;
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    this.log.info(`Starting ${command.command} ${command.args.join(' ')} (found by ${command.source})`);
    const problems = settingsProblems(settings);
    for (const problem of problems) this.log.warn(`Setting ignored: ${problem}`);
    if (problems.length > 0) void vscode.window.showWarningMessage(`agentls: ${problems.join(' ')}`);
    // No `transport`: plain stdio (TransportKind.stdio would add a `--stdio` argument).
    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      options: { env: serverEnvironment(settings, process.env, secrets), ...(cwd ? { cwd } : {}) },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file document, so the tools read what the user sees, unsaved changes included.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      initializationOptions: initializationOptions(settings),
      middleware: {
        workspace: {
          handleApplyEdit: async (params, next) => {
            const result = await next(params, CancellationToken.None);
            if (!(result instanceof ResponseError) && !result.applied && result.failureReason === undefined) {
              return { ...result, failureReason: 'the document changed since the agent read it' };
            }
            return result;
          },
        },
      },
    };
    const client = new LanguageClient('agentls', 'agentls', serverOptions, clientOptions);
    client.registerFeature(new AgentCapabilitiesFeature());
    for (const method of AGENT_NOTIFICATIONS) {
      client.onNotification(method, (params: unknown) =>
        this.notificationEmitter.fire({ method, params } as AgentNotification),
      );
    }
    client.onRequest('agent/requestPermission', async (params: RequestPermissionParams, token: CancellationToken) => ({
      outcome: await this.handlers.requestPermission(params, token),
    }));
    client.onRequest('agent/saveDocuments', (params: SaveDocumentsParams) => this.handlers.saveDocuments(params));
    client.onRequest('agent/reviewEdit', (params: ReviewEditParams, token: CancellationToken) =>
      this.handlers.reviewEdit(params, token),
    );
    client.onRequest('agent/getDiagnostics', (params: GetDiagnosticsParams) => this.handlers.getDiagnostics(params));
    client.onDidChangeState((change) => {
      if (change.newState === State.Running) this.stateEmitter.fire(true);
      else if (change.oldState === State.Running) this.stateEmitter.fire(false);
    });
    this.client = client;
    await client.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client?.needsStop()) await client.stop(5000);
  }

  /** Send an `agent/*` request; failures become `AgentError` with the server's kind. */
  async request<R>(method: string, params: object): Promise<R> {
    const client = this.client;
    if (!client || client.state !== State.Running) {
      const message = this.startError
        ? `The agentls server is not running. ${this.startError} Then run "Agent: Restart Server".`
        : 'The agentls server is not running (see "Agent: Show Server Log"); "Agent: Restart Server" starts it again.';
      throw new AgentError(message, 'connection');
    }
    try {
      return await client.sendRequest<R>(method, params);
    } catch (error) {
      if (error instanceof ResponseError) {
        const data = error.data as { kind?: unknown } | undefined;
        throw new AgentError(error.message, typeof data?.kind === 'string' ? data.kind : 'error', error.data);
      }
      throw new AgentError(error instanceof Error ? error.message : String(error), 'connection');
    }
  }

  dispose(): void {
    void this.stop();
    this.notificationEmitter.dispose();
    this.stateEmitter.dispose();
  }
}
