/**
 * The end-to-end self-test, run inside the real extension host by the test extension
 * (./extension.ts) when `AGENTLS_VSCODE_SELFTEST=<result file>` is set (see e2e/run.mjs).
 * It reaches agentls only through the API its `activate()` returns (src/api.ts): the
 * imports of ../../../src are types, and the build fails if one brings code along.
 *
 * It drives a faux-model session through the same code paths as the panel and the
 * commands (e2e/fixture/faux-script.json scripts the model, one response per model call
 * in the order of the steps below): a prompt whose answer streams and edits an open file
 * (then undone in the editor), a steer during a slow answer, an abort, `bash` calls whose
 * permission questions the driver answers in the real dialog (Allow once, Reject, Allow
 * always, then a call that must not ask), a `write` that creates a new file through the
 * editor, a run that ends in an error followed by the panel's Continue button, the
 * model and thinking-level pickers, commands typed into the prompt box (`!echo hi`, then
 * `!!sleep 30` stopped with Escape), Agent: Compact from the palette, and the `/`
 * completion of the workspace's prompt template, a prompt with editor attachments (a
 * selection added with Ctrl+Alt+A, files picked from the `@` list, one removed again), and
 * a prompt with a diagnostics attachment whose model calls the `diagnostics` tool, answered
 * from the problems VS Code's JSON support reports for a broken file; then, in a session whose
 * edits wait for review (`agent/reviewEdit`), an edit accepted in the diff editor, one
 * rejected with a reason, one of two hunks whose second hunk is rejected with its CodeLens, one whose
 * right side is edited before Accept, and one whose review an abort cancels; then the Changes view
 * of a run whose bash edits (two hunks), removes, renames and creates files (a diff opened, Revert
 * Hunk, Revert File); then, in a session whose
 * model edits a file open in an editor and one that is not and creates a third, Rewind to here
 * with the files reverted (the editor's undo brings the agent's version back), the prompt sent
 * again from there, Fork from here, the header's branch picker (the files switched too), and a
 * rewind whose conflict the driver answers with "Revert the others"; then MCP: a session of the
 * workspace with a `.mcp.json` naming the quirky test server, its trust question answered
 * Trust, the server ready in the panel's MCP menu, its echo tool called and allowed for every
 * tool of the server, Restart from the menu, and its log opened from Agent: MCP Servers; the
 * permission presets switched with Shift+Tab, the header's toggle and the palette; near the end
 * `agentls.demo` without a faux script (the bundled demo). Each check is one JSON line in the
 * result file.
 *
 * Where a person has to act in the real UI, the self-test writes `{"waiting": ...}` (what
 * to do, e.g. `{"waiting": "permission", "answer": "Reject"}`) and waits for the effect;
 * the driver does it in the browser. The last line is `{"done": true, "passed", "failed", ...}`.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentExtension } from '../../../src/api';
import type {
  BashExecutionMessage,
  CompactionSummaryMessage,
  CustomTypeMessage,
  EditorContextAttachmentInfo,
  McpServerInfo,
  Message,
  MessagesResult,
  SettledNotification,
  QueueLists,
  StateResult,
} from '../../../src/protocol';
import type { QueueState } from '../../../src/queue';
import type { Row } from '../../../src/view';

export const SELFTEST_ENV = 'AGENTLS_VSCODE_SELFTEST';
/** The `.mcp.json` of the MCP step (the driver writes it outside the workspace; the step puts it in place). */
export const SELFTEST_MCP_ENV = 'AGENTLS_VSCODE_SELFTEST_MCP';

/** What e2e/fixture holds: the file the agent edits and the answers it streams. */
const NOTES = 'notes.txt';
const BEFORE = 'hello world\n';
const AFTER = 'hello agentls\n';
const FIRST_ANSWER = 'Done: notes.txt now greets agentls.';
const STORY_START = 'Once upon a time';
const STEERED_ANSWER = 'Short version: the agent was steered.';
const ABORTED_START = 'This answer will be cut short';
const BASH_OUTPUT = 'agentls-permission-ok';
const REJECTED_FILE = 'rejected.txt';
const REJECTION = 'The user rejected the bash call.';
const REJECTED_ANSWER = 'The check was rejected, so rejected.txt was not written.';
const ALWAYS = [
  { file: 'always-1.txt', output: 'agentls-always-1', toolCallId: 'call-bash-always-1' },
  { file: 'always-2.txt', output: 'agentls-always-2', toolCallId: 'call-bash-always-2' },
] as const;
const SECOND_ANSWER = 'The second check ran without asking.';
/** The command the abort cancels (faux-script.json): two lines, longer than a row's summary. */
const CANCELLED_COMMAND =
  '$ echo agentls-cancelled \\\n  > cancelled.txt # the card shows the whole command, wrapped, every line of it, not a first line cut at the width of the row';
const CREATED_FILE = 'created.txt';
const CREATED_TEXT = 'Created by agentls through the editor.\n';
const FAILING_START = 'This answer fails part way';
const MODEL_ERROR = 'faux: the scripted model error of the e2e test';
const FOLLOW_UP = 'Go on after the error.';
const CONTINUED_ANSWER = 'Continued after the error: the follow-up was answered.';
/** The session's own model, and the stand-in of e2e's models.json (never called). */
const FAUX_MODEL = 'faux/faux-1';
const API_KEY_VALUE = 'sk-agentls-e2e-not-a-key';
const OTHER_MODEL = 'e2e-local/stand-in';
const THINKING = 'high';
/** The workspace's project instructions and prompt template (e2e/fixture/AGENTS.md, greet.md). */
const CONTEXT_FILE = 'AGENTS.md';
const TEMPLATE = { name: 'greet', description: 'Greet someone by name', argumentHint: '<name>', args: 'agentls' };
const EXPANDED = 'Say hello to agentls in one short sentence.';
const GREETING = 'Hello, agentls!';
/** Commands typed into the panel's prompt box. */
const ECHO = { command: 'echo hi', output: 'hi' };
const SLEEP = 'sleep 30';
const COMPACT_INSTRUCTIONS = 'Focus on the commands the user ran.';
const SUMMARY_START = '## Goal\nKeep notes.txt greeting agentls.';
/** Editor context: a selection of calc.py (lines 4-5), notes.txt from the `@` list (AGENTS.md picked, then removed). */
const CALC = 'calc.py';
const SELECTED = { start: [3, 0], end: [4, 16], label: 'calc.py:4-5', text: 'def add(a, b):' } as const;
const ATTACH = { query: 'note', file: 'notes.txt', removed: { query: 'AGEN', file: 'AGENTS.md' } };
const CONTEXT_PROMPT = 'Why does the selected add subtract?';
const CONTEXT_ANSWER = 'The selected add in calc.py subtracts: it returns a - b.';
/** Diagnostics: broken.json has a JSON syntax error that VS Code's JSON language features report. */
const BROKEN = 'broken.json';
const DIAGNOSTICS_PROMPT = 'Fix the problems of broken.json.';
/** With a code block: the panel highlights it and gives it a Copy button. */
const DIAGNOSTICS_CODE = '{"name": "broken", "count": 2, "ok": true}';
const DIAGNOSTICS_ANSWER = `broken.json has a syntax error the editor reports. A valid version:\n\n\`\`\`json\n${DIAGNOSTICS_CODE}\n\`\`\``;
/** Review: a session whose edits wait for review; the driver accepts one, rejects one with a reason; one is aborted. */
const REVIEWED = 'review.txt';
const REVIEW_TITLE = "review.txt: agent's change (review)";
const DRAFT = 'status: draft\n';
const ACCEPTED = 'status: accepted\n';
const REJECT_REASON = 'keep it accepted';
const REVIEW_REJECTION = `The user rejected the change to ${REVIEWED}: ${REJECT_REASON}`;
/** Review hunk by hunk: a file of 20 lines, whose lines 2 and 19 the model changes in one edit (two hunks). */
const HUNKS = {
  file: 'hunks.txt',
  text: Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join(''),
} as const;
/** The Changes step: files in chg/ that one bash call of faux-changes.json edits (two hunks), removes, renames, creates. */
const CHG = {
  script: 'faux-changes.json',
  twoHunks: 'chg/two-hunks.txt',
  gone: 'chg/gone.txt',
  oldName: 'chg/old-name.txt',
  newName: 'chg/new-name.txt',
  created: 'chg/created.txt',
  lines: Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join(''),
  goneText: 'removed by bash\n',
  renamedText: 'renamed by bash, the same text\n',
} as const;
/** Rewind and fork: the session's model is faux-rewind.json (two edits, one new file, then the answers). */
const REWIND = {
  script: 'faux-rewind.json',
  open: 'rewind-open.txt',
  closed: 'rewind-closed.txt',
  created: 'rewind-new.txt',
  user: { open: 'open: as the user left it\n', closed: 'closed: as the user left it\n' },
  agent: { open: 'open: as the agent left it\n', closed: 'closed: as the agent left it\n', created: 'new: created by the agent\n' },
  someone: 'closed: changed by someone else\n',
  first: 'Say hello first.',
  hello: 'Hello, before any change.',
  change: 'Change the three files.',
  changed: 'Changed rewind-open.txt and rewind-closed.txt, created rewind-new.txt.',
  again: 'Going on from before the changes.',
} as const;
/** The queue: follow-ups queued while a permission question holds the run, edited and moved in the panel. */
const QUEUE = {
  prompt: 'Check, then take the follow-ups.',
  toolCallId: 'call-queue-bash',
  first: 'Then run the tests.',
  edited: 'Then run the linter.',
  second: 'Then write the changelog.',
} as const;

/** MCP: a project's .mcp.json naming the quirky server (tests/mcp/servers/quirky.py), trusted, its echo tool called. */
const MCP = {
  script: 'faux-mcp.json',
  server: 'quirky',
  tool: 'mcp__quirky__echo',
  label: 'quirky · echo',
  toolCallId: 'call-mcp-echo',
  prompt: 'Echo through the MCP server.',
  output: 'agentls-mcp-echo',
  answer: 'The quirky server echoed agentls-mcp-echo.',
} as const;

/**
 * The sandbox and the budget (issue 28): `agentls.sandbox.mode` workspace-write and
 * `agentls.budget.maxTurns` 2 (settings, so initialization options), a session whose bash
 * writes beside the workspace (denied; asked to run once outside), and one whose model
 * would go on for four turns.
 */
const SAFETY = {
  sandboxScript: 'faux-sandbox.json',
  sandboxCall: 'call-sandbox-outside',
  sandboxPrompt: 'Write a file beside the workspace.',
  sandboxAnswer: 'The file beside the workspace is written.',
  outside: 'sandbox-outside.txt',
  outsideText: 'agentls-outside',
  unsandboxedNote: '[Run outside the sandbox, once, as the user allowed.]',
  runOutside: 'Run once outside the sandbox',
  keepFailure: 'Keep the failure',
  budgetScript: 'faux-budget.json',
  budgetPrompt: 'List the folder, again and again.',
  raise: 'Continue, the limit raised to 4 turns',
  stop: 'Stop',
  spend: '2/2 turns',
  notice: "Stopped by the run's budget: 2 of 2 turns.",
  newSpend: '$0.00 / $1.50 · 2/5 turns',
} as const;

/** What the driver does in the browser when the self-test writes `{"waiting": ...}`. */
type Waiting =
  /**
   * Answer on the tool row in the panel (`inline`) or in the modal dialog (`detail`: the text it
   * must show); `options`: the answers the row must offer (default Allow once, Allow always, Reject).
   */
  | { waiting: 'permission'; answer: string; ui: 'inline' | 'modal'; detail?: string; options?: string[] }
  /** The modal asking whether to trust a .mcp.json: check it names `file` and `command`, then click Trust. */
  | { waiting: 'trust'; file: string; command: string }
  /** Open the panel's MCP menu: `server` is ready with `tools` (short names); then close it. */
  | { waiting: 'mcpMenu'; server: string; tools: string[]; button: string }
  /** Click Restart of `server` in the panel's MCP menu. */
  | { waiting: 'mcpRestart'; server: string }
  /** Agent: MCP Servers from the palette: `server` listed as ready; pick it, then Open Log. */
  | { waiting: 'mcpPalette'; server: string; tools: string[] }
  | { waiting: 'continue' }
  /** The header's sandbox badge reads `text` with `data-status` `status` (and `reason` in its tooltip when given): screenshot. */
  | { waiting: 'sandboxBadge'; text: string; status: string; reason?: string }
  /** The sandbox's question on the bash row of `command`: check it says OUTSIDE and offers `options`, then click `answer`. */
  | { waiting: 'sandboxQuestion'; command: string; answer: string; options: string[] }
  /** The budget's card: check its title, detail and `options`, then click `answer`. */
  | { waiting: 'budgetQuestion'; title: string; detail: string; answer: string; options: string[] }
  /** After the run the budget stopped: the header's spend shows `spend` and the transcript `notice`: screenshot. */
  | { waiting: 'budgetStopped'; spend: string; notice: string }
  /**
   * Agent: Set Budget… from the palette, each run's limits: its input boxes (dollars, turns, tokens) hold `prefilled`;
   * `invalid` in the first shows a validation message; then `values`, each with Enter.
   */
  | { waiting: 'setBudget'; prefilled: string[]; invalid: string; values: string[] }
  /** A revert of the Changes view met `file` changed since: click "Revert anyway" in the modal; the view lists `listed`. */
  | { waiting: 'revertAnyway'; file: string; listed: string }
  /**
   * The diff editor `title` is open: check the panel lists the review; then Accept (the diff's
   * title button) or Reject (Ctrl+Alt+N in the diff, then `reason` in the input box).
   */
  | { waiting: 'review'; action: 'accept' | 'reject'; title: string; path: string; reason?: string }
  | { waiting: 'pick'; picker: 'panel-model' | 'palette-model' | 'panel-thinking'; value: string }
  /** Type `text` into the panel's prompt box and press Enter. */
  | { waiting: 'type'; text: string }
  /** Press `key` in the panel's prompt box. */
  | { waiting: 'key'; key: 'Escape' | 'Enter' | 'Shift+Tab' }
  /** Check the header's permission preset toggle reads `shows` and the prompt box kept the focus, then click the toggle. */
  | { waiting: 'presetToggle'; shows: string }
  /**
   * Click Rewind on the user message `text`, keep the choices (files reverted, no summary);
   * with `conflict`, the modal names that file: click "Revert the others". Then check the
   * prompt box holds `text`, and empty it when `clear`.
   */
  | { waiting: 'rewind'; text: string; conflict?: string; clear?: boolean }
  /** Click Fork on the user message `text`: check the prompt box holds it, then empty the box. */
  | { waiting: 'fork'; text: string }
  /** Click the header's Branches button, pick the branch that `hasText`, and whether the files follow. */
  | { waiting: 'branch'; hasText: string; files: boolean }
  /** In the panel's queue: Edit the item `edit`, type `text`, Enter; then ↑ on the item `up`. */
  | { waiting: 'queue'; edit: string; text: string; up: string }
  /** Run Agent: Compact from the palette and enter `instructions`. */
  | { waiting: 'compact'; instructions: string }
  /** Type `/` in the prompt box, check the list offers `name`, pick it with Tab, type `args`, press Enter. */
  | { waiting: 'complete'; name: string; description: string; argumentHint: string; args: string }
  /** Click the Copy button of the assistant message that has `hasText`: of the message, or of its code block. */
  | { waiting: 'copy'; what: 'message' | 'code'; hasText: string }
  /** Click the path of the tool row whose summary is `path`. */
  | { waiting: 'openPath'; path: string }
  /** Click Edit on the user message `text`: check the prompt box has it, then empty the box. */
  | { waiting: 'editMessage'; text: string }
  /**
   * Open the panel's History: check it lists `title`; click its Open (`open`), its Rename and
   * type `name` (`rename`), or Delete and confirm (`delete`).
   */
  | { waiting: 'history'; action: 'open' | 'delete'; title: string }
  | { waiting: 'history'; action: 'rename'; title: string; name: string }
  /** Press Ctrl+Alt+A (Agent: Add Selection) in the focused editor. */
  | { waiting: 'addSelection'; label: string }
  /**
   * In the prompt box: check the chip `label` is there; pick `file` from the `@query` list, then
   * `removed.file` and remove its chip with ×; type `text` and press Enter.
   */
  | {
      waiting: 'attach';
      label: string;
      query: string;
      file: string;
      removed: { query: string; file: string };
      text: string;
    };

interface PermissionRule {
  workspace: string;
  toolName: string;
}

export class Recorder {
  passed = 0;
  failed = 0;
  /** How many `waiting` lines were written: the driver acknowledges each, in order, in `<file>.acks`. */
  private asked = 0;
  constructor(private readonly file: string) {}

  write(record: object): void {
    fs.appendFileSync(this.file, `${JSON.stringify({ t: Date.now(), ...record })}\n`);
  }

  check(step: string, name: string, ok: boolean, detail?: unknown): void {
    if (ok) this.passed += 1;
    else this.failed += 1;
    this.write({ step, check: name, ok, ...(detail !== undefined ? { detail } : {}) });
  }

  /** Ask the driver to act in the browser (see `Waiting`). */
  ask(waiting: Waiting): void {
    this.asked += 1;
    this.write(waiting);
  }

  /**
   * Ask, then wait until the driver has done it (it writes one line to `<file>.acks` per request
   * handled, done or failed): for a request that only looks at the page, whose effect cannot be
   * waited for otherwise.
   */
  async askAndWait(api: AgentExtension, waiting: Waiting, timeoutMs = 30_000): Promise<void> {
    this.ask(waiting);
    const count = this.asked;
    const acks = `${this.file}.acks`;
    const handled = (): number => (fs.existsSync(acks) ? fs.readFileSync(acks, 'utf8').split('\n').filter(Boolean).length : 0);
    await waitFor(api, () => handled() >= count, timeoutMs, `the driver to do ${JSON.stringify(waiting)}`).catch(() => undefined);
  }
}

export async function waitFor(
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

/** The first run to settle after this call (one the driver or a submit starts); the runs settled so far do not count. */
function nextSettled(api: AgentExtension): () => SettledNotification | undefined {
  const known = new Set(api.controller.settled.map((s) => s.runId));
  return () => api.controller.settled.find((s) => !known.has(s.runId));
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
  // the diff coloured, its lines marked, its headers left out (the file is named above it)
  rec.check(
    step,
    "panel shows the edit's diff without its ---/+++ headers",
    shown.includes(`${NOTES} +1 −1`) && shown.includes('-hello world\n+hello agentls') && !shown.includes(`+++ b/${NOTES}`),
    shown.slice(0, 600),
  );
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

function summary(row: Extract<Row, { kind: 'tool' }> | undefined): string {
  return row?.summary ?? '';
}

function toolRow(api: AgentExtension, toolCallId: string): Extract<Row, { kind: 'tool' }> | undefined {
  return rows(api).find(
    (row): row is Extract<Row, { kind: 'tool' }> => row.kind === 'tool' && row.toolCallId === toolCallId,
  );
}

/** Check that the tool row of `toolCallId` ended as `status` with `output` in its result. */
function checkToolEnded(
  api: AgentExtension,
  rec: Recorder,
  step: string,
  name: string,
  toolCallId: string,
  status: 'done' | 'error',
  output: string,
): void {
  const tool = toolRow(api, toolCallId);
  rec.check(step, name, tool?.status === status && tool.output.includes(output), tool);
}

/** Prompt for a `bash` call, wait for its permission question, have the driver answer it; the run's end. */
async function promptAndAnswer(
  api: AgentExtension,
  rec: Recorder,
  step: string,
  text: string,
  toolCallId: string,
  answer: 'Allow once' | 'Allow always' | 'Reject',
  ui: 'inline' | 'modal' = 'inline',
): Promise<SettledNotification> {
  const c = api.controller;
  const result = await c.prompt(text);
  await waitFor(api, () => c.status === 'permission', 15_000, 'the permission question');
  rec.check(step, 'status is waiting for permission', true);
  const asking = toolRow(api, toolCallId);
  rec.check(step, 'bash row waits for permission', asking?.status === 'permission', asking);
  if (ui === 'inline') {
    await waitFor(api, () => c.openQuestions.includes(toolCallId), 5_000, 'the inline question').catch(() => undefined);
    const row = toolRow(api, toolCallId);
    rec.check(step, 'the question shows on the bash row in the panel', row?.question?.length === 3, row);
    rec.ask({ waiting: 'permission', answer, ui });
  } else {
    rec.check(step, 'the modal asks, not the row', !c.openQuestions.includes(toolCallId), c.openQuestions);
    // the dialog names the command, not the arguments' JSON
    rec.ask({ waiting: 'permission', answer, ui, detail: `$ ${summary(asking)}` });
  }
  const settled = await settledRun(api, result.runId, 60_000);
  rec.check(step, 'run settled with stop', settled.stopReason === 'stop', settled);
  rec.check(step, 'status back to idle', c.status === 'idle');
  return settled;
}

async function permission(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'permission';
  await promptAndAnswer(api, rec, step, 'Run the check.', 'call-bash', 'Allow once');
  checkToolEnded(api, rec, step, 'bash ran after "Allow once"', 'call-bash', 'done', BASH_OUTPUT);
}

async function reject(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'reject';
  // This one in the modal dialog (agentls.permissionPrompt: modal applies to the next question, no restart).
  const config = vscode.workspace.getConfiguration('agentls');
  await config.update('permissionPrompt', 'modal', vscode.ConfigurationTarget.Global);
  try {
    await promptAndAnswer(api, rec, step, 'Run the check that writes rejected.txt.', 'call-bash-reject', 'Reject', 'modal');
  } finally {
    await config.update('permissionPrompt', undefined, vscode.ConfigurationTarget.Global);
  }
  rec.check(step, 'the setting change did not restart the server', api.connection.running && api.controller.connected);
  checkToolEnded(api, rec, step, 'bash row ends as an error with the rejection', 'call-bash-reject', 'error', REJECTION);
  rec.check(step, 'the rejected command did not run', !fs.existsSync(path.join(folder, REJECTED_FILE)));
  rec.check(step, 'the model answered the rejection', textRows(api).some((row) => row.text === REJECTED_ANSWER));
  const shown = await api.panel.renderedText();
  rec.check(step, 'panel shows the rejection', shown.includes(REJECTION), shown.slice(-400));
}

async function permissionRules(api: AgentExtension, folder: string): Promise<PermissionRule[]> {
  const { rules } = await api.connection.request<{ rules: PermissionRule[] }>('agent/listPermissionRules', {
    cwd: folder,
  });
  return rules;
}

async function allowAlways(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'allow-always';
  const c = api.controller;
  const [first, second] = ALWAYS;
  await promptAndAnswer(api, rec, step, 'Run the first check.', first.toolCallId, 'Allow always');
  checkToolEnded(api, rec, step, 'bash ran after "Allow always"', first.toolCallId, 'done', first.output);
  rec.check(step, `${first.file} written`, fs.existsSync(path.join(folder, first.file)));
  const rules = await permissionRules(api, folder);
  const rule = rules.find((r) => r.toolName === 'bash');
  rec.check(step, 'agent/listPermissionRules lists the bash rule', rule !== undefined, rules);

  // A later prompt: its bash call runs without a question (the status never says so).
  const statuses = new Set<string>([c.status]);
  const watch = c.onChange(() => statuses.add(c.status));
  const result = await c.prompt('Run the second check.');
  const settledOrAsked = (): boolean =>
    c.status === 'permission' || c.settled.some((s) => s.runId === result.runId);
  try {
    await waitFor(api, settledOrAsked, 30_000, 'the second bash run');
  } finally {
    watch.dispose();
  }
  const asked = statuses.has('permission');
  rec.check(step, 'second bash call ran without a permission question', !asked, [...statuses]);
  if (asked) await c.abort(); // do not leave the run hanging on an unexpected question
  const settled = c.settled.find((s) => s.runId === result.runId);
  rec.check(step, 'second run settled with stop', settled?.stopReason === 'stop', settled);
  checkToolEnded(api, rec, step, 'second bash row done', second.toolCallId, 'done', second.output);
  const written = path.join(folder, second.file);
  rec.check(
    step,
    `${second.file} written by the second call`,
    fs.existsSync(written) && fs.readFileSync(written, 'utf8') === `${second.output}\n`,
  );
  rec.check(step, 'second answer in the transcript', textRows(api).some((row) => row.text === SECOND_ANSWER));

  // Revoke the rule, so that "Allow always" never outlives this test.
  if (rule) {
    const { revoked } = await api.connection.request<{ revoked: boolean }>('agent/revokePermissionRule', rule);
    rec.check(step, 'agent/revokePermissionRule revoked the rule', revoked === true);
  }
  const left = await permissionRules(api, folder);
  rec.check(step, 'no rule left after revoking', left.length === 0, left);
}

/** An inline question an abort cancels (the server's $/cancelRequest): it leaves the row, the call does not run. */
async function cancelQuestion(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'cancel-question';
  const c = api.controller;
  const result = await c.prompt('Run the check that the abort cancels.');
  await waitFor(api, () => c.openQuestions.includes('call-bash-cancel'), 15_000, 'the inline question');
  const shown = await api.panel.renderedText();
  rec.check(step, 'the panel shows the question with its answers', shown.includes('Allow this call?') && shown.includes('Allow always'), shown.slice(-300));
  rec.check(step, 'the card shows the whole command, every line', shown.includes(CANCELLED_COMMAND), shown.slice(-500));
  await c.abort();
  const settled = await settledRun(api, result.runId, 30_000);
  rec.check(step, 'the run settled as aborted', settled.stopReason === 'aborted', settled);
  await waitFor(api, () => c.openQuestions.length === 0, 10_000, 'the cancelled question').catch(() => undefined);
  const row = toolRow(api, 'call-bash-cancel');
  rec.check(step, 'Abort: the inline question left the row', c.openQuestions.length === 0 && row?.question === undefined, row);
  const after = await api.panel.renderedText();
  rec.check(step, 'Abort: the panel shows no question', !after.includes('Allow this call?'), after.slice(-300));
  rec.check(step, 'Abort: the cancelled command did not run', !fs.existsSync(path.join(folder, 'cancelled.txt')));
  rec.check(step, 'status back to idle', c.status === 'idle', c.status);
}

/** Typed settings apply without a restart: `agentls.thinkingLevel` goes to the current session (agent/setThinkingLevel). */
async function settingsApply(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'settings';
  const c = api.controller;
  const config = vscode.workspace.getConfiguration('agentls');
  const before = c.thinkingLevel;
  await config.update('thinkingLevel', 'low', vscode.ConfigurationTarget.Global);
  try {
    await waitFor(api, () => c.thinkingLevel === 'low', 10_000, 'the thinking level setting').catch(() => undefined);
    const level = (await state(api)).thinkingLevel;
    rec.check(step, 'agentls.thinkingLevel applied to the session without a restart', level === 'low' && api.connection.running, level);
  } finally {
    await config.update('thinkingLevel', undefined, vscode.ConfigurationTarget.Global);
  }
  await c.setThinkingLevel(before);
  // Agent: Focus Panel (Ctrl+Alt+P) shows the panel
  await Promise.resolve(vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar')).catch(() => undefined);
  await vscode.commands.executeCommand('agentls.focusPanel');
  await waitFor(api, () => api.panel.visible, 10_000, 'the panel').catch(() => undefined);
  rec.check(step, 'Agent: Focus Panel shows the panel', api.panel.visible);
}

/**
 * Permission presets: the header's toggle names the session's preset; Shift+Tab in the prompt
 * box (the keybinding of Agent: Cycle Permission Preset) and a click on the toggle each go to
 * the next one (agent/setPermissionPreset), in the order of agent/getState; then back to Accept edits.
 */
async function presets(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'presets';
  const c = api.controller;
  const presetOf = async (): Promise<string | undefined> => (await state(api)).permissionPreset;
  rec.check(step, 'a new session starts in Accept edits', (await presetOf()) === 'acceptEdits' && c.permissionPreset === 'acceptEdits', c.permissionPreset);
  const order = c.permissionPresets.map((preset) => preset.id);
  rec.check(step, 'agent/getState lists the four presets in cycle order', order.join() === 'ask,acceptEdits,plan,bypass', order);
  const shown = await api.panel.renderedText();
  rec.check(step, "the header's toggle shows the preset's name", shown.includes('Accept edits'), shown.slice(0, 200));
  rec.ask({ waiting: 'key', key: 'Shift+Tab' });
  await waitFor(api, () => c.permissionPreset === 'plan', 10_000, 'Shift+Tab to switch to the next preset').catch(() => undefined);
  rec.check(step, 'Shift+Tab in the prompt box: the next preset, Read-only (agent/getState)', (await presetOf()) === 'plan', c.permissionPreset);
  rec.ask({ waiting: 'presetToggle', shows: 'Read-only' });
  await waitFor(api, () => c.permissionPreset === 'bypass', 10_000, 'the toggle to switch to the next preset').catch(() => undefined);
  rec.check(step, 'a click on the toggle: the next preset, Bypass permissions', (await presetOf()) === 'bypass', c.permissionPreset);
  await vscode.commands.executeCommand('agentls.cyclePermissionPreset');
  await waitFor(api, () => c.permissionPreset === 'ask', 10_000, 'Agent: Cycle Permission Preset').catch(() => undefined);
  rec.check(step, 'Agent: Cycle Permission Preset wraps around to Ask before edits', (await presetOf()) === 'ask', c.permissionPreset);
  await c.setPermissionPreset('acceptEdits');
  rec.check(step, 'back to Accept edits', (await presetOf()) === 'acceptEdits');
}

/** An API key in SecretStorage (Agent: Set API Key) reaches the server's environment when it starts
 * (its provider's models are listed), and not the environment of the shell commands it runs. */
async function apiKey(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'api-key';
  const c = api.controller;
  const restart = async (): Promise<void> => {
    await api.connection.stop();
    await api.connection.start();
    await waitFor(api, () => c.connected && c.sessionId !== undefined, 20_000, 'the session after the restart');
  };
  // A restarted server reads the faux script afresh when it loads the session: meanwhile the
  // script holds only what is left (the answer to the driver's last prompt), restored afterwards.
  const script = vscode.workspace.getConfiguration('agentls').get<string>('fauxScript', '');
  const mainScript = fs.readFileSync(script, 'utf8');
  const parsed = JSON.parse(mainScript) as { responses: unknown[] };
  fs.writeFileSync(script, JSON.stringify({ ...parsed, responses: parsed.responses.slice(-1) }));
  await api.setApiKey('OPENAI_API_KEY', API_KEY_VALUE);
  try {
    await restart();
    await c.bash('printenv OPENAI_API_KEY', true);
    await waitFor(api, () => c.bashId === undefined, 10_000, 'printenv').catch(() => undefined);
    const row = bashRow(api, 'printenv OPENAI_API_KEY');
    await c.refreshModels();
    const openai = c.models.filter((model) => model.provider === 'openai').map((model) => model.id);
    rec.check(step, 'the API key of SecretStorage is in the server environment (its models are listed)', openai.length > 0, c.models.length);
    rec.check(step, 'a shell command does not get the API key', row !== undefined && row.output.trim() === '' && row.exitCode === 1, row);
  } finally {
    await api.setApiKey('OPENAI_API_KEY', '');
    try {
      await restart();
    } finally {
      fs.writeFileSync(script, mainScript);
    }
  }
}

/**
 * Changes of settings the server reads at start: `restartWith` waits for the restart and the
 * session loaded again; `dispose` stops counting the starts.
 */
function settingRestarts(api: AgentExtension): { restartWith(name: string, value: unknown): Promise<void>; dispose(): void } {
  const c = api.controller;
  const config = vscode.workspace.getConfiguration('agentls');
  let starts = 0;
  const counting = api.connection.onRunning((running) => {
    if (running) starts += 1;
  });
  return {
    async restartWith(name: string, value: unknown): Promise<void> {
      const before = starts;
      await config.update(name, value, vscode.ConfigurationTarget.Global);
      await waitFor(api, () => starts > before && c.connected && c.sessionId !== undefined, 30_000, `the restart for agentls.${name}`);
    },
    dispose: () => counting.dispose(),
  };
}

/**
 * `agentls.demo` with no faux script: the server restarts with the bundled demo script, whose
 * model reads the workspace's README.md and answers; then the settings as they were and the
 * session of the other steps loaded again (the driver's checks after the self-test look at it).
 */
async function demo(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'demo';
  const c = api.controller;
  const config = vscode.workspace.getConfiguration('agentls');
  const script = config.get<string>('fauxScript', '');
  const previous = c.sessionId;
  const { restartWith, dispose: stopCounting } = settingRestarts(api);
  fs.writeFileSync(path.join(folder, 'README.md'), '# ws\n\nThe workspace of the agentls e2e test.\n');
  try {
    await restartWith('demo', true);
    await restartWith('fauxScript', '');
    await c.newSession();
    const model = modelOf(await state(api));
    rec.check(step, "the demo session's model is the faux one", model.startsWith('faux/'), model);
    const result = await c.prompt('What is this project?');
    const settled = await settledRun(api, result.runId, 30_000);
    rec.check(step, 'the demo run settled with stop', settled.stopReason === 'stop', settled);
    const read = rows(api).find((row) => row.kind === 'tool' && row.name === 'read');
    rec.check(step, "the demo's model read README.md with the real read tool", read?.kind === 'tool' && read.status === 'done' && read.output.includes('agentls e2e test'), read);
    rec.check(step, 'the demo answered', textRows(api).some((row) => row.text.startsWith('The README introduces **agentls**')), c.transcript.plainText().slice(-400));
  } finally {
    await restartWith('fauxScript', script);
    await restartWith('demo', undefined);
    stopCounting();
    fs.rmSync(path.join(folder, 'README.md'), { force: true });
    if (previous !== undefined) await c.loadSession(previous);
  }
}

async function writeNewFile(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'write-new-file';
  const c = api.controller;
  const target = path.join(folder, CREATED_FILE);
  rec.check(step, `${CREATED_FILE} does not exist yet`, !fs.existsSync(target));
  // A file created by a workspace edit (CreateFile) fires onDidCreateFiles; one written to disk
  // does not. The editor loads the new document, inserts the text, and saves it: VS Code itself
  // when no editor shows it (`files.refactoring.autoSave`, then the document is closed again),
  // else agent/saveDocuments.
  const created: string[] = [];
  let editorText: string | undefined;
  let saved = false;
  const mine = (document: vscode.TextDocument): boolean =>
    document.uri.scheme === 'file' && document.uri.fsPath === target;
  const watches = [
    vscode.workspace.onDidCreateFiles((event) => created.push(...event.files.map((uri) => uri.fsPath))),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (mine(event.document)) editorText = event.document.getText();
    }),
    vscode.workspace.onDidSaveTextDocument((document) => {
      if (mine(document)) saved = true;
    }),
  ];
  let settled: SettledNotification;
  try {
    const result = await c.prompt('Write created.txt.');
    settled = await settledRun(api, result.runId);
  } finally {
    for (const watch of watches) watch.dispose();
  }
  rec.check(step, 'run settled with stop', settled.stopReason === 'stop', settled);
  checkToolEnded(api, rec, step, 'write row done (new file)', 'call-write', 'done', '(new file)');
  rec.check(step, 'created through the editor (CreateFile in a workspace edit)', created.includes(target), created);
  rec.check(step, 'the editor document got the content', editorText === CREATED_TEXT, editorText);
  const open = vscode.workspace.textDocuments.find(mine);
  rec.check(step, 'the editor saved the new document', saved && (open === undefined || !open.isDirty), {
    saved,
    dirty: open?.isDirty,
  });
  rec.check(
    step,
    'disk holds the new file',
    fs.existsSync(target) && fs.readFileSync(target, 'utf8') === CREATED_TEXT,
  );
}

async function continueAfterError(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'continue';
  const c = api.controller;
  const result = await c.prompt('Answer, then fail.');
  // A follow-up queued while the run goes: a run that ends in an error leaves it queued.
  await streamingText(api, FAILING_START, 20);
  const itemId = await c.followUp(FOLLOW_UP);
  const failed = await settledRun(api, result.runId);
  rec.check(
    step,
    'run settled with error',
    failed.stopReason === 'error' && (failed.errorMessage ?? '').includes(MODEL_ERROR),
    failed,
  );
  const notice = rows(api).find(
    (row) => row.kind === 'notice' && row.level === 'error' && row.text.includes(MODEL_ERROR),
  );
  rec.check(step, 'transcript shows the error', notice !== undefined);
  const queued = c.queue.followUp.some((item) => item.id === itemId);
  rec.check(step, 'follow-up still queued after the error', queued, c.queue);
  rec.check(step, 'Continue offered', c.header().canContinue);
  // The driver clicks Continue in the panel: a new run delivers the follow-up and completes.
  const next = nextSettled(api);
  rec.ask({ waiting: 'continue' });
  await waitFor(api, () => next() !== undefined, 30_000, 'the run started by Continue to settle');
  const settled = next() as SettledNotification;
  rec.check(step, 'Continue started a run that settled with stop', settled.stopReason === 'stop', settled);
  const list = rows(api);
  const error = list.findIndex((row) => row === notice);
  const followUp = list.findIndex((row, i) => i > error && row.kind === 'user' && row.text === FOLLOW_UP);
  const answer = list.findIndex((row, i) => i > followUp && row.kind === 'text' && row.text === CONTINUED_ANSWER);
  rec.check(
    step,
    'follow-up delivered after the error, then answered',
    error >= 0 && followUp > error && answer > followUp,
    { error, followUp, answer },
  );
  rec.check(step, 'queue empty, nothing more to continue', c.queue.followUp.length === 0 && !c.header().canContinue);
}

async function state(api: AgentExtension): Promise<StateResult> {
  return api.connection.request<StateResult>('agent/getState', { sessionId: api.controller.sessionId });
}

const modelOf = (s: StateResult): string => (s.model ? `${s.model.provider}/${s.model.id}` : '');

async function pickers(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'pickers';
  const c = api.controller;
  const before = await state(api);
  rec.check(
    step,
    'session starts on the faux model, thinking off',
    modelOf(before) === FAUX_MODEL && before.thinkingLevel === 'off',
    { model: before.model, thinkingLevel: before.thinkingLevel },
  );
  rec.check(step, 'the session offers the faux model and the stand-in', [FAUX_MODEL, OTHER_MODEL].every((key) =>
    c.models.some((m) => `${m.provider}/${m.id}` === key),
  ));

  rec.ask({ waiting: 'pick', picker: 'panel-model', value: OTHER_MODEL });
  await waitFor(api, () => c.model === OTHER_MODEL, 30_000, 'the model picked in the panel');
  rec.check(step, 'panel model picker: agent/getState shows the model', modelOf(await state(api)) === OTHER_MODEL);

  rec.ask({ waiting: 'pick', picker: 'palette-model', value: FAUX_MODEL });
  await waitFor(api, () => c.model === FAUX_MODEL, 30_000, 'the model picked with Agent: Select Model');
  rec.check(step, 'Agent: Select Model: agent/getState shows the faux model', modelOf(await state(api)) === FAUX_MODEL);

  rec.ask({ waiting: 'pick', picker: 'panel-thinking', value: THINKING });
  await waitFor(api, () => c.thinkingLevel === THINKING, 30_000, 'the thinking level picked in the panel');
  const after = await state(api);
  const level = after.thinkingLevel;
  rec.check(step, 'panel thinking picker: agent/getState shows the level', level === THINKING, level);
}

async function contextFiles(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'context-files';
  const expected = fs.realpathSync(path.join(folder, CONTEXT_FILE));
  const files = api.controller.contextFiles;
  rec.check(step, 'agent/getState lists the workspace AGENTS.md', files.some((file) => fs.realpathSync(file) === expected), files);
  const shown = await api.panel.renderedText();
  rec.check(step, 'panel lists the context file', shown.includes(`Context: ${CONTEXT_FILE}`), shown.slice(0, 300));
}

function bashRow(api: AgentExtension, command: string): Extract<Row, { kind: 'bash' }> | undefined {
  return rows(api).findLast((row): row is Extract<Row, { kind: 'bash' }> => row.kind === 'bash' && row.command === command);
}

async function messages(api: AgentExtension): Promise<Message[]> {
  const sessionId = api.controller.sessionId;
  return (await api.connection.request<{ messages: Message[] }>('agent/getMessages', { sessionId })).messages;
}

async function userBash(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'user-bash';
  const c = api.controller;
  const runs = c.settled.length;
  // The driver types `!echo hi` into the panel: a command, not a prompt.
  rec.ask({ waiting: 'type', text: `!${ECHO.command}` });
  // Done once its message has ended and its agent/bashEnd has come.
  const ended = (command: string): boolean =>
    bashRow(api, command)?.status !== 'running' && c.lastRole === 'bashExecution' && !c.header().bashRunning;
  await waitFor(api, () => ended(ECHO.command), 30_000, `!${ECHO.command} to end`);
  const echo = bashRow(api, ECHO.command);
  rec.check(
    step,
    '!echo hi shows a bash row with its output',
    echo?.output === `${ECHO.output}\n` && echo.exitCode === 0 && !echo.excluded, // the final newline kept, as Pi's
    echo,
  );
  rec.check(step, 'the command started no run', c.status === 'idle' && c.settled.length === runs);
  const last = (await messages(api)).at(-1) as BashExecutionMessage | undefined;
  rec.check(
    step,
    'the transcript ends with its bashExecution message, for the model',
    last?.role === 'bashExecution' && last.command === ECHO.command && last.excludeFromContext !== true,
    last,
  );
  const shown = await api.panel.renderedText();
  rec.check(step, 'panel shows the command and how it ended', shown.includes(ECHO.command) && shown.includes('exit 0'));

  // `!!sleep 30`: not for the model; Escape in the prompt box stops it.
  rec.ask({ waiting: 'type', text: `!!${SLEEP}` });
  await waitFor(api, () => c.header().bashRunning && bashRow(api, SLEEP)?.status === 'running', 30_000, `!!${SLEEP} to run`);
  rec.check(step, 'the header says a command runs', c.header().bashRunning);
  await api.panel.renderedText(); // the panel has that header now
  rec.ask({ waiting: 'key', key: 'Escape' });
  await waitFor(api, () => ended(SLEEP), 30_000, `!!${SLEEP} to stop`);
  const stopped = bashRow(api, SLEEP);
  rec.check(
    step,
    'Escape in the prompt box stopped the command (agent/abortBash)',
    stopped?.status === 'cancelled' && stopped.exitCode === null,
    stopped,
  );
  rec.check(step, 'the !! row is marked as not sent to the model', stopped?.excluded === true);
  rec.check(step, 'no command running after the stop', !c.header().bashRunning);
  const after = await api.panel.renderedText();
  rec.check(step, 'panel says the command was not sent to the model', after.includes('not sent to the model'));
}

function compactionRows(api: AgentExtension): Extract<Row, { kind: 'compaction' }>[] {
  return rows(api).filter((row): row is Extract<Row, { kind: 'compaction' }> => row.kind === 'compaction');
}

async function compact(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'compact';
  const before = compactionRows(api).length;
  rec.ask({ waiting: 'compact', instructions: COMPACT_INSTRUCTIONS });
  const ended = (): boolean => compactionRows(api).length > before && compactionRows(api).at(-1)?.status !== 'running';
  await waitFor(api, ended, 60_000, 'the compaction started with Agent: Compact');
  const row = compactionRows(api).at(-1);
  rec.check(step, 'Agent: Compact shows a compaction row', row?.status === 'done' && row.reason === 'manual', row);
  rec.check(step, 'the compaction row holds the summary', row?.summary.startsWith(SUMMARY_START) === true, row?.summary);
  rec.check(
    step,
    'the compaction row has the tokens before and after',
    row !== undefined && row.tokensBefore > 0 && row.tokensAfter !== undefined && row.tokensAfter < row.tokensBefore,
    row && { before: row.tokensBefore, after: row.tokensAfter },
  );
  const last = (await messages(api)).at(-1) as CompactionSummaryMessage | undefined;
  rec.check(
    step,
    'the transcript ends with the compactionSummary',
    last?.role === 'compactionSummary' && last.summary === row?.summary,
    last,
  );
  const shown = await api.panel.renderedText();
  rec.check(
    step,
    'panel shows the compaction with its tokens, the summary folded',
    shown.includes('Compacted the context') && shown.includes('→') && !shown.includes(SUMMARY_START.split('\n')[1] ?? ''),
    shown.slice(-400),
  );
}

async function template(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'template';
  const c = api.controller;
  const commands = await c.listCommands();
  const greet = commands.find((command) => command.name === TEMPLATE.name);
  rec.check(
    step,
    'agent/listCommands lists the workspace template',
    greet?.kind === 'template' && greet.description === TEMPLATE.description && greet.argumentHint === TEMPLATE.argumentHint,
    commands,
  );
  const next = nextSettled(api);
  rec.ask({ waiting: 'complete', ...TEMPLATE });
  await waitFor(api, () => next() !== undefined, 30_000, `the run of /${TEMPLATE.name} ${TEMPLATE.args}`);
  rec.check(step, 'the /greet run settled with stop', next()?.stopReason === 'stop', next());
  const user = rows(api).findLast((row) => row.kind === 'user');
  rec.check(step, 'the prompt was the template expanded', user?.kind === 'user' && user.text === EXPANDED, user);
  rec.check(step, 'the model answered it', textRows(api).some((row) => row.text === GREETING));
}

function userRow(api: AgentExtension, text: string): Extract<Row, { kind: 'user' }> | undefined {
  return rows(api).findLast((row): row is Extract<Row, { kind: 'user' }> => row.kind === 'user' && row.text === text);
}

/** The `editorContext` message just before the user message `text` in `agent/getMessages`. */
async function contextMessage(api: AgentExtension, text: string): Promise<CustomTypeMessage | undefined> {
  const list = await messages(api);
  const index = list.findLastIndex((m) => m.role === 'user' && messageText((m as { content: unknown }).content) === text);
  const before = index > 0 ? list[index - 1] : undefined;
  return before?.role === 'custom' ? (before as CustomTypeMessage) : undefined;
}

function attachmentInfos(message: CustomTypeMessage | undefined): EditorContextAttachmentInfo[] {
  const list = (message?.details as { attachments?: unknown } | undefined)?.attachments;
  return Array.isArray(list) ? (list as EditorContextAttachmentInfo[]) : [];
}

async function editorContext(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'editor-context';
  const c = api.controller;
  const uri = vscode.Uri.file(path.join(folder, CALC));
  const document = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(document, { preview: false, preserveFocus: false });
  const [l1, c1] = SELECTED.start;
  const [l2, c2] = SELECTED.end;
  editor.selection = new vscode.Selection(l1, c1, l2, c2);
  await waitFor(api, () => c.suggestion?.label === SELECTED.label, 5000, 'the selection offered as a chip').catch(() => undefined);
  rec.check(step, 'the editor selection is offered as a chip', c.header().suggestion?.label === SELECTED.label, c.header().suggestion);
  // The driver presses Ctrl+Alt+A in the editor (Agent: Add Selection).
  rec.ask({ waiting: 'addSelection', label: SELECTED.label });
  await waitFor(api, () => c.attachments.some((chip) => chip.label === SELECTED.label), 20_000, 'Agent: Add Selection');
  const chip = c.attachments.find((a) => a.label === SELECTED.label);
  rec.check(
    step,
    'Ctrl+Alt+A adds the selection as a chip',
    chip?.attachment.type === 'selection' && chip.attachment.uri === uri.toString() &&
      chip.attachment.range.start.line === l1 && chip.attachment.range.end.character === c2,
    chip,
  );
  rec.check(step, 'the added selection is no longer offered', c.header().suggestion === undefined, c.header().suggestion);
  // The driver picks files from the `@` list (and removes one), then sends the prompt.
  const next = nextSettled(api);
  rec.ask({ waiting: 'attach', label: SELECTED.label, ...ATTACH, text: CONTEXT_PROMPT });
  await waitFor(api, () => next() !== undefined, 60_000, 'the run of the prompt with attachments');
  rec.check(step, 'the prompt with attachments settled with stop', next()?.stopReason === 'stop', next());
  rec.check(step, 'the chips left the prompt box once sent', c.header().attachments.length === 0, c.header().attachments);
  const message = await contextMessage(api, CONTEXT_PROMPT);
  const infos = attachmentInfos(message);
  rec.check(
    step,
    'the server put an editorContext message before the prompt',
    message?.customType === 'editorContext' && message.display === true,
    message,
  );
  rec.check(
    step,
    'its details list the selection (lines 4-5) and notes.txt, not the removed AGENTS.md',
    infos.length === 2 &&
      infos[0]?.type === 'selection' && infos[0].path === CALC && infos[0].startLine === 4 && infos[0].endLine === 5 &&
      infos[1]?.type === 'file' && infos[1].path === ATTACH.file,
    infos,
  );
  const content = messageText(message?.content);
  rec.check(step, 'the model got the selected text', content.includes(SELECTED.text) && content.includes('hello world'), content);
  const user = userRow(api, CONTEXT_PROMPT);
  rec.check(
    step,
    'the user message shows the attachments as chips',
    JSON.stringify(user?.context?.map((chip) => chip.label)) === JSON.stringify([SELECTED.label, ATTACH.file]),
    user,
  );
  rec.check(step, 'no separate editorContext row', !rows(api).some((row) => row.kind === 'custom'), rows(api).filter((r) => r.kind === 'custom'));
  rec.check(step, 'the model answered', textRows(api).some((row) => row.text === CONTEXT_ANSWER));
}

async function diagnostics(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'diagnostics';
  const c = api.controller;
  const uri = vscode.Uri.file(path.join(folder, BROKEN));
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
  await waitFor(api, () => vscode.languages.getDiagnostics(uri).length > 0, 30_000, `VS Code's diagnostics of ${BROKEN}`).catch(
    () => undefined,
  );
  const reported = vscode.languages.getDiagnostics(uri);
  const first = reported[0];
  rec.check(step, `VS Code reports a problem in ${BROKEN}`, first !== undefined, reported);
  // A diagnostics attachment, then the model calls the diagnostics tool: both ask agent/getDiagnostics.
  c.addAttachment({
    attachment: { type: 'diagnostics', uri: uri.toString() },
    label: `${BROKEN}: problems`,
    title: `The problems of ${BROKEN}`,
  });
  const next = nextSettled(api);
  await c.submit(DIAGNOSTICS_PROMPT, 'steer');
  await waitFor(api, () => next() !== undefined, 60_000, 'the run that calls the diagnostics tool');
  rec.check(step, 'the run settled with stop', next()?.stopReason === 'stop', next());
  const infos = attachmentInfos(await contextMessage(api, DIAGNOSTICS_PROMPT));
  rec.check(
    step,
    'the diagnostics attachment counted the problems VS Code reports',
    infos.length === 1 && infos[0]?.type === 'diagnostics' && infos[0].count === reported.length,
    { infos, reported: reported.length },
  );
  const user = userRow(api, DIAGNOSTICS_PROMPT);
  const problems = `${reported.length} ${reported.length === 1 ? 'problem' : 'problems'}`;
  rec.check(step, 'the user message shows the problems chip', user?.context?.[0]?.label === problems, user);
  const tool = toolRow(api, 'call-diagnostics');
  const line = first ? `${BROKEN}:${first.range.start.line + 1}:${first.range.start.character + 1}: error: ` : '?';
  rec.check(
    step,
    'the diagnostics tool result has the error VS Code reports',
    tool?.status === 'done' && first !== undefined && tool.output.includes(line) &&
      tool.output.includes(first.message.split('\n')[0] ?? ''),
    { tool, line, message: first?.message },
  );
  rec.check(step, 'the model answered', textRows(api).some((row) => row.text === DIAGNOSTICS_ANSWER));
  const shown = await api.panel.renderedText();
  rec.check(
    step,
    'panel shows the chips of both messages',
    shown.includes(SELECTED.label) && shown.includes(ATTACH.file) && shown.includes(problems),
    shown.slice(-600),
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
  const texts = [
    FIRST_ANSWER,
    'Make it short.',
    STEERED_ANSWER,
    BASH_OUTPUT,
    REJECTION,
    SECOND_ANSWER,
    CONTINUED_ANSWER,
    `$ ${ECHO.command} [exit 0] ${ECHO.output}`,
    `$ ${SLEEP} [cancelled, not sent to the model]`,
    EXPANDED,
    `> ${CONTEXT_PROMPT} [${SELECTED.label}, ${ATTACH.file}]`,
    DIAGNOSTICS_ANSWER,
  ];
  for (const text of texts) {
    rec.check(step, `loaded transcript has "${text}"`, loaded.includes(text) && live.includes(text));
  }
  const rejected = toolRow(api, 'call-bash-reject');
  rec.check(step, 'loaded rejected bash row is an error', rejected?.status === 'error', rejected);
  // The compaction comes after the commands it summarised and before the template's prompt.
  const list = rows(api);
  const compaction = compactionRows(api).at(-1);
  const order = [bashRow(api, SLEEP), compaction, list.find((row) => row.kind === 'user' && row.text === EXPANDED)];
  const at = order.map((row) => (row ? list.indexOf(row) : -1));
  rec.check(
    step,
    'loaded transcript has the compaction in its place, with its summary',
    compaction?.summary.startsWith(SUMMARY_START) === true && at.every((i, n) => i >= 0 && (n === 0 || i > (at[n - 1] ?? 0))),
    { compaction, at },
  );
  rec.check(step, 'loaded session keeps the thinking level', c.thinkingLevel === THINKING, c.thinkingLevel);
  const notice = rows(api).filter((row) => row.kind === 'notice').at(-1);
  rec.check(
    step,
    'the "Loaded" notice names the session by its title',
    mine?.title !== undefined && notice?.kind === 'notice' && notice.text.startsWith(`Loaded "${mine.title}" (`),
    { notice, title: mine?.title },
  );
}

/** The title of a stored session (`agent/listSessions`). */
async function sessionTitleOf(api: AgentExtension, sessionId: string | undefined): Promise<string | undefined> {
  return (await api.controller.listSessions()).find((s) => s.sessionId === sessionId)?.title;
}

/** Copy buttons, a highlighted code block, a tool row's path, Edit on a user message, the history's Open. */
async function panelActions(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'panel actions';
  const c = api.controller;
  // 1. Copy the message, then its code block: the extension puts the text on the clipboard.
  const copied = async (what: 'message' | 'code', expected: string): Promise<void> => {
    api.panel.lastCopied = undefined;
    rec.ask({ waiting: 'copy', what, hasText: 'A valid version' });
    await waitFor(api, () => api.panel.lastCopied !== undefined, 20_000, `the ${what} copied`).catch(() => undefined);
    const clipboard = await vscode.env.clipboard.readText();
    const last = (api.panel as { lastCopied?: { text: string; what: string } }).lastCopied;
    rec.check(step, `Copy (${what}) sent the ${what}'s text`, last?.what === what && last.text === expected, last);
    rec.check(step, `Copy (${what}) put it on the clipboard`, clipboard === expected, clipboard);
  };
  await copied('message', DIAGNOSTICS_ANSWER);
  await copied('code', DIAGNOSTICS_CODE);
  // 2. The path of the write row opens created.txt in the editor.
  await vscode.window.showTextDocument(vscode.Uri.file(path.join(folder, CALC)), { preview: false });
  const created = path.join(folder, CREATED_FILE);
  rec.ask({ waiting: 'openPath', path: CREATED_FILE });
  const opened = (): boolean => vscode.window.activeTextEditor?.document.uri.fsPath === created;
  await waitFor(api, opened, 20_000, `${CREATED_FILE} opened`).catch(() => undefined);
  rec.check(step, 'the write row\'s path opened the file in the editor', opened(), vscode.window.activeTextEditor?.document.uri.fsPath);
  // 3. Edit puts a user message back in the prompt box (the driver checks the box), then
  // 4. the history lists the session by its title and opens it (agent/loadSession).
  const title = await sessionTitleOf(api, c.sessionId);
  rec.ask({ waiting: 'editMessage', text: DIAGNOSTICS_PROMPT });
  c.transcript.addNotice('before the history opens the session');
  rec.ask({ waiting: 'history', action: 'open', title: title ?? '?' });
  const reloaded = (): boolean =>
    !rows(api).some((row) => row.kind === 'notice' && row.text === 'before the history opens the session') &&
    rows(api).some((row) => row.kind === 'notice' && row.text.startsWith(`Loaded "${title}"`));
  await waitFor(api, reloaded, 30_000, 'the session opened from the history').catch(() => undefined);
  rec.check(step, 'the history\'s Open loaded the session, named by its title', reloaded(), rows(api).filter((r) => r.kind === 'notice'));
  rec.check(step, 'the session opened from the history has its transcript', textRows(api).some((row) => row.text === DIAGNOSTICS_ANSWER));
}

/** The history's Rename, then its Delete, confirmed in the modal: the review session is renamed (agent/renameSession), then deleted (agent/deleteSession). */
async function deleteFromHistory(api: AgentExtension, rec: Recorder, sessionId: string | undefined): Promise<void> {
  const step = 'panel actions';
  const c = api.controller;
  let title = await sessionTitleOf(api, sessionId);
  rec.check(step, 'the review session is stored, with a title', sessionId !== undefined && title !== undefined, { sessionId, title });
  if (sessionId === undefined || title === undefined) return;
  const current = c.sessionId;
  // Rename it first (agent/renameSession): agent/listSessions then gives the name as its title.
  const name = 'Renamed from the history';
  rec.ask({ waiting: 'history', action: 'rename', title, name });
  let renamed: string | undefined;
  for (const end = Date.now() + 30_000; Date.now() < end && renamed !== name; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    renamed = await sessionTitleOf(api, sessionId);
  }
  rec.check(step, 'the history\'s Rename renamed the session (agent/listSessions has the name)', renamed === name, renamed);
  if (renamed === name) title = name;
  rec.ask({ waiting: 'history', action: 'delete', title });
  let gone = false;
  for (const end = Date.now() + 30_000; Date.now() < end && !gone; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    gone = !(await c.listSessions()).some((s) => s.sessionId === sessionId);
  }
  rec.check(step, 'the history\'s Delete (confirmed) deleted the session', gone);
  rec.check(step, 'deleting another session keeps the current one', c.sessionId === current, c.sessionId);
}

function reviewTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === 'agentls-review');
}

/** Prompt; the model's edit of review.txt waits for review: check the review and its diff editor. */
async function promptForReview(
  api: AgentExtension,
  rec: Recorder,
  step: string,
  text: string,
  toolCallId: string,
  expected: { oldText: string; newText: string },
): Promise<string | undefined> {
  const c = api.controller;
  const book = api.reviews.book;
  const result = await c.prompt(text);
  await waitFor(api, () => book.size > 0, 30_000, 'the review of the edit');
  const review = book.oldest();
  rec.check(
    step,
    'agent/reviewEdit asks about the edit with the old and the new text',
    review?.params.toolName === 'edit' && review.params.toolCallId === toolCallId && review.params.path === REVIEWED &&
      review.params.oldText === expected.oldText && review.params.newText === expected.newText,
    review?.params,
  );
  await waitFor(api, () => reviewTabs().length > 0, 10_000, 'the diff editor').catch(() => undefined);
  const [tab] = reviewTabs();
  rec.check(step, 'the diff editor opens, titled by the file', tab?.label === REVIEW_TITLE, tab?.label);
  const input = tab?.input instanceof vscode.TabInputTextDiff ? tab.input : undefined;
  const sides = input
    ? await Promise.all([input.original, input.modified].map(async (uri) => (await vscode.workspace.openTextDocument(uri)).getText()))
    : [];
  rec.check(step, 'its sides are the old and the new text', sides[0] === expected.oldText && sides[1] === expected.newText, sides);
  rec.check(step, 'the status says waiting for review', c.status === 'review', c.status);
  rec.check(step, 'the edit row waits for review', toolRow(api, toolCallId)?.status === 'review', toolRow(api, toolCallId));
  const shown = await api.panel.renderedText();
  rec.check(step, 'the panel lists the change waiting for review', shown.includes('Waiting for review') && shown.includes(REVIEWED), shown.slice(-300));
  return result.runId;
}

/**
 * A new session whose model is `script` (next to the main faux script): the server reads the
 * faux script when it creates a session, so the self-test puts that one in place of
 * faux-script.json meanwhile (the main session keeps its own).
 */
async function newSessionWith(
  api: AgentExtension,
  script: string,
  options: { permissions?: Record<string, string> } = {},
): Promise<string> {
  const main = vscode.workspace.getConfiguration('agentls').get<string>('fauxScript', '');
  const mainScript = fs.readFileSync(main, 'utf8');
  fs.writeFileSync(main, fs.readFileSync(path.join(path.dirname(main), script), 'utf8'));
  try {
    return await api.controller.newSession(options);
  } finally {
    fs.writeFileSync(main, mainScript);
  }
}

async function review(api: AgentExtension, rec: Recorder, folder: string): Promise<string | undefined> {
  const step = 'review';
  const c = api.controller;
  const main = c.sessionId;
  const target = path.join(folder, REVIEWED);
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(target));
  await vscode.window.showTextDocument(document, { preview: false });
  fs.writeFileSync(path.join(folder, HUNKS.file), HUNKS.text);
  // A session whose write and edit wait for review (the `permissions` of agent/newSession).
  await newSessionWith(api, 'faux-review.json', { permissions: { edit: 'review', write: 'review' } });

  // 1. Accept: the change lands in the buffer and on disk.
  const accepted = { oldText: DRAFT, newText: ACCEPTED };
  const acceptRun = await promptForReview(api, rec, step, 'Mark review.txt as accepted.', 'call-review-accept', accepted);
  rec.check(step, 'nothing written while the review waits', document.getText() === DRAFT && fs.readFileSync(target, 'utf8') === DRAFT);
  rec.ask({ waiting: 'review', action: 'accept', title: REVIEW_TITLE, path: REVIEWED });
  const first = await settledRun(api, acceptRun, 60_000);
  rec.check(step, 'the accepted run settled with stop', first.stopReason === 'stop', first);
  const acceptRow = toolRow(api, 'call-review-accept');
  rec.check(step, 'the accepted edit row is done', acceptRow?.status === 'done', acceptRow);
  rec.check(step, 'Accept: the change landed in the buffer', document.getText() === ACCEPTED, document.getText());
  rec.check(step, 'Accept: and on disk', fs.readFileSync(target, 'utf8') === ACCEPTED, fs.readFileSync(target, 'utf8'));
  rec.check(step, 'the diff editor closed once accepted', reviewTabs().length === 0, reviewTabs().map((t) => t.label));

  // 2. Reject with a reason: the tool result has it, nothing is written.
  const rejected = { oldText: ACCEPTED, newText: 'status: rejected\n' };
  const rejectRun = await promptForReview(api, rec, step, 'Mark review.txt as rejected.', 'call-review-reject', rejected);
  rec.ask({ waiting: 'review', action: 'reject', title: REVIEW_TITLE, path: REVIEWED, reason: REJECT_REASON });
  const second = await settledRun(api, rejectRun, 60_000);
  rec.check(step, 'the rejected run settled with stop', second.stopReason === 'stop', second);
  checkToolEnded(api, rec, step, 'Reject: the tool result has the reason', 'call-review-reject', 'error', REVIEW_REJECTION);
  rec.check(
    step,
    'Reject: the file is unchanged',
    document.getText() === ACCEPTED && fs.readFileSync(target, 'utf8') === ACCEPTED,
    document.getText(),
  );
  rec.check(step, 'the diff editor closed once rejected', reviewTabs().length === 0, reviewTabs().map((t) => t.label));

  // 3. Hunk by hunk: an edit of two hunks, the second rejected with its CodeLens: only the first lands.
  const book = api.reviews.book;
  const hunksFile = path.join(folder, HUNKS.file);
  const hunksRun = (await c.prompt('Change two lines of hunks.txt.')).runId;
  await waitFor(api, () => book.size > 0, 30_000, 'the review of the two-hunk edit');
  const hunkReview = book.oldest();
  rec.check(step, 'Hunks: agent/reviewEdit carries the two hunks', hunkReview?.params.hunks?.length === 2, hunkReview?.params.hunks);
  if (hunkReview) {
    const right = api.reviews.uri(hunkReview.id, 'proposed');
    await waitFor(api, () => reviewTabs().length > 0, 10_000, 'the diff editor').catch(() => undefined);
    await vscode.workspace.openTextDocument(right);
    const titles = async (): Promise<string[]> =>
      ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', right)) ?? []).map(
        (lens) => `${lens.range.start.line}:${lens.command?.title ?? ''}`,
      );
    const before = await titles();
    rec.check(
      step,
      'Hunks: the right side has an Accept/Reject CodeLens per hunk',
      JSON.stringify(before) === JSON.stringify(['1:Hunk 1 of 2: accepted', '1:$(close) Reject hunk', '18:Hunk 2 of 2: accepted', '18:$(close) Reject hunk']),
      before,
    );
    await vscode.commands.executeCommand('agentls.rejectHunk', hunkReview.id, 1);
    const after = await titles();
    rec.check(
      step,
      'Hunks: Reject hunk marks the second hunk rejected',
      after.includes('18:Hunk 2 of 2: rejected') && after.includes('18:$(check) Accept hunk') && after.includes('1:Hunk 1 of 2: accepted'),
      after,
    );
    await vscode.commands.executeCommand('agentls.acceptChange', hunkReview.id);
  }
  await settledRun(api, hunksRun, 60_000);
  const landed = fs.readFileSync(hunksFile, 'utf8');
  rec.check(step, 'Hunks: only the accepted hunk landed', landed === HUNKS.text.replace('line 2\n', 'LINE 2\n'), landed);
  checkToolEnded(api, rec, step, 'Hunks: the tool result says which hunk was rejected', 'call-review-hunks', 'done', 'rejected hunk 2 (@@');

  // 4. The right side edited before Accept: the user's text lands.
  const editedRun = (await c.prompt('Change line 10 of hunks.txt.')).runId;
  await waitFor(api, () => book.size > 0, 30_000, 'the review of the line 10 edit');
  const editReview = book.oldest();
  const mine = landed.replace('line 10\n', "line 10, the user's way\n");
  if (editReview) {
    await waitFor(api, () => reviewTabs().length > 0, 10_000, 'the diff editor').catch(() => undefined);
    const right = await vscode.workspace.openTextDocument(api.reviews.uri(editReview.id, 'proposed'));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(right.uri, new vscode.Range(0, 0, right.lineCount, 0), mine);
    const applied = await vscode.workspace.applyEdit(edit);
    rec.check(step, 'Edited: the right side took the edit', applied && right.getText() === mine, right.getText());
    await vscode.commands.executeCommand('agentls.acceptChange', editReview.id);
  }
  await settledRun(api, editedRun, 60_000);
  const editedText = fs.readFileSync(hunksFile, 'utf8');
  rec.check(step, 'Edited: the right side is editable, and its text landed', editedText === mine, editedText);
  checkToolEnded(api, rec, step, 'Edited: the tool result says the user edited the change', 'call-review-edited', 'done', 'edited the change to hunks.txt');
  rec.check(step, 'the diff editors closed', reviewTabs().length === 0, reviewTabs().map((t) => t.label));

  // 5. An abort cancels the review (the server's $/cancelRequest): the diff closes, nothing is written.
  const abortRun = await promptForReview(api, rec, step, 'Mark review.txt as aborted.', 'call-review-abort', {
    oldText: ACCEPTED,
    newText: 'status: aborted\n',
  });
  await c.abort();
  const third = await settledRun(api, abortRun, 30_000);
  rec.check(step, 'the aborted run settled as aborted', third.stopReason === 'aborted', third);
  await waitFor(api, () => api.reviews.book.size === 0 && reviewTabs().length === 0, 10_000, 'the cancelled review').catch(
    () => undefined,
  );
  rec.check(
    step,
    'Abort: the review was cancelled and its diff closed',
    api.reviews.book.size === 0 && reviewTabs().length === 0,
    { pending: api.reviews.book.size, tabs: reviewTabs().map((t) => t.label) },
  );
  rec.check(step, 'Abort: the file is unchanged', document.getText() === ACCEPTED && fs.readFileSync(target, 'utf8') === ACCEPTED);
  rec.check(step, 'no review left in the panel', c.header().reviews.length === 0, c.header().reviews);
  // Back to the main session (the driver's last checks read its transcript).
  const reviewSession = c.sessionId;
  if (main !== undefined) await c.loadSession(main);
  return reviewSession;
}

function changeTabs(): vscode.TabInputTextDiff[] {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .map((tab) => tab.input)
    .filter((input): input is vscode.TabInputTextDiff => input instanceof vscode.TabInputTextDiff && input.modified.scheme === 'agentls-change');
}

/**
 * The Changes view: a run whose bash edits (two hunks), removes, renames and creates files;
 * the view lists each as bash's, a file opens its diff, Revert Hunk takes back one hunk of
 * two, Revert File puts a deleted file back and undoes the rename (the view's commands).
 */
async function changesView(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'changes';
  const c = api.controller;
  const view = api.changes;
  const main = c.sessionId;
  const file = (name: string): string => path.join(folder, name);
  fs.mkdirSync(file('chg'), { recursive: true });
  fs.writeFileSync(file(CHG.twoHunks), CHG.lines);
  fs.writeFileSync(file(CHG.gone), CHG.goneText);
  fs.writeFileSync(file(CHG.oldName), CHG.renamedText);
  await newSessionWith(api, CHG.script, { permissions: { bash: 'allow' } });
  await vscode.commands.executeCommand('agentls.showChanges');
  const result = await c.prompt('Change the files of chg/.');
  await settledRun(api, result.runId, 60_000);
  // agent/settled refreshes the view (the last run's changes, its default)
  await waitFor(api, () => view.files().length === 4, 10_000, 'the Changes view after the run').catch(() => undefined);
  rec.check(step, 'Changes: the view refreshed itself when the run settled', view.files().length === 4 && view.scope === 'run', view.view.message);
  const listed = view.files().map((n) => `${n.file.path} ${n.file.status}${n.file.oldPath ? ` from ${n.file.oldPath}` : ''} ${n.file.by.join(',')}`);
  rec.check(
    step,
    'Changes: the last run lists each file with its status and by bash',
    JSON.stringify(listed) ===
      JSON.stringify([
        `${CHG.created} added bash`,
        `${CHG.gone} deleted bash`,
        `${CHG.newName} renamed from ${CHG.oldName} bash`,
        `${CHG.twoHunks} modified bash`,
      ]),
    { listed, message: view.view.message },
  );
  const twoHunks = view.files().find((n) => n.file.path === CHG.twoHunks);
  rec.check(step, 'Changes: the two-hunk file has two hunk items', twoHunks?.hunks.length === 2 && view.getChildren(twoHunks).length === 2, twoHunks?.hunks.map((h) => h.label));
  if (!twoHunks) return;

  // A click on the file: its diff editor, the old text left, the new right.
  await vscode.commands.executeCommand(view.getTreeItem(twoHunks).command?.command ?? '', twoHunks);
  await waitFor(api, () => changeTabs().length > 0, 10_000, 'the diff of the change').catch(() => undefined);
  const [diff] = changeTabs();
  const sides = diff ? await Promise.all([diff.original, diff.modified].map(async (uri) => (await vscode.workspace.openTextDocument(uri)).getText())) : [];
  const changed = CHG.lines.replace('line 2\n', 'LINE 2\n').replace('line 19\n', 'LINE 19\n');
  rec.check(step, 'Changes: a file opens a diff editor of its old and new text', sides[0] === CHG.lines && sides[1] === changed, sides);

  // Revert Hunk on the second hunk: line 19 is back, line 2 stays the agent's.
  const second = twoHunks.hunks[1];
  await vscode.commands.executeCommand('agentls.revertHunk', second);
  const afterHunk = fs.readFileSync(file(CHG.twoHunks), 'utf8');
  rec.check(step, 'Changes: Revert Hunk reverted only that hunk', afterHunk === CHG.lines.replace('line 2\n', 'LINE 2\n'), afterHunk);
  const left = view.files().find((n) => n.file.path === CHG.twoHunks);
  rec.check(step, 'Changes: the view lists the file with one hunk left', left?.hunks.length === 1 && left.hunks[0]?.label.startsWith('@@ -1,') === true, left?.hunks.map((h) => h.label));

  // Revert File: the deleted file comes back, the renamed one goes back to its old name.
  const gone = view.files().find((n) => n.file.path === CHG.gone);
  await vscode.commands.executeCommand('agentls.revertFile', gone);
  rec.check(
    step,
    'Changes: Revert File put the deleted file back',
    fs.existsSync(file(CHG.gone)) && fs.readFileSync(file(CHG.gone), 'utf8') === CHG.goneText,
    fs.existsSync(file(CHG.gone)),
  );
  const renamed = view.files().find((n) => n.file.path === CHG.newName);
  await vscode.commands.executeCommand('agentls.revertFile', renamed);
  rec.check(
    step,
    'Changes: Revert File undid the rename',
    !fs.existsSync(file(CHG.newName)) && fs.existsSync(file(CHG.oldName)) && fs.readFileSync(file(CHG.oldName), 'utf8') === CHG.renamedText,
    { newName: fs.existsSync(file(CHG.newName)), oldName: fs.existsSync(file(CHG.oldName)) },
  );

  // The whole session: what is left (the created file, one hunk of two-hunks.txt), with the user's reverts among who changed it.
  await view.setScope('session');
  const session = view.files().map((n) => `${n.file.path} ${n.file.status} ${n.hunks.length}`);
  rec.check(
    step,
    'Changes: the whole session lists what is left',
    JSON.stringify(session) === JSON.stringify([`${CHG.created} added 1`, `${CHG.twoHunks} modified 1`]),
    session,
  );

  // A revert that meets a file changed since (by hand): the modal, "Revert anyway" reverts the other file only.
  fs.writeFileSync(file(CHG.created), 'changed by someone else\n');
  rec.ask({ waiting: 'revertAnyway', file: CHG.created, listed: CHG.created });
  const forced = await view.revert({ files: [CHG.created, CHG.twoHunks] });
  rec.check(
    step,
    'Changes: Revert anyway reverted the other file and skipped the changed one',
    forced?.skipped.some((f) => f.path === CHG.created) === true &&
      forced.reverted.some((r) => r.path === CHG.twoHunks) &&
      fs.readFileSync(file(CHG.created), 'utf8') === 'changed by someone else\n' &&
      fs.readFileSync(file(CHG.twoHunks), 'utf8') === CHG.lines,
    forced,
  );
  await view.setScope('run');
  await vscode.window.tabGroups.close(vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'agentls-change'));
  if (main !== undefined) await c.loadSession(main);
}

function lastNotice(api: AgentExtension, prefix: string): string | undefined {
  return rows(api).findLast((row): row is Extract<Row, { kind: 'notice' }> => row.kind === 'notice' && row.text.startsWith(prefix))?.text;
}

/**
 * Ask the driver for a rewind or a branch switch, then wait until the transcript was drawn
 * again with the notice that says what happened (it starts with `prefix`); that notice.
 */
async function askAndMove(api: AgentExtension, rec: Recorder, waiting: Waiting, prefix: string): Promise<string> {
  const resets = api.controller.transcript.resets;
  rec.ask(waiting);
  const moved = (): boolean => api.controller.transcript.resets > resets && lastNotice(api, prefix) !== undefined;
  await waitFor(api, moved, 60_000, `"${prefix}" after ${JSON.stringify(waiting)}`);
  return lastNotice(api, prefix) ?? '';
}

/** The text of a message's content as the server sends it: a string, or text blocks. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  const blocks = Array.isArray(content) ? (content as { type?: string; text?: string }[]) : [];
  return blocks.flatMap((block) => (block?.type === 'text' && block.text !== undefined ? [block.text] : [])).join('\n');
}

/** The messages as `role: text` lines, to compare transcripts. */
function lines(list: readonly Message[]): string[] {
  return list.map((m) => `${m.role}: ${messageText((m as { content?: unknown }).content)}`);
}

/**
 * Rewind to here, Fork from here and the branch picker, in a session whose model edits
 * rewind-open.txt (open in an editor) and rewind-closed.txt (never opened) and creates
 * rewind-new.txt.
 */
async function rewindAndFork(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'rewind';
  const c = api.controller;
  const main = c.sessionId;
  const file = (name: string): string => path.join(folder, name);
  const disk = (name: string): string | undefined => (fs.existsSync(file(name)) ? fs.readFileSync(file(name), 'utf8') : undefined);
  const files = (): Record<string, string | undefined> => ({
    editor: document.getText(),
    open: disk(REWIND.open),
    closed: disk(REWIND.closed),
    created: disk(REWIND.created),
  });
  fs.writeFileSync(file(REWIND.open), REWIND.user.open);
  fs.writeFileSync(file(REWIND.closed), REWIND.user.closed);
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file(REWIND.open)));
  await vscode.window.showTextDocument(document, { preview: false });
  const session = await newSessionWith(api, REWIND.script);
  await settledRun(api, (await c.prompt(REWIND.first)).runId);
  const run = await settledRun(api, (await c.prompt(REWIND.change)).runId);
  rec.check(step, 'the run that changes the files settled with stop', run.stopReason === 'stop', run);
  const agentLeft = (): boolean => {
    const f = files();
    return f.editor === REWIND.agent.open && f.open === REWIND.agent.open && f.closed === REWIND.agent.closed && f.created === REWIND.agent.created;
  };
  rec.check(step, 'the agent edited the open file and the closed one, and created the third', agentLeft(), files());
  const changedFiles = (await c.tree()).entries.flatMap((entry) => entry.files ?? []);
  rec.check(
    step,
    'agent/getTree lists the files the run changed',
    [REWIND.open, REWIND.closed, REWIND.created].every((name) => changedFiles.includes(name)),
    changedFiles,
  );

  // 1. Rewind to here, with the files: the driver clicks Rewind on the message and keeps the choices.
  const rewound = await askAndMove(api, rec, { waiting: 'rewind', text: REWIND.change }, 'Rewound');
  rec.check(
    step,
    'Rewind: the notice says which files were put back',
    rewound.includes(REWIND.open) && rewound.includes(REWIND.closed) && rewound.includes(`deleted ${REWIND.created}`),
    rewound,
  );
  const reverted = files();
  rec.check(step, 'Rewind: the open file is reverted in the editor and on disk', reverted.editor === REWIND.user.open && reverted.open === REWIND.user.open, reverted);
  rec.check(step, 'Rewind: the open document is saved', !document.isDirty);
  rec.check(step, 'Rewind: the file not open is reverted on disk', reverted.closed === REWIND.user.closed, reverted);
  rec.check(step, 'Rewind: the created file is gone', reverted.created === undefined, reverted);
  const users = (): string[] => rows(api).flatMap((row) => (row.kind === 'user' ? [row.text] : []));
  rec.check(
    step,
    'Rewind: the transcript ends before the message',
    JSON.stringify(users()) === JSON.stringify([REWIND.first]) && textRows(api).some((row) => row.text === REWIND.hello) &&
      !textRows(api).some((row) => row.text === REWIND.changed),
    c.transcript.plainText(),
  );
  rec.check(step, 'the header offers the branches (two)', c.header().branches === 2, c.header().branches);
  // The editor's undo brings the agent's version back; redo puts the reverted text back. First
  // the panel has put the message back in its prompt box (which takes the focus), so that the
  // undo goes to the editor: a pause for Rewind to hand the text over, then a round trip to the panel.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await api.panel.renderedText().catch(() => undefined);
  await vscode.window.showTextDocument(document, { preview: false, preserveFocus: false });
  await vscode.commands.executeCommand('undo');
  await waitFor(api, () => document.getText() === REWIND.agent.open, 5000, 'undo').catch(() => undefined);
  rec.check(step, "Undo in the editor brings the agent's version back", document.getText() === REWIND.agent.open, document.getText());
  await vscode.commands.executeCommand('redo');
  await waitFor(api, () => document.getText() === REWIND.user.open, 5000, 'redo').catch(() => undefined);
  if (document.isDirty) await document.save();
  rec.check(step, 'Redo puts the reverted text back', document.getText() === REWIND.user.open && disk(REWIND.open) === REWIND.user.open);

  // 2. The text is back in the prompt box (the driver checked): Enter sends it again, from there.
  const sentAgain = nextSettled(api);
  rec.ask({ waiting: 'key', key: 'Enter' });
  await waitFor(api, () => sentAgain() !== undefined, 30_000, 'the prompt sent again to settle');
  const goneOn = await messages(api);
  rec.check(
    step,
    'the next prompt continues from before the rewound message',
    JSON.stringify(lines(goneOn)) ===
      JSON.stringify([`user: ${REWIND.first}`, `assistant: ${REWIND.hello}`, `user: ${REWIND.change}`, `assistant: ${REWIND.again}`]),
    lines(goneOn),
  );
  rec.check(step, 'the files stay reverted', disk(REWIND.closed) === REWIND.user.closed && disk(REWIND.created) === undefined, files());

  // 3. Fork from here (the message sent again): a new session with what came before it.
  rec.ask({ waiting: 'fork', text: REWIND.change });
  await waitFor(api, () => c.sessionId !== session && lastNotice(api, 'Forked') !== undefined, 30_000, 'the forked session');
  const forked = await messages(api);
  rec.check(
    step,
    'Fork: a new session with the conversation before the message',
    c.sessionId !== session && JSON.stringify(lines(forked)) === JSON.stringify([`user: ${REWIND.first}`, `assistant: ${REWIND.hello}`]),
    { sessionId: c.sessionId, messages: lines(forked) },
  );
  const original = await api.connection.request<MessagesResult>('agent/getMessages', { sessionId: session });
  rec.check(step, 'Fork leaves the original transcript as it was', JSON.stringify(original.messages) === JSON.stringify(goneOn), lines(original.messages));

  // 4. Back in the session, the header's branch picker goes to the branch left behind, files too.
  await c.loadSession(session);
  rec.check(step, 'the loaded session counts two branches', c.header().branches === 2, c.header().branches);
  const switched = await askAndMove(api, rec, { waiting: 'branch', hasText: REWIND.changed, files: true }, 'Switched branch');
  rec.check(
    step,
    'Switch Branch: the transcript is the branch left behind',
    textRows(api).some((row) => row.text === REWIND.changed) && !textRows(api).some((row) => row.text === REWIND.again),
    c.transcript.plainText(),
  );
  rec.check(step, "Switch Branch with the files: the agent's changes are there again", agentLeft(), { notice: switched, files: files() });

  // 5. Someone changes the closed file: Rewind names it; "Revert the others" reverts the rest.
  fs.writeFileSync(file(REWIND.closed), REWIND.someone);
  const forced = await askAndMove(api, rec, { waiting: 'rewind', text: REWIND.change, conflict: REWIND.closed, clear: true }, 'Rewound');
  const after = files();
  rec.check(
    step,
    'Rewind with a conflict: the others reverted, the changed file left as it is',
    forced.includes(`Skipped: ${REWIND.closed}`) && after.editor === REWIND.user.open && after.created === undefined &&
      after.closed === REWIND.someone,
    { notice: forced, files: after },
  );
  await editQueue(api, rec);
  if (main !== undefined) await c.loadSession(main);
}

/** Follow-ups queued while a permission question holds the run: one edited in place, the other moved before it. */
async function editQueue(api: AgentExtension, rec: Recorder): Promise<void> {
  const step = 'queue';
  const c = api.controller;
  const result = await c.prompt(QUEUE.prompt);
  await waitFor(api, () => c.openQuestions.includes(QUEUE.toolCallId), 15_000, 'the question that holds the run');
  await c.followUp(QUEUE.first);
  await c.followUp(QUEUE.second);
  const texts = (lists: QueueLists | QueueState): string[] => lists.followUp.map((item) => item.text);
  await waitFor(api, () => texts(c.queue).length === 2, 5000, 'the two follow-ups');
  rec.ask({ waiting: 'queue', edit: QUEUE.first, text: QUEUE.edited, up: QUEUE.second });
  const expected = JSON.stringify([QUEUE.second, QUEUE.edited]);
  await waitFor(api, () => JSON.stringify(texts(c.queue)) === expected, 30_000, 'the queue edited and moved').catch(() => undefined);
  const queued = await api.connection.request<QueueLists>('agent/getQueue', { sessionId: c.sessionId });
  rec.check(
    step,
    'a follow-up edited in place (agent/editQueueItem), the other moved before it (agent/moveQueueItem)',
    JSON.stringify(texts(queued)) === expected,
    queued,
  );
  const shown = await api.panel.renderedText();
  const at = [QUEUE.second, QUEUE.edited].map((text) => shown.indexOf(text));
  rec.check(
    step,
    'the panel shows the edited follow-up after the one moved up',
    at.every((i, n) => i >= 0 && (n === 0 || i > (at[n - 1] ?? 0))) && !shown.includes(QUEUE.first),
    shown.slice(-300),
  );
  await c.abort();
  const settled = await settledRun(api, result.runId);
  rec.check(step, 'the run held by the question settled as aborted', settled.stopReason === 'aborted', settled);
  await api.connection.request('agent/clearQueue', { sessionId: c.sessionId, kind: 'all' });
}

/**
 * MCP: a session of the workspace whose `.mcp.json` names the quirky server. The trust
 * question (a modal naming the file and the command) answered Trust; the server ready in the
 * panel's MCP menu with its tools; the model's call of `mcp__quirky__echo` asks with the
 * fourth answer (every tool of quirky), which the driver clicks, and its result shows on the
 * `quirky · echo` row; Restart in the menu restarts it; Agent: MCP Servers lists it and opens
 * its log.
 */
async function mcp(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'mcp';
  const source = process.env[SELFTEST_MCP_ENV];
  if (!source) {
    rec.check(step, 'the driver gave a .mcp.json', false, `set ${SELFTEST_MCP_ENV}`);
    return;
  }
  const c = api.controller;
  const main = c.sessionId;
  const config = JSON.parse(fs.readFileSync(source, 'utf8')) as { mcpServers: Record<string, { args?: string[] }> };
  const file = path.join(folder, '.mcp.json');
  fs.copyFileSync(source, file);
  const statuses: string[] = [];
  const watch = api.connection.onNotification((note) => {
    if (note.method === 'agent/mcpStatus' && note.params.name === MCP.server) statuses.push(note.params.status);
  });
  const quirky = (): McpServerInfo | undefined => c.mcpServers.find((server) => server.name === MCP.server);
  try {
    await newSessionWith(api, MCP.script);
    rec.check(step, 'the session lists the server of .mcp.json, not trusted yet', quirky()?.status === 'needsTrust', c.mcpServers);
    const script = config.mcpServers[MCP.server]?.args?.[0] ?? '';
    rec.ask({ waiting: 'trust', file, command: path.basename(script) });
    await waitFor(api, () => quirky()?.status === 'ready', 60_000, 'the trusted server to be ready').catch(() => undefined);
    const ready = quirky();
    rec.check(step, 'Trust: the server starts and is ready with its tools', ready?.status === 'ready' && ready.tools.includes(MCP.tool), ready);
    rec.check(step, 'agent/mcpStatus told starting, then ready', statuses.includes('starting') && statuses.at(-1) === 'ready', statuses);
    const rules = await permissionRules(api, folder);
    rec.check(step, 'the trust is remembered (mcp:trust:quirky:HASH)', rules.some((r) => r.toolName.startsWith(`mcp:trust:${MCP.server}:`)), rules);
    const header = c.header();
    rec.check(step, 'the header offers the MCP menu: MCP 1/1, the server ready with echo', header.mcpButton.text === 'MCP 1/1' &&
      header.mcp.some((view) => view.name === MCP.server && view.status === 'ready' && view.tools.includes('echo')), header.mcp);
    rec.ask({ waiting: 'mcpMenu', server: MCP.server, tools: ['echo'], button: 'MCP 1/1' });

    // The model calls the MCP tool: its question has the fourth answer, every tool of quirky.
    const result = await c.prompt(MCP.prompt);
    await waitFor(api, () => c.openQuestions.includes(MCP.toolCallId), 30_000, 'the MCP tool\'s question').catch(() => undefined);
    const asking = toolRow(api, MCP.toolCallId);
    const question = asking?.question ?? [];
    rec.check(step, 'the MCP tool\'s question offers Allow once, Allow always, every tool of the server, Reject',
      JSON.stringify(question.map((q) => q.id)) === JSON.stringify(['allowOnce', 'allowAlways', 'allowAlwaysServer', 'reject']), question);
    const every = question.find((q) => q.id === 'allowAlwaysServer')?.label ?? 'Allow always: every tool of quirky';
    rec.check(step, 'its label names the server', every.includes(MCP.server), every);
    const shownQuestion = await api.panel.renderedText();
    rec.check(step, 'the panel shows the row as "quirky · echo" with the question', shownQuestion.includes(MCP.label) && shownQuestion.includes(every), shownQuestion.slice(-400));
    rec.ask({ waiting: 'permission', answer: every, ui: 'inline', options: question.map((q) => q.label) });
    const settled = await settledRun(api, result.runId, 60_000).catch(() => undefined);
    rec.check(step, 'the run with the MCP call settled with stop', settled?.stopReason === 'stop', settled);
    const done = toolRow(api, MCP.toolCallId);
    rec.check(step, 'the MCP tool ran and its result is in the transcript', done?.status === 'done' && done.name === MCP.tool && done.output.includes(MCP.output), done);
    rec.check(step, 'the model answered after the MCP call', textRows(api).some((row) => row.text === MCP.answer));
    const after = await permissionRules(api, folder);
    rec.check(step, 'allow always for the server is remembered as mcp__quirky__*', after.some((r) => r.toolName === `mcp__${MCP.server}__*`), after);
    const shown = await api.panel.renderedText();
    rec.check(step, 'the panel shows the MCP call with its result', shown.includes(MCP.label) && shown.includes(MCP.output) && shown.includes(MCP.answer), shown.slice(-400));

    // Restart from the panel's menu: starting again, then ready.
    statuses.length = 0;
    rec.ask({ waiting: 'mcpRestart', server: MCP.server });
    const restarted = (): boolean => statuses.some((status) => status !== 'ready') && quirky()?.status === 'ready' && statuses.at(-1) === 'ready';
    await waitFor(api, restarted, 60_000, 'the restarted server').catch(() => undefined);
    rec.check(step, 'Restart in the MCP menu: the server started again and is ready', restarted(), { statuses, server: quirky() });
    const log = c.mcpLogFile(MCP.server);
    rec.check(step, 'its log file is found (mcp-logs/quirky.log)', log !== undefined && log.endsWith(path.join('mcp-logs', `${MCP.server}.log`)), log);

    // Agent: MCP Servers in the palette: listed, picked, Open Log.
    const logOpen = (): boolean =>
      vscode.window.visibleTextEditors.some((editor) => editor.document.uri.fsPath.endsWith(path.join('mcp-logs', `${MCP.server}.log`)));
    rec.ask({ waiting: 'mcpPalette', server: MCP.server, tools: ['echo'] });
    await waitFor(api, logOpen, 30_000, 'the log opened from Agent: MCP Servers').catch(() => undefined);
    rec.check(step, 'Agent: MCP Servers opened the server\'s log', logOpen());
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  } finally {
    watch.dispose();
    fs.rmSync(file, { force: true });
  }
  if (main !== undefined) await c.loadSession(main);
}

/**
 * The sandbox and the budget, set by the settings (`agentls.sandbox.mode: workspace-write`,
 * `agentls.budget.maxTurns: 2`: the server restarts with them as initialization options).
 * (a) A new session: `agent/getState` reports the sandbox (enforced where the kernel can,
 * else refused with its reason), and the header's badge shows what it says (the driver
 * checks the DOM, screenshot). Where it is enforced, a `bash` call that writes beside the
 * workspace is denied and the question to run it once OUTSIDE the sandbox comes on its row;
 * the driver clicks that answer and the command ran (its result says so). (b) A session whose
 * model would go on for four turns: after two the budget's card asks; the driver answers Stop
 * in the panel; the run settles with `budget`, the transcript has the notice and the header the
 * spend (screenshot). Then the settings as they were, and the main session again.
 */
async function sandboxAndBudget(api: AgentExtension, rec: Recorder, folder: string): Promise<void> {
  const step = 'sandbox-budget';
  const c = api.controller;
  const main = c.sessionId;
  const outside = path.join(path.dirname(folder), SAFETY.outside);
  fs.rmSync(outside, { force: true });
  const { restartWith, dispose: stopCounting } = settingRestarts(api);
  try {
    await restartWith('sandbox.mode', 'workspace-write');
    await restartWith('budget.maxTurns', 2);

    // (a) the sandbox in force, as agent/getState says and the badge shows
    await newSessionWith(api, SAFETY.sandboxScript, { permissions: { bash: 'allow' } });
    const { sandbox, budget } = await state(api);
    rec.check(step, 'agent/getState reports the workspace-write sandbox of the setting, enforced or refused', sandbox?.mode === 'workspace-write' &&
      (sandbox.status === 'enforced' || sandbox.status === 'refused'), sandbox);
    rec.check(step, "agent/getState reports the setting's budget: 2 turns a run", budget?.limits.maxTurns === 2, budget);
    const enforced = sandbox?.status === 'enforced';
    const expected = enforced ? 'sandbox: workspace-write · no network' : 'sandbox refused: workspace-write';
    const badge = c.header().sandbox;
    rec.check(step, 'the header badge shows the sandbox agent/getState reports', badge?.text === expected && badge.status === sandbox?.status &&
      (enforced || (sandbox?.reason !== undefined && badge.title.includes(sandbox.reason))), { badge, sandbox });
    await rec.askAndWait(api, { waiting: 'sandboxBadge', text: expected, status: sandbox?.status ?? 'none', ...(sandbox?.reason ? { reason: sandbox.reason } : {}) });

    // the escalation: denied in the sandbox, asked, run once outside
    const result = await c.prompt(SAFETY.sandboxPrompt);
    if (enforced) {
      await waitFor(api, () => c.openQuestions.includes(SAFETY.sandboxCall), 30_000, "the sandbox's question").catch(() => undefined);
      const row = toolRow(api, SAFETY.sandboxCall);
      rec.check(step, "the sandbox's question is on the bash row: the command, what was denied, the server's answers",
        row?.questionDetail?.kind === 'sandbox' && row.questionDetail.command.includes(SAFETY.outside) &&
          (row.questionDetail.denied ?? '').includes('Permission denied') &&
          JSON.stringify(row.question?.map((q) => q.id)) === '["runUnsandboxed","reject"]', row);
      rec.check(step, 'the denied command wrote nothing outside', !fs.existsSync(outside));
      rec.ask({ waiting: 'sandboxQuestion', command: SAFETY.outside, answer: SAFETY.runOutside, options: [SAFETY.runOutside, SAFETY.keepFailure] });
    }
    const ran = await settledRun(api, result.runId, 60_000).catch(() => undefined);
    const done = toolRow(api, SAFETY.sandboxCall);
    if (enforced) {
      rec.check(step, 'Run once outside the sandbox: the command ran unconfined, and its result says so',
        ran?.stopReason === 'stop' && done?.status === 'done' && done.output.includes(SAFETY.unsandboxedNote) &&
          fs.existsSync(outside) && fs.readFileSync(outside, 'utf8').trim() === SAFETY.outsideText, { ran, done });
    } else {
      rec.check(step, 'the refused sandbox ran no command: the call ends as an error saying why',
        done?.status === 'error' && done.output.includes('The command was not run') && !fs.existsSync(outside), done);
    }

    // (b) the budget: after two turns the card asks; Stop
    await newSessionWith(api, SAFETY.budgetScript);
    const run = await c.prompt(SAFETY.budgetPrompt);
    const runId = run.runId ?? '';
    await waitFor(api, () => c.openQuestions.includes(runId), 30_000, "the budget's question").catch(() => undefined);
    const card = rows(api).find((row): row is Extract<Row, { kind: 'budget' }> => row.kind === 'budget' && row.runId === runId);
    rec.check(step, "the budget's question is a card in the transcript with the server's answers",
      JSON.stringify(card?.question?.map((q) => q.label)) === JSON.stringify([SAFETY.raise, SAFETY.stop]) &&
        card?.detail === 'Limit: 2 turns (this run) · used: 2 turns', card);
    rec.check(step, 'the status says waiting for permission while the card asks', c.status === 'permission', c.status);
    rec.ask({ waiting: 'budgetQuestion', title: card?.title ?? '', detail: card?.detail ?? '', answer: SAFETY.stop, options: [SAFETY.raise, SAFETY.stop] });
    const stopped = await settledRun(api, run.runId, 60_000).catch(() => undefined);
    rec.check(step, 'Stop: the run settled with the budget that stopped it (agent/settled)',
      JSON.stringify(stopped?.budget) === JSON.stringify({ kind: 'maxTurns', scope: 'run', limit: 2, used: 2 }), stopped);
    rec.check(step, 'no third turn ran', !textRows(api).some((row) => row.text.startsWith('Turn three')), c.transcript.plainText().slice(-400));
    rec.check(step, 'the transcript has the notice of the budget', lastNotice(api, SAFETY.notice) !== undefined, c.transcript.plainText().slice(-400));
    await waitFor(api, () => c.header().budget?.text === SAFETY.spend, 10_000, 'the spend in the header').catch(() => undefined);
    rec.check(step, 'the header shows the spend against the budget, reached', c.header().budget?.text === SAFETY.spend && c.header().budget?.reached === true,
      c.header().budget);
    await rec.askAndWait(api, { waiting: 'budgetStopped', spend: SAFETY.spend, notice: SAFETY.notice });

    // Agent: Set Budget…: the input boxes, one refused value, then new limits
    rec.ask({ waiting: 'setBudget', prefilled: ['', '2', ''], invalid: 'ten', values: ['1.50', '5', ''] });
    const set = (): boolean => c.budget?.limits.maxTurns === 5 && c.budget.limits.maxCostUsd === 1.5;
    await waitFor(api, set, 30_000, 'Agent: Set Budget').catch(() => undefined);
    const after = (await state(api)).budget;
    rec.check(step, 'Agent: Set Budget… changed the limits (agent/setBudget)',
      after?.limits.maxCostUsd === 1.5 && after.limits.maxTurns === 5 && after.limits.maxTokens === undefined, after);
    rec.check(step, 'the header shows the spend against the new limits', c.header().budget?.text === SAFETY.newSpend, c.header().budget);
  } finally {
    await restartWith('budget.maxTurns', undefined);
    await restartWith('sandbox.mode', undefined);
    stopCounting();
    fs.rmSync(outside, { force: true });
    if (main !== undefined) await c.loadSession(main);
  }
}

/** Leave no "allow always" rule behind, even when a step failed half way. */
async function revokeRules(api: AgentExtension, folder: string): Promise<void> {
  for (const rule of await permissionRules(api, folder)) {
    await api.connection.request('agent/revokePermissionRule', rule);
  }
}

export async function runSelfTest(api: AgentExtension, resultFile: string): Promise<void> {
  const rec = new Recorder(resultFile);
  const started = Date.now();
  rec.write({ event: 'activated', vscode: vscode.version });
  let folder: string | undefined;
  try {
    await api.started;
    rec.write({ event: 'server started', command: api.connection.command });
    const workspace = vscode.workspace.workspaceFolders?.[0];
    if (!workspace) throw new Error('no workspace folder open');
    folder = workspace.uri.fsPath;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(workspace.uri, NOTES));
    await vscode.window.showTextDocument(document, { preview: false });
    rec.check('setup', 'notes.txt open with its text', document.getText() === BEFORE, document.getText());
    await api.panel.reveal(false);
    await waitFor(api, () => api.panel.visible, 20_000, 'the panel');
    await api.controller.ensureSession();
    rec.check('setup', 'session created', api.controller.sessionId !== undefined);
    await contextFiles(api, rec, folder);
    await promptAndEdit(api, rec, document);
    await undoEdit(api, rec, document);
    await steer(api, rec);
    await abort(api, rec);
    await permission(api, rec);
    await reject(api, rec, folder);
    await allowAlways(api, rec, folder);
    await cancelQuestion(api, rec, folder);
    await writeNewFile(api, rec, folder);
    await continueAfterError(api, rec);
    await settingsApply(api, rec);
    await presets(api, rec);
    await pickers(api, rec);
    await userBash(api, rec);
    await compact(api, rec);
    await template(api, rec);
    await editorContext(api, rec, folder);
    await diagnostics(api, rec, folder);
    await reload(api, rec);
    await panelActions(api, rec, folder);
    const reviewSession = await review(api, rec, folder);
    await deleteFromHistory(api, rec, reviewSession);
    await changesView(api, rec, folder);
    await rewindAndFork(api, rec, folder);
    await mcp(api, rec, folder);
    await sandboxAndBudget(api, rec, folder);
    // before the API key step: its restarts leave the faux script where the driver's prompt needs it
    await demo(api, rec, folder);
    await apiKey(api, rec);
  } catch (error) {
    rec.check('error', 'no exception', false, error instanceof Error ? error.stack : String(error));
  }
  if (folder !== undefined) fs.rmSync(path.join(folder, '.mcp.json'), { force: true });
  if (folder !== undefined) await revokeRules(api, folder).catch(() => undefined);
  await api.panel.reveal(false).catch(() => undefined);
  rec.write({
    done: true,
    passed: rec.passed,
    failed: rec.failed,
    ms: Date.now() - started,
    transcript: api.controller.transcript.plainText(),
  });
}
