/**
 * The live-session step of the end-to-end test (issue 27, "Live sessions that outlive their
 * window"): in a workspace of its own (e2e/run.mjs makes it, with `LIVE_MARKER` naming the
 * result file and the socket) whose settings turn on the per-user server
 * (`agentls.server.perUser`, `agentls.server.socket` of the test, its own data folder), a
 * run of e2e/fixture/faux-live.json (a first answer, a slow `sleep` command, a slow second
 * answer) is started; once its first answer has streamed in, the self-test asks the driver to
 * reload the window (`{"waiting": "reload"}`) and ends. The window reloads, the extension
 * host starts again, and this runs again: it finds the reload asked for in the result file
 * and checks the other half: the panel shows the same session again (kept in the workspace
 * state), busy while the run goes on, and once the run has settled the whole transcript:
 * the text from before the reload and after it, each piece once, as the server stored it.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentExtension } from '../../../src/api';
import type { AssistantMessage, MessagesResult, SessionInfo } from '../../../src/protocol';
import type { Row } from '../../../src/view';
import { Recorder, waitFor } from './selftest';

/** The file in the workspace's root that makes this the live-session step: `{results, socket}`. */
export const LIVE_MARKER = '.agentls-e2e-live.json';

/** What e2e/fixture/faux-live.json answers. */
const PROMPT = 'Tell me slowly, with a check in the middle.';
const PART_ONE = 'Part one, before the reload: a slow check first.';
const TOOL_CALL = 'call-live-sleep';
const TOOL_OUTPUT = 'agentls-live-check-done';
const PART_TWO_START = 'Part two, after the reload.';
const PART_TWO_END = 'The end of the slow answer.';
const MISSING = 'Some of the run may be missing here';

interface Marker {
  results: string;
  socket: string;
}

/** The live step's marker of the first workspace folder, if it has one. */
export function liveMarker(): Marker | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) return undefined;
  const file = path.join(folder.uri.fsPath, LIVE_MARKER);
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Marker;
}

function lines(file: string): Record<string, unknown>[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

export async function runLiveTest(api: AgentExtension, marker: Marker): Promise<void> {
  const before = lines(marker.results).find((line) => line.waiting === 'reload');
  const rec = new Recorder(marker.results);
  const started = Date.now();
  rec.write({ event: before ? 'activated after the reload' : 'activated', vscode: vscode.version });
  try {
    await api.started;
    if (before === undefined) {
      await beforeReload(api, rec, marker);
      return; // the driver reloads the window: this extension host ends
    }
    await afterReload(api, rec, before as { sessionId: string; runId: string });
  } catch (error) {
    rec.check('live', 'no exception', false, error instanceof Error ? error.stack : String(error));
  }
  rec.write({
    done: true,
    passed: rec.passed,
    failed: rec.failed,
    ms: Date.now() - started,
    transcript: api.controller.transcript.plainText(),
  });
}

function textRows(api: AgentExtension): Extract<Row, { kind: 'text' }>[] {
  return api.controller.transcript.rows.filter((row): row is Extract<Row, { kind: 'text' }> => row.kind === 'text');
}

function toolRow(api: AgentExtension, toolCallId: string): Extract<Row, { kind: 'tool' }> | undefined {
  return api.controller.transcript.rows.find(
    (row): row is Extract<Row, { kind: 'tool' }> => row.kind === 'tool' && row.toolCallId === toolCallId,
  );
}

async function beforeReload(api: AgentExtension, rec: Recorder, marker: Marker): Promise<void> {
  const step = 'live: before the reload';
  const c = api.controller;
  const args = api.connection.command?.args ?? [];
  const expected = ['serve', '--idle-exit', '30', '--attach', '--listen', `unix:${marker.socket}`];
  rec.check(step, 'agentls.server.perUser starts the bridge: serve --idle-exit 30 --attach --listen unix:SOCKET',
    JSON.stringify(args) === JSON.stringify(expected), args);
  rec.check(step, 'the per-user server listens on the test\'s socket', fs.existsSync(marker.socket), marker.socket);
  await api.panel.reveal(false);
  await waitFor(api, () => api.panel.visible, 20_000, 'the panel');
  const sessionId = await c.ensureSession();
  const { runId } = await c.prompt(PROMPT);
  rec.check(step, 'the slow run started', runId !== undefined, runId);
  // the first answer streamed in, and the slow command runs
  await waitFor(api, () => textRows(api).some((row) => row.text === PART_ONE), 20_000, 'the first answer');
  await waitFor(api, () => toolRow(api, TOOL_CALL)?.status === 'running', 20_000, 'the slow command');
  rec.check(step, 'the first answer is in the panel, the slow command running', true);
  rec.check(step, 'the session\'s notifications came in sequence (seq)', c.lastSeq !== undefined && c.lastSeq > 5, c.lastSeq);
  rec.write({ waiting: 'reload', sessionId, runId, seq: c.lastSeq, transcript: c.transcript.plainText() });
}

async function afterReload(api: AgentExtension, rec: Recorder, before: { sessionId: string; runId: string }): Promise<void> {
  const step = 'live: after the reload';
  const c = api.controller;
  // the reattach is done once its notice is in (the session is shown from its messages on)
  const reattached = (): boolean =>
    c.sessionId === before.sessionId &&
    c.transcript.rows.some((row) => row.kind === 'notice' && row.text.startsWith('Reattached to '));
  await waitFor(api, reattached, 30_000, 'the session of the window before the reload, reattached');
  rec.check(step, 'the panel shows the session of the window before the reload', true);
  const running = c.isRunning && c.runId === before.runId && c.status === 'running';
  const notice = c.transcript.rows.filter((row) => row.kind === 'notice').at(-1);
  rec.check(step, 'the run goes on: the panel shows it busy', running, { runId: c.runId, status: c.status });
  rec.check(step, 'the notice says the agent is still working',
    notice?.kind === 'notice' && /^Reattached to .*: the agent is still working\.$/.test(notice.text), notice);
  rec.check(step, 'the text from before the reload is there', textRows(api).some((row) => row.text === PART_ONE),
    c.transcript.plainText());
  const sessions = await api.connection.request<{ sessions: SessionInfo[] }>('agent/listSessions', {}).catch(() => undefined);
  const listed = sessions?.sessions.find((s) => s.sessionId === before.sessionId);
  // one client: this window; the one before the reload went away and the run went on without it
  rec.check(step, 'agent/listSessions: the session is live and running, this window its one client',
    listed?.loaded === true && listed.running === true && listed.clients === 1, listed);
  rec.write({ waiting: 'reattached', sessionId: before.sessionId });
  const settled = c.settled.find((s) => s.runId === before.runId);
  if (settled === undefined) {
    await waitFor(api, () => c.settled.some((s) => s.runId === before.runId), 60_000, 'the run to settle');
  }
  const end = c.settled.find((s) => s.runId === before.runId);
  rec.check(step, 'the run ends with agent/settled, stopReason stop', end?.stopReason === 'stop', end);
  rec.check(step, 'the panel is idle once the run has settled', !c.isRunning && c.status === 'idle', c.status);
  const texts = textRows(api).map((row) => row.text);
  const partTwo = texts.filter((text) => text.startsWith(PART_TWO_START));
  rec.check(step, 'the whole second answer is there once, from its start to its end',
    partTwo.length === 1 && partTwo[0]?.endsWith(PART_TWO_END) === true && !textRows(api).some((row) => row.streaming), texts);
  const tool = toolRow(api, TOOL_CALL);
  rec.check(step, 'the slow command\'s row is done with its output', tool?.status === 'done' && tool.output.includes(TOOL_OUTPUT), tool);
  rec.check(step, 'no gap was reported', !c.transcript.plainText().includes(MISSING), c.transcript.plainText());
  // the panel's transcript is the stored one: the same assistant texts in the same order
  const { messages } = await api.connection.request<MessagesResult>('agent/getMessages', { sessionId: before.sessionId });
  const stored = messages
    .filter((message): message is AssistantMessage => message.role === 'assistant')
    .flatMap((message) => message.content.flatMap((block) => (block.type === 'text' && block.text.trim() !== '' ? [block.text] : [])));
  rec.check(step, 'the panel\'s answers are those of agent/getMessages, in order', JSON.stringify(stored) === JSON.stringify(texts),
    { stored, texts });
  rec.check(step, 'one user message (the prompt), shown once',
    c.transcript.rows.filter((row) => row.kind === 'user').length === 1, c.transcript.plainText());
}
