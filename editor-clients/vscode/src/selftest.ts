/**
 * The end-to-end self-test, run inside the real extension host when
 * `AGENTLS_VSCODE_SELFTEST=<result file>` is set (see e2e/run.mjs).
 *
 * It drives a faux-model session through the same code paths as the panel and the
 * commands (e2e/fixture/faux-script.json scripts the model): a prompt whose answer
 * streams and edits an open file (then undone in the editor), a steer during a slow
 * answer, an abort, and a `bash` call whose permission question the driver answers in
 * the real dialog. Each check is one JSON line in the result file; the last line is
 * `{"done": true, "passed", "failed", ...}`.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { AgentExtension } from './extension';
import type { SettledNotification } from './protocol';
import type { Row } from './view';

export const SELFTEST_ENV = 'AGENTLS_VSCODE_SELFTEST';

/** What e2e/fixture holds: the file the agent edits and the answers it streams. */
const NOTES = 'notes.txt';
const BEFORE = 'hello world\n';
const AFTER = 'hello agentls\n';
const FIRST_ANSWER = 'Done: notes.txt now greets agentls.';
const STORY_START = 'Once upon a time';
const STEERED_ANSWER = 'Short version: the agent was steered.';
const ABORTED_START = 'This answer will be cut short';
const BASH_OUTPUT = 'agentls-permission-ok';

class Recorder {
  passed = 0;
  failed = 0;
  constructor(private readonly file: string) {}

  write(record: object): void {
    fs.appendFileSync(this.file, `${JSON.stringify({ t: Date.now(), ...record })}\n`);
  }

  check(step: string, name: string, ok: boolean, detail?: unknown): void {
    if (ok) this.passed += 1;
    else this.failed += 1;
    this.write({ step, check: name, ok, ...(detail !== undefined ? { detail } : {}) });
  }
}

async function waitFor(
  api: AgentExtension,
  condition: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  if (condition()) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error): void => {
      clearInterval(poll);
      clearTimeout(timer);
      subscription.dispose();
      if (error) reject(error);
      else resolve();
    };
    const test = (): void => {
      if (condition()) done();
    };
    const subscription = api.controller.onChange(test);
    const poll = setInterval(test, 50);
    const timer = setTimeout(() => done(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
}

async function settledRun(api: AgentExtension, runId: string | undefined, timeoutMs = 30_000): Promise<SettledNotification> {
  if (runId === undefined) throw new Error('the prompt started no run');
  const find = (): SettledNotification | undefined => api.controller.settled.find((s) => s.runId === runId);
  await waitFor(api, () => find() !== undefined, timeoutMs, `run ${runId} to settle`);
  return find() as SettledNotification;
}

function rows(api: AgentExtension): readonly Row[] {
  return api.controller.transcript.rows;
}

function textRows(api: AgentExtension): Extract<Row, { kind: 'text' }>[] {
  return rows(api).filter((row): row is Extract<Row, { kind: 'text' }> => row.kind === 'text');
}

/** Wait until a text row of `full`'s beginning is streaming with at least `chars` characters; its text. */
async function streamingText(api: AgentExtension, full: string, chars: number): Promise<string> {
  let seen = '';
  await waitFor(
    api,
    () => {
      const row = textRows(api).find(
        (r) => r.streaming && r.text.length >= chars && (full.startsWith(r.text) || r.text.startsWith(full)),
      );
      seen = row?.text ?? '';
      return seen !== '';
    },
    15_000,
    `streaming text "${full}…"`,
  );
  return seen;
}

async function promptAndEdit(api: AgentExtension, rec: Recorder, document: vscode.TextDocument): Promise<void> {
  const step = 'prompt-edit';
  const c = api.controller;
  // Watch the answer stream in: a text row seen while streaming with only part of its text.
  const partials: string[] = [];
  const watch = c.onChange(() => {
    for (const row of textRows(api)) if (row.streaming && row.text !== '') partials.push(row.text);
  });
  const result = await c.prompt('Please make notes.txt greet agentls.');
  const settled = await settledRun(api, result.runId);
  watch.dispose();
  rec.check(step, 'run settled with stop', settled.stopReason === 'stop', settled);
  const final = textRows(api).find((row) => row.text === FIRST_ANSWER);
  rec.check(step, 'answer text in the transcript', final !== undefined && !final.streaming, c.transcript.plainText());
  rec.check(
    step,
    'answer streamed in pieces',
    partials.some((text) => FIRST_ANSWER.startsWith(text) && text.length < FIRST_ANSWER.length),
    partials.slice(0, 5),
  );
  const thinking = rows(api).find((row) => row.kind === 'thinking');
  rec.check(step, 'thinking block in the transcript', thinking !== undefined && thinking.text.length > 0);
  const tool = rows(api).find((row) => row.kind === 'tool' && row.name === 'edit');
  rec.check(
    step,
    'edit tool row done with its result',
    tool?.kind === 'tool' && tool.status === 'done' && tool.summary === NOTES && tool.output.includes('Edited'),
    tool,
  );
  rec.check(step, 'open editor shows the edit', document.getText() === AFTER, document.getText());
  rec.check(step, 'document saved after the edit (agent/saveDocuments)', !document.isDirty);
  rec.check(step, 'disk holds the edit', fs.readFileSync(document.uri.fsPath, 'utf8') === AFTER);
  const shown = await api.panel.renderedText();
  rec.check(step, 'panel shows the streamed answer', shown.includes(FIRST_ANSWER), shown.slice(0, 400));
  rec.check(step, 'panel shows the tool call', shown.includes('edit') && shown.includes(NOTES));
}

async function undoEdit(api: AgentExtension, rec: Recorder, document: vscode.TextDocument): Promise<void> {
  const step = 'undo';
  await vscode.window.showTextDocument(document, { preview: false, preserveFocus: false });
  await vscode.commands.executeCommand('undo');
  try {
    await waitFor(api, () => document.getText() === BEFORE, 5000, 'undo');
  } catch {
    // reported below
  }
  rec.check(step, 'undo restores the text', document.getText() === BEFORE, document.getText());
  await document.save();
  rec.check(step, 'saved after undo', fs.readFileSync(document.uri.fsPath, 'utf8') === BEFORE);
}

async function steer(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'steer';
  const c = api.controller;
  const result = await c.prompt('Tell me a long story.');
  const partial = await streamingText(api, STORY_START, 12);
  rec.check(step, 'story streaming when steering', partial.length > 0, partial);
  const itemId = await c.steer('Make it short.');
  let queued = false;
  try {
    await waitFor(api, () => c.queue.steering.some((item) => item.id === itemId), 5000, 'the queue');
    queued = c.header().queue.some((item) => item.id === itemId && item.kind === 'steering');
  } catch {
    // reported below
  }
  rec.check(step, 'steering item shown in the queue', queued, c.queue);
  rec.check(step, 'status is running', c.status === 'running');
  const settled = await settledRun(api, result.runId);
  rec.check(step, 'run settled with stop', settled.stopReason === 'stop', settled);
  const list = rows(api);
  const story = list.findIndex((row) => row.kind === 'text' && row.text.startsWith(STORY_START));
  const steerRow = list.findIndex((row) => row.kind === 'user' && row.text === 'Make it short.');
  const answer = list.findIndex((row) => row.kind === 'text' && row.text === STEERED_ANSWER);
  rec.check(step, 'steering delivered after the story, then answered', story >= 0 && story < steerRow && steerRow < answer, {
    story,
    steerRow,
    answer,
  });
  rec.check(step, 'queue empty after delivery', c.queue.steering.length === 0 && c.queue.followUp.length === 0);
  const shown = await api.panel.renderedText();
  rec.check(step, 'panel shows the steered answer', shown.includes(STEERED_ANSWER));
}

async function abort(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'abort';
  const c = api.controller;
  const result = await c.prompt('Write another long answer.');
  const partial = await streamingText(api, ABORTED_START, 40);
  const answer = await c.abort();
  rec.check(step, 'abort answered aborted', answer?.aborted === true, answer);
  const settled = await settledRun(api, result.runId);
  rec.check(step, 'run settled as aborted', settled.stopReason === 'aborted', settled);
  rec.check(step, 'status back to idle', c.status === 'idle' && !c.isRunning);
  const cut = textRows(api).find((row) => row.text.startsWith(ABORTED_START));
  rec.check(
    step,
    'answer cut short',
    cut !== undefined && cut.text.startsWith(partial) && !cut.text.endsWith('The end.') && !cut.streaming,
    cut,
  );
  const notice = rows(api).find((row) => row.kind === 'notice' && row.text.startsWith('Aborted'));
  rec.check(step, 'transcript says aborted', notice !== undefined);
}

async function permission(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'permission';
  const c = api.controller;
  const result = await c.prompt('Run the check.');
  await waitFor(api, () => c.status === 'permission', 15_000, 'the permission question');
  rec.check(step, 'status is waiting for permission', true);
  const asking = rows(api).find((row) => row.kind === 'tool' && row.name === 'bash');
  rec.check(step, 'bash row waits for permission', asking?.kind === 'tool' && asking.status === 'permission', asking);
  // The driver answers the modal dialog ("Allow once") in the browser.
  rec.write({ waiting: 'permission' });
  const settled = await settledRun(api, result.runId, 60_000);
  rec.check(step, 'run settled with stop', settled.stopReason === 'stop', settled);
  const tool = rows(api).find((row) => row.kind === 'tool' && row.name === 'bash');
  rec.check(
    step,
    'bash ran after "Allow once"',
    tool?.kind === 'tool' && tool.status === 'done' && tool.output.includes(BASH_OUTPUT),
    tool,
  );
}

async function reload(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'sessions';
  const c = api.controller;
  const live = c.transcript.plainText();
  const sessions = await c.listSessions();
  const mine = sessions.find((s) => s.sessionId === c.sessionId);
  rec.check(step, 'session listed', mine !== undefined && mine.messageCount > 0, mine);
  await c.loadSession(c.sessionId as string);
  const loaded = c.transcript.plainText();
  for (const text of [FIRST_ANSWER, 'Make it short.', STEERED_ANSWER, BASH_OUTPUT]) {
    rec.check(step, `loaded transcript has "${text}"`, loaded.includes(text) && live.includes(text));
  }
}

export async function runSelfTest(api: AgentExtension, resultFile: string): Promise<void> {
  const rec = new Recorder(resultFile);
  const started = Date.now();
  rec.write({ event: 'activated', vscode: vscode.version });
  try {
    await api.started;
    rec.write({ event: 'server started', command: api.connection.command });
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) throw new Error('no workspace folder open');
    const document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, NOTES));
    await vscode.window.showTextDocument(document, { preview: false });
    rec.check('setup', 'notes.txt open with its text', document.getText() === BEFORE, document.getText());
    await api.panel.reveal(false);
    await waitFor(api, () => api.panel.visible, 20_000, 'the panel');
    await api.controller.ensureSession();
    rec.check('setup', 'session created', api.controller.sessionId !== undefined);
    await promptAndEdit(api, rec, document);
    await undoEdit(api, rec, document);
    await steer(api, rec);
    await abort(api, rec);
    await permission(api, rec);
    await reload(api, rec);
  } catch (error) {
    rec.check('error', 'no exception', false, error instanceof Error ? error.stack : String(error));
  }
  await api.panel.reveal(false).catch(() => undefined);
  rec.write({
    done: true,
    passed: rec.passed,
    failed: rec.failed,
    ms: Date.now() - started,
    transcript: api.controller.transcript.plainText(),
  });
}
