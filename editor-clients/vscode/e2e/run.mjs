// The end-to-end test in real VS Code: code-server + headless Chromium (playwright-core).
//
// It installs the .vsix into a fresh code-server profile, and beside it the test extension
// (e2e/extension, its own .vsix), opens a workspace holding notes.txt, and loads the
// workbench in Chromium, which starts the extension host. The test extension runs the
// self-test (AGENTLS_VSCODE_SELFTEST, e2e/extension/src/selftest.ts) through the API that
// agentls's activate() returns, against the real agentls server on the faux model, and
// writes one JSON line per check. When the
// self-test needs a person (it writes `{"waiting": ...}`), this driver acts in the page:
// it answers permission dialogs (Allow once, Reject, Allow always), clicks the panel's
// Continue button, uses the model and thinking-level pickers of the panel and
// "Agent: Select Model" in the command palette, types `!cmd` commands into the panel's
// prompt box (and Escape to stop one), runs "Agent: Compact" with instructions, and picks
// the workspace's prompt template from the `/` completion list, presses Ctrl+Alt+A (Agent:
// Add Selection) in the editor, and attaches files from the panel's `@` list (removing one
// chip again) before sending a prompt with them, clicks "Rewind to here" and "Fork from here" on
// user messages (keeping the rewind's choices, answering its file conflict with "Revert the
// others") and picks a branch with the header's Branches button; for MCP it answers the trust
// question of a .mcp.json (naming tests/mcp/servers/quirky.py) with Trust, checks the server
// ready in the panel's MCP menu, allows its echo tool for every tool of the server, clicks
// Restart in the menu, and opens the server's log from "Agent: MCP Servers". It asserts the checks,
// then types a prompt into the panel and checks that the streamed answer shows in the
// panel's DOM and on screen (pixels), and saves screenshots. Last, the live-session step: in a
// second workspace under the per-user server (agentls.server.perUser, on the test's own socket
// and data folder), a slow run goes on while the driver reloads the window (Developer: Reload
// Window); the panel reattaches to it (e2e/extension/src/live.ts checks both halves) and shows
// the whole run; the driver then stops that server by its pid.
//
// Environment: AGENTLS_SERVER (the agentls executable), CODE_SERVER, VSIX, E2E_VSIX (the
// test extension's .vsix: `npm run package:e2e -- -o FILE` makes it), CHROMIUM
// (default /usr/bin/chromium), E2E_WORK (scratch folder), E2E_ARTIFACTS (screenshots,
// logs), E2E_TIMEOUT_MS (default 180000).

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { distinctColours } from './png.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};
const AGENTLS = env('AGENTLS_SERVER');
const CODE_SERVER = env('CODE_SERVER');
const VSIX = env('VSIX');
const E2E_VSIX = env('E2E_VSIX');
const CHROMIUM = env('CHROMIUM', '/usr/bin/chromium');
const WORK = env('E2E_WORK');
const ARTIFACTS = env('E2E_ARTIFACTS', path.join(WORK, 'artifacts'));
const TIMEOUT_MS = Number(env('E2E_TIMEOUT_MS', '180000'));
const UI_PROMPT = 'Hello from the browser';
const UI_ANSWER =
  'Hello from the faux model, typed into the panel in the browser. This answer is long enough to be seen while it ' +
  'streams: the panel shows each piece as it arrives, with a cursor at the end, until the message ends.';
/** Checks the self-test must have reported (and passed). */
const REQUIRED = [
  'answer streamed in pieces',
  'edit tool row done with its result',
  'open editor shows the edit',
  'undo restores the text',
  'panel shows the streamed answer',
  'steering delivered after the story, then answered',
  'run settled as aborted',
  'bash ran after "Allow once"',
  'the question shows on the bash row in the panel',
  'the modal asks, not the row',
  'the setting change did not restart the server',
  'the panel shows the question with its answers',
  'Abort: the inline question left the row',
  'agentls.thinkingLevel applied to the session without a restart',
  'Agent: Focus Panel shows the panel',
  'the API key of SecretStorage is in the server environment (its models are listed)',
  'a shell command does not get the API key',
  'Abort: the panel shows no question',
  'Abort: the cancelled command did not run',
  'bash row ends as an error with the rejection',
  'the rejected command did not run',
  'bash ran after "Allow always"',
  'agent/listPermissionRules lists the bash rule',
  'second bash call ran without a permission question',
  'agent/revokePermissionRule revoked the rule',
  'created through the editor (CreateFile in a workspace edit)',
  'disk holds the new file',
  'Continue started a run that settled with stop',
  'follow-up delivered after the error, then answered',
  'panel model picker: agent/getState shows the model',
  'Agent: Select Model: agent/getState shows the faux model',
  'panel thinking picker: agent/getState shows the level',
  'agent/getState lists the workspace AGENTS.md',
  'panel lists the context file',
  '!echo hi shows a bash row with its output',
  'the transcript ends with its bashExecution message, for the model',
  'Escape in the prompt box stopped the command (agent/abortBash)',
  'the !! row is marked as not sent to the model',
  'Agent: Compact shows a compaction row',
  'the compaction row has the tokens before and after',
  'panel shows the compaction with its tokens, the summary folded',
  'agent/listCommands lists the workspace template',
  'the prompt was the template expanded',
  'loaded transcript has the compaction in its place, with its summary',
  'the editor selection is offered as a chip',
  'Ctrl+Alt+A adds the selection as a chip',
  'the server put an editorContext message before the prompt',
  'its details list the selection (lines 4-5) and notes.txt, not the removed AGENTS.md',
  'the model got the selected text',
  'the user message shows the attachments as chips',
  'the chips left the prompt box once sent',
  'VS Code reports a problem in broken.json',
  'the diagnostics attachment counted the problems VS Code reports',
  'the diagnostics tool result has the error VS Code reports',
  'panel shows the chips of both messages',
  'agent/reviewEdit asks about the edit with the old and the new text',
  'the diff editor opens, titled by the file',
  'its sides are the old and the new text',
  'Accept: the change landed in the buffer',
  'Accept: and on disk',
  'the diff editor closed once accepted',
  'Reject: the tool result has the reason',
  'Reject: the file is unchanged',
  'the diff editor closed once rejected',
  'Hunks: the right side has an Accept/Reject CodeLens per hunk',
  'Hunks: Reject hunk marks the second hunk rejected',
  'Hunks: only the accepted hunk landed',
  'Hunks: the tool result says which hunk was rejected',
  'Edited: the right side is editable, and its text landed',
  'Edited: the tool result says the user edited the change',
  'Abort: the review was cancelled and its diff closed',
  'Abort: the file is unchanged',
  'Changes: the last run lists each file with its status and by bash',
  'Changes: a file opens a diff editor of its old and new text',
  'Changes: the two-hunk file has two hunk items',
  'Changes: Revert Hunk reverted only that hunk',
  'Changes: the view lists the file with one hunk left',
  'Changes: Revert File put the deleted file back',
  'Changes: Revert File undid the rename',
  'Changes: the whole session lists what is left',
  'Changes: the view refreshed itself when the run settled',
  'Changes: Revert anyway reverted the other file and skipped the changed one',
  'Rewind: the open file is reverted in the editor and on disk',
  'Rewind: the file not open is reverted on disk',
  'Rewind: the created file is gone',
  "Undo in the editor brings the agent's version back",
  'the next prompt continues from before the rewound message',
  'Fork leaves the original transcript as it was',
  "Switch Branch with the files: the agent's changes are there again",
  'Rewind with a conflict: the others reverted, the changed file left as it is',
  'a follow-up edited in place (agent/editQueueItem), the other moved before it (agent/moveQueueItem)',
  'the panel shows the edited follow-up after the one moved up',
  'the session lists the server of .mcp.json, not trusted yet',
  'Trust: the server starts and is ready with its tools',
  'the trust is remembered (mcp:trust:quirky:HASH)',
  'the header offers the MCP menu: MCP 1/1, the server ready with echo',
  "the MCP tool's question offers Allow once, Allow always, every tool of the server, Reject",
  'the panel shows the row as "quirky · echo" with the question',
  'the MCP tool ran and its result is in the transcript',
  'allow always for the server is remembered as mcp__quirky__*',
  'the panel shows the MCP call with its result',
  'Restart in the MCP menu: the server started again and is ready',
  "Agent: MCP Servers opened the server's log",
  'agent/getState reports the workspace-write sandbox of the setting, enforced or refused',
  "agent/getState reports the setting's budget: 2 turns a run",
  'the header badge shows the sandbox agent/getState reports',
  "the budget's question is a card in the transcript with the server's answers",
  'Stop: the run settled with the budget that stopped it (agent/settled)',
  'no third turn ran',
  'the transcript has the notice of the budget',
  'the header shows the spend against the budget, reached',
  'Agent: Set Budget… changed the limits (agent/setBudget)',
  'the header shows the spend against the new limits',
];
/**
 * The live-session step (issue 27): a workspace of its own whose settings turn on the per-user
 * server on the test's own socket and data folder (never a user's server); e2e/extension/src/live.ts
 * writes its checks to LIVE_RESULTS, before and after the window reload the driver does.
 */
const LIVE_WS = path.join(WORK, 'ws-live');
const LIVE_RESULTS = path.join(WORK, 'live.jsonl');
const LIVE_SOCKET = path.join(WORK, 'live', 'serve.sock');
const LIVE_PART_ONE = 'Part one, before the reload: a slow check first.';
const LIVE_PART_TWO_END = 'The end of the slow answer.';
/** Checks the live step must have reported (and passed). */
const LIVE_REQUIRED = [
  'agentls.server.perUser starts the bridge: serve --idle-exit 30 --attach --listen unix:SOCKET',
  'the first answer is in the panel, the slow command running',
  'the panel shows the session of the window before the reload',
  'the run goes on: the panel shows it busy',
  'the text from before the reload is there',
  'the run ends with agent/settled, stopReason stop',
  'the whole second answer is there once, from its start to its end',
  "the slow command's row is done with its output",
  'no gap was reported',
  "the panel's answers are those of agent/getMessages, in order",
];
/** The permission answers the self-test asks the driver for, in order (the last: every tool of the MCP server). */
const ANSWERS = ['Allow once (inline)', 'Reject (modal)', 'Allow always (inline)', /^Allow always.*quirky \(inline\)$/];
/** The MCP server of the MCP step: the repository's quirky test server, run by the .venv's Python. */
const QUIRKY = path.resolve(here, '..', '..', '..', 'tests', 'mcp', 'servers', 'quirky.py');
/** A second provider in the data folder's models.json, so that the model pickers have a choice (never called). */
const MODELS_JSON = {
  providers: {
    'e2e-local': {
      api: 'openai-completions',
      baseUrl: 'http://127.0.0.1:9/v1',
      models: [{ id: 'stand-in', name: 'Stand-in (never called)' }],
    },
  },
};

const t0 = Date.now();
const results = [];
const log = (...parts) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...parts);
const check = (name, ok, detail) => {
  results.push({ name, ok });
  log(`${ok ? 'ok  ' : 'FAIL'} ${name}${!ok && detail !== undefined ? `: ${JSON.stringify(detail).slice(0, 800)}` : ''}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function prepare() {
  fs.rmSync(WORK, { recursive: true, force: true });
  for (const dir of ['ws', 'ext', 'user/User', 'data']) fs.mkdirSync(path.join(WORK, dir), { recursive: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // the files the agent edits, the prompt attaches (calc.py) and the editor reports problems in (broken.json)
  for (const file of ['notes.txt', 'calc.py', 'broken.json', 'review.txt']) {
    fs.copyFileSync(path.join(here, 'fixture', file), path.join(WORK, 'ws', file));
  }
  // project instructions and a prompt template, where the server looks for them
  fs.copyFileSync(path.join(here, 'fixture', 'AGENTS.md'), path.join(WORK, 'ws', 'AGENTS.md'));
  fs.mkdirSync(path.join(WORK, 'ws', '.agentls', 'prompts'), { recursive: true });
  fs.copyFileSync(path.join(here, 'fixture', 'greet.md'), path.join(WORK, 'ws', '.agentls', 'prompts', 'greet.md'));
  const script = path.join(WORK, 'faux-script.json');
  fs.copyFileSync(path.join(here, 'fixture', 'faux-script.json'), script);
  // the review step's model: the self-test swaps it in while it creates that session
  fs.copyFileSync(path.join(here, 'fixture', 'faux-review.json'), path.join(WORK, 'faux-review.json'));
  // the rewind step's model, swapped in the same way
  fs.copyFileSync(path.join(here, 'fixture', 'faux-rewind.json'), path.join(WORK, 'faux-rewind.json'));
  // the Changes step's model (a bash call that edits, removes, renames and creates files), swapped in the same way
  fs.copyFileSync(path.join(here, 'fixture', 'faux-changes.json'), path.join(WORK, 'faux-changes.json'));
  // the MCP step's model (a call of the quirky server's echo tool), swapped in the same way
  fs.copyFileSync(path.join(here, 'fixture', 'faux-mcp.json'), path.join(WORK, 'faux-mcp.json'));
  // the sandbox and budget step's models (a bash call the sandbox denies; four turns, two allowed), swapped in the same way
  for (const file of ['faux-sandbox.json', 'faux-budget.json']) fs.copyFileSync(path.join(here, 'fixture', file), path.join(WORK, file));
  const settings = {
    'agentls.serverCommand': AGENTLS,
    'agentls.fauxScript': script,
    'agentls.dataDir': path.join(WORK, 'data'),
    // keep only the newest message when compacting, so that the short e2e session has something to summarise;
    // the workspace's AGENTS.md and prompt template load unasked (the MCP step answers the trust question)
    'agentls.initializationOptions': { compaction: { keepRecentTokens: 1 }, projectTrust: 'always' },
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'chat.disableAIFeatures': true,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'files.autoSave': 'off',
    'editor.fontSize': 14,
  };
  fs.writeFileSync(path.join(WORK, 'user', 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  fs.writeFileSync(path.join(WORK, 'code-server.yaml'), 'auth: none\ncert: false\n');
  fs.writeFileSync(path.join(WORK, 'data', 'models.json'), JSON.stringify(MODELS_JSON, null, 2));
  // the .mcp.json of the MCP step (outside the workspace: the self-test puts it in place then)
  if (!fs.existsSync(QUIRKY)) throw new Error(`the MCP test server ${QUIRKY} is missing`);
  const python = path.join(path.dirname(AGENTLS), 'python');
  const mcpJson = { mcpServers: { quirky: { command: python, args: [QUIRKY, '--stderr-noise'] } } };
  fs.writeFileSync(path.join(WORK, 'mcp.json'), JSON.stringify(mcpJson, null, 2));
  // the live step's workspace: the per-user server on the test's socket, data folder and slow faux script
  fs.mkdirSync(path.join(LIVE_WS, '.vscode'), { recursive: true });
  fs.copyFileSync(path.join(here, 'fixture', 'faux-live.json'), path.join(WORK, 'faux-live.json'));
  const liveData = path.join(WORK, 'data-live');
  fs.mkdirSync(liveData, { recursive: true });
  const liveSettings = {
    'agentls.server.perUser': true,
    'agentls.server.socket': LIVE_SOCKET,
    // the bridge passes --idle-exit to the server it starts: it stops by itself too, 30 s after the test
    'agentls.serverArgs': ['serve', '--idle-exit', '30'],
    'agentls.serverEnv': { AGENTLS_DATA_DIR: liveData },
    'agentls.dataDir': liveData,
    'agentls.fauxScript': path.join(WORK, 'faux-live.json'),
    'agentls.demo': false,
    'agentls.model': 'faux/faux-1',
    'agentls.permissions': { bash: 'allow' },
  };
  fs.writeFileSync(path.join(LIVE_WS, '.vscode', 'settings.json'), JSON.stringify(liveSettings, null, 2));
  fs.writeFileSync(path.join(LIVE_WS, '.agentls-e2e-live.json'), JSON.stringify({ results: LIVE_RESULTS, socket: LIVE_SOCKET }));
}

/** Install the extension, then the test extension that depends on it. */
function install() {
  for (const vsix of [VSIX, E2E_VSIX]) {
    const run = spawnSync(
      CODE_SERVER,
      ['--config', path.join(WORK, 'code-server.yaml'), '--extensions-dir', path.join(WORK, 'ext'),
        '--user-data-dir', path.join(WORK, 'user'), '--install-extension', vsix, '--force'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (run.status !== 0) throw new Error(`installing ${vsix} failed: ${run.stderr || run.stdout}`);
    log(`${path.basename(vsix)} installed`);
  }
}

async function startCodeServer(port, resultFile) {
  const logFile = fs.openSync(path.join(ARTIFACTS, 'code-server.log'), 'w');
  const child = spawn(
    CODE_SERVER,
    ['--config', path.join(WORK, 'code-server.yaml'), '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
      '--ignore-last-opened', '--extensions-dir', path.join(WORK, 'ext'), '--user-data-dir', path.join(WORK, 'user'),
      path.join(WORK, 'ws')],
    {
      detached: true,
      stdio: ['ignore', logFile, logFile],
      env: { ...process.env, AGENTLS_VSCODE_SELFTEST: resultFile, AGENTLS_VSCODE_SELFTEST_MCP: path.join(WORK, 'mcp.json') },
    },
  );
  fs.writeFileSync(path.join(WORK, 'code-server.pid'), String(child.pid));
  for (const end = Date.now() + 30_000; Date.now() < end; await sleep(200)) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}); see code-server.log`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch {
      // not listening yet
    }
  }
  throw new Error('code-server did not answer /healthz within 30 s');
}

function stop(child) {
  if (!child || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM'); // the whole group: code-server, its extension host, agentls
  } catch {
    // already gone
  }
}

function readResults(file) {
  if (!fs.existsSync(file)) return [];
  const lines = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      lines.push(JSON.parse(line));
    } catch {
      break; // the line being written: read it on the next poll
    }
  }
  return lines;
}

/** The webview frame of the agent panel (the one holding #transcript). */
async function panelFrame(page) {
  for (const frame of page.frames()) {
    try {
      if (await frame.$('#transcript')) return frame;
    } catch {
      // detached while looking
    }
  }
  return undefined;
}

const DIALOG_BUTTONS = '.monaco-dialog-box .dialog-buttons a, .monaco-dialog-box .dialog-buttons button';

/**
 * Click `answer` once the question is up: on the tool row in the panel (`inline`), or in the
 * modal dialog, whose detail names the command and which has no Cancel beside Reject. Checks
 * the status bar says so meanwhile.
 */
async function answerPermission(page, { answer, ui, detail, options }) {
  let button;
  if (ui === 'inline') {
    const frame = await panelFrame(page);
    if (!frame) throw new Error('the agent panel webview was not found');
    const row = frame.locator('.row.tool[data-status="permission"]').last();
    button = row.locator('.tool-question .permission-answer', { hasText: answer }).first();
    await button.waitFor({ state: 'visible', timeout: 15_000 });
    const answers = await row.locator('.tool-question .permission-answer').allInnerTexts();
    const expected = options ?? ['Allow once', 'Allow always', 'Reject'];
    check(`the inline question offers ${expected.join(', ')} (${answer})`, JSON.stringify(answers) === JSON.stringify(expected), answers);
    check(`no modal dialog for an inline question (${answer})`, (await page.locator('.monaco-dialog-box').count()) === 0);
  } else {
    button = page.locator(DIALOG_BUTTONS, { hasText: answer }).first();
    await button.waitFor({ state: 'visible', timeout: 15_000 });
    const labels = await page.locator(DIALOG_BUTTONS).allInnerTexts();
    check('the modal has no Cancel beside Reject', !labels.some((label) => /cancel/i.test(label)), labels);
    const text = await page.locator('.monaco-dialog-box').innerText();
    check('the modal names the command, not the arguments as JSON',
      text.includes(detail) && !text.includes('"command"'), text);
  }
  const statusBar = (await page.locator('.part.statusbar').innerText()).replace(/\u00a0/g, ' ');
  const waiting = statusBar.includes('Agent: waiting for permission');
  check(`status bar shows "Agent: waiting for permission" (${answer})`, waiting, statusBar);
  // permission-inline.png: the first one (Allow once, on the row); permission-dialog.png: the modal (Reject)
  const name = ui === 'modal'
    ? 'permission-dialog'
    : answer === 'Allow once' ? 'permission-inline' : `permission-${answer.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  await button.click();
  await button.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The panel's Continue button: shown after the failed run (a follow-up is queued); click it. */
async function clickContinue(page) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const button = frame.locator('#continue');
  await button.waitFor({ state: 'visible', timeout: 15_000 });
  check('panel shows Continue after the failed run', true);
  await page.screenshot({ path: path.join(ARTIFACTS, 'continue.png') });
  await button.click();
}

/** Pick `value` in the panel's `<select>` (`#model` or `#thinking`). */
async function pickInPanel(page, selector, value) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const select = frame.locator(selector);
  await select.locator(`option[value="${value}"]`).waitFor({ state: 'attached', timeout: 10_000 });
  await select.selectOption(value);
}

/** Run a command from the command palette. */
async function runFromPalette(page, title) {
  await page.locator('.editor-group-container').first().click();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: 10_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
}

/** "Agent: Select Model" lists the session's models (the faux one among them); pick `value`. */
async function selectModelFromPalette(page, value) {
  await runFromPalette(page, 'Agent: Select Model');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: value }).first();
  await row.waitFor({ timeout: 10_000 });
  const listed = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
  const lists = (key) => listed.some((text) => text.includes(key));
  const both = lists('faux/faux-1') && lists('e2e-local/stand-in');
  check('"Agent: Select Model" lists the faux model (and the stand-in)', both, listed);
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The panel's prompt box, clicked (focused). */
async function promptBox(page) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const box = frame.locator('#prompt');
  await box.click();
  return { frame, box };
}

/** "Agent: Compact" from the palette, with `instructions` in its input box. */
async function compactFromPalette(page, instructions) {
  await runFromPalette(page, 'Agent: Compact');
  await page.locator('.quick-input-widget', { hasText: 'Summarise the conversation so far' }).waitFor({ timeout: 10_000 });
  const input = page.locator('.quick-input-widget input');
  await input.fill(instructions);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
}

/** Type `/` in the prompt box: the list offers the template; Tab inserts it; then its arguments and Enter. */
async function completeTemplate(page, { name, description, argumentHint, args }) {
  const { frame, box } = await promptBox(page);
  await box.fill('');
  await box.pressSequentially('/');
  const list = frame.locator('#completions');
  await list.locator('li', { hasText: `/${name}` }).waitFor({ timeout: 10_000 });
  const items = await list.locator('li').allInnerTexts();
  check(`typing / lists the template /${name} with its description and argument hint`,
    items.some((item) => item.includes(`/${name}`) && item.includes(description) && item.includes(argumentHint)), items);
  await page.screenshot({ path: path.join(ARTIFACTS, 'completion.png') });
  await box.pressSequentially(name.slice(0, 2));
  const filtered = await list.locator('li').allInnerTexts();
  check(`typing /${name.slice(0, 2)} keeps the matching names only`,
    filtered.length > 0 && filtered.every((item) => item.includes(name.slice(0, 2))), filtered);
  await box.press('Tab');
  const value = await box.inputValue();
  check(`Tab inserts "/${name} " and closes the list`, value === `/${name} ` && (await list.isHidden()), value);
  await box.pressSequentially(args);
  await box.press('Enter');
}

/** Agent: Add Selection by its key binding, in the editor the self-test focused (it set the selection). */
async function addSelectionByKey(page) {
  const inEditor = await page.evaluate(() => document.activeElement?.closest('.monaco-editor') !== null);
  check('the editor has the focus for Ctrl+Alt+A', inEditor);
  await page.keyboard.press('Control+Alt+KeyA');
}

/**
 * The prompt box's chips: the selection's chip is there; `@query` lists `file`, Enter picks
 * it (a chip, the `@query` gone); another file is picked and removed with ×; then the prompt.
 */
async function attachFiles(page, { label, query, file, removed, text }) {
  const { frame, box } = await promptBox(page);
  const chips = frame.locator('#chips');
  await chips.locator('.chip', { hasText: label }).waitFor({ timeout: 10_000 });
  check(`the prompt box shows the chip ${label}`, true);
  const list = frame.locator('#file-completions');
  const pick = async (q, name) => {
    await box.pressSequentially(`@${q}`);
    await list.locator('li', { hasText: name }).first().waitFor({ timeout: 10_000 });
    const items = await list.locator('li').allInnerTexts();
    const index = items.findIndex((item) => item.includes(name));
    for (let i = 0; i < index; i++) await box.press('ArrowDown');
    await box.press('Enter');
    await chips.locator('.chip', { hasText: name }).waitFor({ timeout: 10_000 });
    return items;
  };
  await box.fill('');
  const items = await pick(query, file);
  check(`typing @${query} lists ${file}`, items.some((item) => item.includes(file)), items);
  const value = await box.inputValue();
  check(`picking ${file} from the @ list adds its chip and takes "@${query}" out of the box`,
    value === '' && (await list.isHidden()), value);
  await pick(removed.query, removed.file);
  await page.screenshot({ path: path.join(ARTIFACTS, 'chips.png') });
  await chips.locator('.chip', { hasText: removed.file }).locator('.chip-remove').click();
  await chips.locator('.chip', { hasText: removed.file }).waitFor({ state: 'detached', timeout: 10_000 });
  const left = await chips.locator('.chip').allInnerTexts();
  check(`× removes the ${removed.file} chip, the others stay`,
    left.length === 2 && left[0].includes(label) && left[1].includes(file), left);
  await box.pressSequentially(text);
  await box.press('Enter');
  // the attachments leave; the selection (still selected in the editor) is offered again
  await chips.locator('.chip:not(.suggestion)').first().waitFor({ state: 'detached', timeout: 20_000 });
  const after = await chips.locator('.chip').allInnerTexts();
  check('the chips leave the prompt box when the prompt is sent (the selection offered again)',
    after.length === 1 && after[0] === `+ ${label}`, after);
}

/**
 * A change waits for review: its diff editor is open and the panel lists it (with Accept and
 * Reject). Accept: the diff's title button. Reject: Ctrl+Alt+N in the diff, then the reason
 * in the input box. Either way the diff closes.
 */
async function answerReview(page, { action, title, path: file, reason }) {
  const tab = page.locator('.tabs-container .tab', { hasText: title });
  await tab.first().waitFor({ state: 'visible', timeout: 15_000 });
  check(`the diff editor "${title}" is open (${action})`, true);
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const item = frame.locator('#reviews li', { hasText: file });
  await item.waitFor({ state: 'visible', timeout: 10_000 });
  const buttons = await item.locator('button').allInnerTexts();
  check(`the panel lists the review of ${file} with Show, Accept and Reject (${action})`,
    ['Show', 'Accept', 'Reject'].every((label) => buttons.includes(label)), buttons);
  const status = await frame.locator('#status').innerText();
  check(`the panel status says waiting for review (${action})`, status === 'waiting for review', status);
  const statusBar = (await page.locator('.part.statusbar').innerText()).replace(/\u00a0/g, ' ');
  check(`status bar shows "Agent: waiting for review" (${action})`, statusBar.includes('Agent: waiting for review'), statusBar);
  await page.screenshot({ path: path.join(ARTIFACTS, `review-${action}.png`) });
  if (action === 'accept') {
    const accept = page.locator('.editor-actions .action-label[aria-label*="Accept Change"]').first();
    await accept.waitFor({ state: 'visible', timeout: 10_000 });
    const reject = page.locator('.editor-actions .action-label[aria-label*="Reject Change"]');
    check('the diff editor has Accept Change and Reject Change title buttons', (await reject.count()) > 0);
    await accept.click();
  } else {
    await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().click();
    await sleep(300); // the context keys follow the focus
    await page.keyboard.press('Control+Alt+KeyN');
    const box = page.locator('.quick-input-widget', { hasText: `Reject the change to ${file}` });
    await box.waitFor({ state: 'visible', timeout: 10_000 });
    check('Ctrl+Alt+N in the diff asks for the reason of the rejection', true);
    await page.screenshot({ path: path.join(ARTIFACTS, 'review-reason.png') });
    await page.locator('.quick-input-widget input').fill(reason ?? '');
    await page.keyboard.press('Enter');
  }
  await tab.first().waitFor({ state: 'detached', timeout: 15_000 });
  check(`the diff editor closed after ${action}`, true);
}

/**
 * A Copy button of the assistant message with `hasText`: of the message, or of its code
 * block, whose highlighting (theme-coloured token spans) it checks first.
 */
async function clickCopy(page, { what, hasText }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  // hover() and click() scroll the row into view themselves, and wait again for a row the
  // panel drew anew meanwhile (scrollIntoViewIfNeeded fails on one that was replaced)
  const row = frame.locator('.row.text', { hasText }).last();
  if (what === 'code') {
    const block = row.locator('.code-block').first();
    await block.waitFor();
    const tokens = await block.locator('code span[class^="tok-"]').evaluateAll((spans) =>
      spans.map((span) => ({ kind: span.className, text: span.textContent, colour: getComputedStyle(span).color })));
    const plain = await block.locator('code').evaluate((code) => getComputedStyle(code).color);
    const kinds = new Set(tokens.map((t) => t.kind));
    check('the code block is highlighted: keys, numbers and literals as tokens',
      ['tok-key', 'tok-number', 'tok-literal', 'tok-string'].every((kind) => kinds.has(kind)), tokens);
    check('the tokens have theme colours of their own', tokens.length > 0 && tokens.every((t) => t.colour !== plain), { plain, tokens });
    await block.hover();
    await page.screenshot({ path: path.join(ARTIFACTS, 'code-block.png') });
    const button = block.locator('.copy-code');
    await button.click();
    check('the code block\'s Copy button says Copied', (await button.innerText()) === 'Copied');
  } else {
    await row.hover();
    const button = row.locator('.copy-message');
    await button.click();
    check('the message\'s Copy button says Copied', (await button.innerText()) === 'Copied');
  }
}

/** The path in a tool row's summary: click it (the self-test checks the editor opened it). */
async function clickPath(page, { path: file }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const link = frame.locator('.row.tool .tool-summary.path-link', { hasText: file }).last();
  await link.scrollIntoViewIfNeeded();
  const title = await link.getAttribute('title');
  check('the tool row\'s path is a link with a tooltip', title === `Open ${file}`, title);
  await link.click();
}

/** Edit on a user message: the prompt box gets its text; then empty the box again. */
async function editMessage(page, { text }) {
  const { frame, row } = await userMessage(page, text);
  await row.locator('.edit-message').click();
  const box = frame.locator('#prompt');
  const value = await box.inputValue();
  check('Edit put the user message back in the prompt box', value === text, value);
  await box.fill('');
}

/**
 * The user message `text` (its last row), hovered: its buttons show. The panel may render the
 * transcript again under the pointer (a notification of the step before arriving late): the row
 * is then looked for again.
 */
async function userMessage(page, text) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const row = frame.locator('.row.user', { hasText: text }).last();
  for (let attempt = 1; ; attempt++) {
    try {
      await row.scrollIntoViewIfNeeded();
      await row.hover();
      return { frame, row };
    } catch (error) {
      if (attempt === 3 || !/not attached/.test(String(error))) throw error;
    }
  }
}

/** Wait until the prompt box holds `text` (put there by the extension): whether it did. */
async function promptHolds(frame, text) {
  return frame
    .waitForFunction((expected) => document.querySelector('#prompt')?.value === expected, text, { timeout: 20_000 })
    .then(() => true, () => false);
}

/**
 * Rewind to here on the user message `text`: the quick pick offers to revert the files (on)
 * and to summarise (off); Enter keeps that. With `conflict`, the modal names the file: "Revert
 * the others". The prompt box then holds the message (emptied again when `clear`).
 */
async function rewindMessage(page, { text, conflict, clear }) {
  const { frame, row } = await userMessage(page, text);
  await row.locator('.rewind-message').click();
  const pick = page.locator('.quick-input-widget', { hasText: 'Rewind to before' });
  await pick.waitFor({ state: 'visible', timeout: 10_000 });
  const option = (label) => page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
  await option('Revert the files').waitFor({ timeout: 10_000 });
  const checked = [await option('Revert the files').getAttribute('aria-checked'), await option('Summarise').getAttribute('aria-checked')];
  check(`Rewind asks: revert the files (on), summarise the branch (off)${conflict ? ' (conflict)' : ''}`,
    JSON.stringify(checked) === '["true","false"]', checked);
  if (!conflict) await page.screenshot({ path: path.join(ARTIFACTS, 'rewind.png') });
  await page.keyboard.press('Enter');
  await pick.waitFor({ state: 'hidden', timeout: 10_000 });
  if (conflict) {
    const revert = page.locator(DIALOG_BUTTONS, { hasText: 'Revert the others' }).first();
    await revert.waitFor({ state: 'visible', timeout: 20_000 });
    const dialog = await page.locator('.monaco-dialog-box').innerText();
    check('the conflict names the changed file and why', dialog.includes(conflict) && /changed/.test(dialog), dialog);
    await page.screenshot({ path: path.join(ARTIFACTS, 'rewind-conflict.png') });
    await revert.click();
    await revert.waitFor({ state: 'hidden', timeout: 10_000 });
  }
  check(`Rewind put the message back in the prompt box${conflict ? ' (conflict)' : ''}`, await promptHolds(frame, text),
    await frame.locator('#prompt').inputValue());
  if (clear) await frame.locator('#prompt').fill('');
}

/** Fork from here on the user message `text`: the prompt box then holds it; empty it again. */
async function forkMessage(page, { text }) {
  const { frame, row } = await userMessage(page, text);
  await row.locator('.fork-message').click();
  check('Fork put the message in the prompt box', await promptHolds(frame, text), await frame.locator('#prompt').inputValue());
  await frame.locator('#prompt').fill('');
}

/** The header's Branches button: it counts them; pick the branch that `hasText`, then whether the files follow. */
async function pickBranch(page, { hasText, files }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const button = frame.locator('#branchesButton');
  await button.waitFor({ state: 'visible', timeout: 10_000 });
  const label = await button.innerText();
  check('the header\'s Branches button counts the branches', label === 'Branches (2)', label);
  await button.click();
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText }).first();
  await row.waitFor({ timeout: 10_000 });
  const listed = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
  check('the branch picker lists both branches, the current one marked',
    listed.length === 2 && listed.some((item) => item.includes('current')), listed);
  await page.screenshot({ path: path.join(ARTIFACTS, 'branches.png') });
  await row.click();
  const choice = page.locator('.quick-input-list .monaco-list-row', { hasText: files ? 'Switch the files too' : 'Keep the files' }).first();
  await choice.waitFor({ timeout: 10_000 });
  await choice.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The panel's queue: Edit the item `edit` in place (its text in a box, Enter saves), then ↑ on the item `up`. */
async function editQueue(page, { edit, text, up }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const item = (hasText) => frame.locator('#queue li', { hasText });
  await item(edit).waitFor({ timeout: 10_000 });
  await item(edit).locator('.queue-edit').click();
  const box = frame.locator('#queue .queue-edit-box');
  await box.waitFor({ timeout: 5_000 });
  check('Edit puts the queued text in a box in its row', (await box.inputValue()) === edit, await box.inputValue());
  await box.fill(text);
  await page.screenshot({ path: path.join(ARTIFACTS, 'queue-edit.png') });
  await box.press('Enter');
  await item(text).locator('.text').waitFor({ timeout: 10_000 });
  await item(up).locator('.queue-up').click(); // the self-test checks the order in the panel and on the server
}

/** The panel's History: it lists `title` with its message count and time; Open it, Rename it to `name`, or Delete it (confirmed). */
async function useHistory(page, { action, title, name }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  await frame.locator('#historyButton').click();
  const item = frame.locator('#history li[data-session]', { hasText: title }).first();
  await item.waitFor({ state: 'visible', timeout: 10_000 });
  const detail = await item.locator('.history-detail').innerText();
  check(`the history lists "${title}" with its message count and time (${action})`, /^\d+ messages? · /.test(detail), detail);
  if (action === 'open') {
    await page.screenshot({ path: path.join(ARTIFACTS, 'history.png') });
    await item.locator('.history-open').click();
  } else if (action === 'rename') {
    await item.locator('.history-rename').click();
    const box = page.locator('.quick-input-widget', { hasText: 'The name the History shows' });
    await box.waitFor({ state: 'visible', timeout: 10_000 });
    const input = page.locator('.quick-input-widget input');
    const value = await input.inputValue();
    check('Rename asks for the name, prefilled with the current title', value === title, value);
    await input.fill(name);
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
    const renamed = frame.locator('#history li[data-session] .history-title', { hasText: name }).first();
    await renamed.waitFor({ state: 'visible', timeout: 10_000 });
    check(`the history shows the new name "${name}"`, true);
  } else {
    await item.locator('.history-delete').click();
    const confirm = page.locator(DIALOG_BUTTONS, { hasText: 'Delete' }).first();
    await confirm.waitFor({ state: 'visible', timeout: 10_000 });
    const text = await page.locator('.monaco-dialog-box').innerText();
    check('Delete asks first, naming the session', text.includes(`Delete the session "${title}"?`), text);
    await confirm.click();
    await confirm.waitFor({ state: 'hidden', timeout: 10_000 });
    await item.waitFor({ state: 'detached', timeout: 10_000 });
    check('the deleted session left the history', true);
  }
  await frame.locator('#historyButton').click();
  await frame.locator('#history').waitFor({ state: 'hidden', timeout: 5_000 });
}

/** The modal asking whether to trust a .mcp.json: it names the file and the command; click Trust. */
async function answerTrust(page, { file, command }) {
  const trust = page.locator(DIALOG_BUTTONS, { hasText: 'Trust' }).first();
  await trust.waitFor({ state: 'visible', timeout: 30_000 });
  const text = await page.locator('.monaco-dialog-box').innerText();
  check('the trust question names the .mcp.json and the command it runs', text.includes(file) && text.includes(command), text);
  check('the trust question says what Trust and Reject do', /Trust starts them/.test(text) && /Reject leaves them off/.test(text), text);
  const labels = await page.locator(DIALOG_BUTTONS).allInnerTexts();
  check('the trust question offers Trust and Reject only', JSON.stringify([...labels].sort()) === '["Reject","Trust"]', labels);
  await page.screenshot({ path: path.join(ARTIFACTS, 'mcp-trust.png') });
  await trust.click();
  await trust.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The panel's MCP menu, opened (its button clicked when it is closed). */
async function openMcpMenu(page) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const button = frame.locator('#mcpButton');
  await button.waitFor({ state: 'visible', timeout: 15_000 });
  if (await frame.locator('#mcp').isHidden()) await button.click();
  await frame.locator('#mcp').waitFor({ state: 'visible', timeout: 5_000 });
  return { frame, button };
}

/** The MCP menu lists `server` as ready with its `tools`; the button counts it. Then closed again. */
async function checkMcpMenu(page, { server, tools, button: label }) {
  const { frame, button } = await openMcpMenu(page);
  const item = frame.locator(`#mcp li[data-server="${server}"]`);
  await item.locator('.mcp-status', { hasText: 'ready' }).waitFor({ timeout: 15_000 });
  const text = await button.innerText();
  check(`the header's MCP button says ${label}`, text === label, text);
  const shown = await item.locator('.mcp-tool').allInnerTexts();
  check(`the MCP menu lists ${server} ready with its tools (${tools.join(', ')})`, tools.every((tool) => shown.includes(tool)), shown);
  const buttons = await item.locator('button').allInnerTexts();
  check(`the MCP menu offers Restart and Log for ${server}`, buttons.includes('Restart') && buttons.includes('Log'), buttons);
  await page.screenshot({ path: path.join(ARTIFACTS, 'mcp-menu.png') });
  await button.click();
  await frame.locator('#mcp').waitFor({ state: 'hidden', timeout: 5_000 });
}

/** Restart in the MCP menu; the row goes back to ready. */
async function restartFromMcpMenu(page, { server }) {
  const { frame, button } = await openMcpMenu(page);
  const item = frame.locator(`#mcp li[data-server="${server}"]`);
  await item.locator('.mcp-restart').click();
  // starting (unless it was quicker than the look), then ready again
  const left = await frame.locator(`#mcp li[data-server="${server}"]:not([data-status="ready"])`)
    .waitFor({ timeout: 5_000 }).then(() => true, () => false);
  await frame.locator(`#mcp li[data-server="${server}"][data-status="ready"]`).waitFor({ timeout: 60_000 });
  check(`the MCP menu shows ${server} ready again after Restart${left ? ' (starting in between)' : ''}`, true);
  await button.click();
}

/** Agent: MCP Servers: `server` listed as ready with its tools; pick it, check its actions, Open Log. */
async function mcpServersFromPalette(page, { server, tools }) {
  await runFromPalette(page, 'Agent: MCP Servers');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: server }).first();
  await row.waitFor({ timeout: 10_000 });
  const text = await row.innerText();
  check(`"Agent: MCP Servers" lists ${server} as ready with its tools`, text.includes('ready') && tools.every((tool) => text.includes(tool)), text);
  await page.screenshot({ path: path.join(ARTIFACTS, 'mcp-palette.png') });
  await row.click();
  const log = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open Log' }).first();
  await log.waitFor({ timeout: 10_000 });
  const actions = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
  check(`picking ${server} offers Restart, Open Log and lists its tools`,
    actions.some((a) => a.includes('Restart')) && tools.every((tool) => actions.some((a) => a.includes(tool))), actions);
  await log.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
}

/**
 * A revert from the Changes view met a file changed since: the modal names it; click "Revert
 * anyway". Before that, the Changes view in the agentls container lists the files (screenshot).
 */
async function revertAnyway(page, { file, listed }) {
  const revert = page.locator(DIALOG_BUTTONS, { hasText: 'Revert anyway' }).first();
  await revert.waitFor({ state: 'visible', timeout: 20_000 });
  const dialog = await page.locator('.monaco-dialog-box').innerText();
  check('the revert conflict names the changed file', dialog.includes(file) && /changed since/.test(dialog), dialog);
  await page.screenshot({ path: path.join(ARTIFACTS, 'changes-conflict.png') });
  await revert.click();
  await revert.waitFor({ state: 'hidden', timeout: 10_000 });
  const rows = page.locator('.monaco-list-row', { hasText: listed });
  await rows.first().waitFor({ state: 'visible', timeout: 10_000 }).catch(() => undefined);
  check(`the Changes view shows ${listed} in the workbench`, (await rows.count()) > 0);
  await page.screenshot({ path: path.join(ARTIFACTS, 'changes.png') });
}

/**
 * The header's sandbox badge reads `text`, with `data-status` `status` and a look of its own
 * (not the figures' colour); a refused one has the kernel's `reason` in its tooltip. Screenshot.
 */
async function checkSandboxBadge(page, { text, status, reason }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const badge = frame.locator(`#sandbox[data-status="${status}"]`);
  await badge.waitFor({ state: 'visible', timeout: 15_000 });
  const shown = await badge.innerText();
  check(`the header's sandbox badge reads "${text}" (${status}), as agent/getState says`, shown === text, shown);
  const title = (await badge.getAttribute('title')) ?? '';
  if (reason) check('the refused badge has the reason in its tooltip', title.includes(reason), title);
  else check('the enforced badge lists the writable folders and the network in its tooltip', /Writable: /.test(title) && /Network: off/.test(title), title);
  const colour = await badge.evaluate((b) => getComputedStyle(b).color);
  const plain = await frame.locator('#stats').evaluate((s) => getComputedStyle(s).color);
  check(`the ${status} badge has a look of its own`, colour !== plain, { colour, plain });
  await page.screenshot({ path: path.join(ARTIFACTS, 'sandbox.png') });
}

/**
 * The sandbox's question on the bash row of `command`: it says the command runs OUTSIDE the
 * sandbox, shows it and what was denied, and offers `options`; click `answer`. Screenshot.
 */
async function answerSandboxQuestion(page, { command, answer, options }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const row = frame.locator('.row.tool[data-status="permission"]', { hasText: command }).last();
  const button = row.locator('.tool-question .permission-answer', { hasText: answer }).first();
  await button.waitFor({ state: 'visible', timeout: 15_000 });
  const card = (await row.locator('.tool-question').innerText()).replace(/\u00a0/g, ' ');
  check("the sandbox's card says the command runs OUTSIDE the sandbox, with the command and what was denied",
    card.includes('OUTSIDE the sandbox') && card.includes(command) && card.includes('Permission denied'), card);
  const answers = await row.locator('.tool-question .permission-answer').allInnerTexts();
  check(`the sandbox's card offers ${options.join(', ')}`, JSON.stringify(answers) === JSON.stringify(options), answers);
  // the card's top (what it says, the command), the transcript being short beside the Changes view
  await row.locator('.tool-question').evaluate((card) => card.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: path.join(ARTIFACTS, 'sandbox-question.png') });
  await button.click();
  await button.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The budget's card: its title, the limit and what was used, `options`; click `answer`; the card keeps it. Screenshot. */
async function answerBudgetQuestion(page, { title, detail, answer, options }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const card = frame.locator('.row.budget[data-status="asking"]').last();
  const button = card.locator('.permission-answer', { hasText: answer }).first();
  await button.waitFor({ state: 'visible', timeout: 15_000 });
  const text = (await card.innerText()).replace(/\u00a0/g, ' ');
  check("the budget's card shows the server's title, the limit and what was used", text.includes(title) && text.includes(detail), text);
  const answers = await card.locator('.permission-answer').allInnerTexts();
  check(`the budget's card offers ${options.join(', ')}`, JSON.stringify(answers) === JSON.stringify(options), answers);
  const statusBar = (await page.locator('.part.statusbar').innerText()).replace(/\u00a0/g, ' ');
  check("status bar shows \"Agent: waiting for permission\" (the budget's question)", statusBar.includes('Agent: waiting for permission'), statusBar);
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'budget-question.png') });
  await button.click();
  await frame.locator('.row.budget[data-status="answered"]', { hasText: `Answered: ${answer}` }).last().waitFor({ timeout: 10_000 });
  check(`the budget's card keeps the answer (${answer}), no buttons`, (await frame.locator('.row.budget .permission-answer').count()) === 0);
}

/** After the run the budget stopped: the header's spend (reached) and the transcript's notice. Screenshot. */
async function checkBudgetStopped(page, { spend, notice }) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const budget = frame.locator('#budget.reached', { hasText: spend });
  await budget.waitFor({ state: 'visible', timeout: 15_000 });
  const shown = await budget.innerText();
  check(`the header shows the spend against the budget "${spend}", marked reached`, shown === spend, shown);
  const title = (await budget.getAttribute('title')) ?? '';
  check('its tooltip says it in words', title.includes('Each run: 2 of 2 turns'), title);
  const row = frame.locator('.row.notice', { hasText: notice }).last();
  await row.waitFor({ timeout: 10_000 });
  check('the transcript shows the notice of the run the budget stopped', true);
  await row.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'budget.png') });
}

/**
 * Agent: Set Budget… from the palette: each run's limits; each input box (dollars, turns, tokens) holds the limit
 * in force (`prefilled`); `invalid` in the first shows its validation message and is not taken;
 * then `values`, each with Enter.
 */
async function setBudgetFromPalette(page, { prefilled, invalid, values }) {
  await runFromPalette(page, 'Agent: Set Budget');
  // first which limits: each run's (2 turns, from the setting) or the whole session's (none)
  const run = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Each run' }).first();
  await run.waitFor({ timeout: 10_000 });
  const scopes = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
  check('Set Budget asks which limits: each run\'s (2 turns) or the whole session\'s (none)',
    scopes.length === 2 && scopes[0].includes('2 turns') && scopes[1].includes('The whole session') && scopes[1].includes('no limits'), scopes);
  await run.click();
  const input = page.locator('.quick-input-widget input');
  const seen = [];
  for (const [index, value] of values.entries()) {
    const box = page.locator('.quick-input-widget', { hasText: `Agent: Set Budget (${index + 1}/${values.length})` });
    await box.waitFor({ state: 'visible', timeout: 10_000 });
    seen.push(await input.inputValue());
    if (index === 0) {
      await input.fill(invalid);
      const message = page.locator('.quick-input-widget .quick-input-message', { hasText: 'Not a number' });
      await message.waitFor({ state: 'visible', timeout: 5_000 });
      check(`Set Budget refuses "${invalid}" with a message`, true);
      await page.screenshot({ path: path.join(ARTIFACTS, 'set-budget.png') });
      await page.keyboard.press('Enter'); // refused: the box stays
      await sleep(200);
      check('Enter does not take a refused value', await box.isVisible());
    }
    await input.fill(value);
    await page.keyboard.press('Enter');
  }
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
  check('Set Budget\'s boxes hold the limits in force', JSON.stringify(seen) === JSON.stringify(prefilled), seen);
}

/** Do what a `{"waiting": ...}` line of the self-test asks for. */
async function act(page, request, acted) {
  if (request.waiting === 'permission') {
    await answerPermission(page, request);
    acted.permissions.push(`${request.answer} (${request.ui})`);
  } else if (request.waiting === 'review') {
    await answerReview(page, request);
    acted.reviews.push(request.action);
  } else if (request.waiting === 'revertAnyway') {
    await revertAnyway(page, request);
    acted.revertedAnyway = true;
  } else if (request.waiting === 'sandboxBadge') {
    await checkSandboxBadge(page, request);
    acted.safety.push('badge');
  } else if (request.waiting === 'sandboxQuestion') {
    await answerSandboxQuestion(page, request);
    acted.safety.push('outside');
  } else if (request.waiting === 'budgetQuestion') {
    await answerBudgetQuestion(page, request);
    acted.safety.push('stop');
  } else if (request.waiting === 'budgetStopped') {
    await checkBudgetStopped(page, request);
    acted.safety.push('spend');
  } else if (request.waiting === 'setBudget') {
    await setBudgetFromPalette(page, request);
    acted.safety.push('setBudget');
  } else if (request.waiting === 'continue') {
    await clickContinue(page);
    acted.continued = true;
  } else if (request.waiting === 'pick' && request.picker === 'panel-model') {
    await pickInPanel(page, '#model', request.value);
  } else if (request.waiting === 'pick' && request.picker === 'panel-thinking') {
    await pickInPanel(page, '#thinking', request.value);
  } else if (request.waiting === 'pick' && request.picker === 'palette-model') {
    await selectModelFromPalette(page, request.value);
  } else if (request.waiting === 'type') {
    const { box } = await promptBox(page);
    await box.fill(request.text);
    await box.press('Enter');
  } else if (request.waiting === 'key') {
    const { box } = await promptBox(page);
    await box.press(request.key);
  } else if (request.waiting === 'presetToggle') {
    const frame = await panelFrame(page);
    if (!frame) throw new Error('the agent panel webview was not found');
    const focused = await frame.evaluate(() => document.activeElement?.id);
    const toggle = frame.locator('#presetButton');
    await frame.locator('#presetButton', { hasText: request.shows }).waitFor({ timeout: 5_000 }).catch(() => undefined);
    const shows = await toggle.innerText();
    check(`the header's preset toggle reads "${request.shows}" and the prompt box kept the focus after Shift+Tab`,
      shows === request.shows && focused === 'prompt', { shows, focused });
    await page.screenshot({ path: path.join(ARTIFACTS, 'preset.png') });
    await toggle.click();
  } else if (request.waiting === 'compact') {
    await compactFromPalette(page, request.instructions);
    acted.compacted = true;
  } else if (request.waiting === 'complete') {
    await completeTemplate(page, request);
    acted.completed = true;
  } else if (request.waiting === 'addSelection') {
    await addSelectionByKey(page);
    acted.selectionAdded = true;
  } else if (request.waiting === 'attach') {
    await attachFiles(page, request);
    acted.attached = true;
  } else if (request.waiting === 'copy') {
    await clickCopy(page, request);
    acted.copied.push(request.what);
  } else if (request.waiting === 'openPath') {
    await clickPath(page, request);
    acted.opened = true;
  } else if (request.waiting === 'editMessage') {
    await editMessage(page, request);
    acted.edited = true;
  } else if (request.waiting === 'history') {
    await useHistory(page, request);
    acted.history.push(request.action);
  } else if (request.waiting === 'rewind') {
    await rewindMessage(page, request);
    acted.rewinds.push(request.conflict ? 'conflict' : 'rewind');
  } else if (request.waiting === 'fork') {
    await forkMessage(page, request);
    acted.forked = true;
  } else if (request.waiting === 'branch') {
    await pickBranch(page, request);
    acted.branched = true;
  } else if (request.waiting === 'queue') {
    await editQueue(page, request);
    acted.queueEdited = true;
  } else if (request.waiting === 'trust') {
    await answerTrust(page, request);
    acted.mcp.push('trust');
  } else if (request.waiting === 'mcpMenu') {
    await checkMcpMenu(page, request);
    acted.mcp.push('menu');
  } else if (request.waiting === 'mcpRestart') {
    await restartFromMcpMenu(page, request);
    acted.mcp.push('restart');
  } else if (request.waiting === 'mcpPalette') {
    await mcpServersFromPalette(page, request);
    acted.mcp.push('palette');
  } else {
    throw new Error(`unknown request ${JSON.stringify(request)}`);
  }
  acted.picks += request.waiting === 'pick' ? 1 : 0;
  log(`did ${JSON.stringify(request)}`);
}

async function selfTest(page, resultFile) {
  const acted = {
    permissions: [], reviews: [], revertedAnyway: false, continued: false, picks: 0, compacted: false, completed: false, selectionAdded: false, attached: false,
    copied: [], opened: false, edited: false, history: [], rewinds: [], forked: false, branched: false, queueEdited: false,
    mcp: [], safety: [],
  };
  let handled = 0; // the `waiting` lines done so far
  for (const end = Date.now() + TIMEOUT_MS; Date.now() < end; await sleep(250)) {
    const lines = readResults(resultFile);
    const requests = lines.filter((line) => line.waiting);
    while (handled < requests.length) {
      const request = requests[handled++];
      try {
        await act(page, request, acted);
      } catch (error) {
        // the self-test times out waiting and reports it; keep going for its other steps
        check(`driver did ${JSON.stringify(request)}`, false, error instanceof Error ? error.message : String(error));
        await page.keyboard.press('Escape').catch(() => undefined);
      }
      // done (or failed): the self-test may wait for it (Recorder.askAndWait)
      fs.appendFileSync(`${resultFile}.acks`, `${handled}\n`);
    }
    if (lines.some((line) => line.done)) return { lines, acted };
  }
  return { lines: readResults(resultFile), acted };
}

/** Make the secondary side bar (the agent panel) wider, for the screenshots. Best effort. */
async function widenPanel(page, by) {
  try {
    const bar = await page.locator('.part.auxiliarybar').boundingBox();
    if (!bar) return;
    for (const sash of await page.locator('.monaco-sash.vertical').all()) {
      const box = await sash.boundingBox();
      if (!box || Math.abs(box.x + box.width / 2 - bar.x) > 6) continue;
      const x = box.x + box.width / 2;
      const y = box.y + box.height / 2;
      await page.mouse.move(x, y);
      await page.mouse.down();
      await page.mouse.move(x - by, y, { steps: 8 });
      await page.mouse.up();
      return;
    }
  } catch (error) {
    log(`could not widen the panel: ${error}`);
  }
}

async function promptFromPanel(page) {
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found');
  const box = frame.locator('#prompt');
  await box.click();
  await box.fill(UI_PROMPT);
  await box.press('Enter');
  // The answer streams in: first seen while streaming (part of the text, a cursor), then whole.
  const streaming = frame.locator('.row.text.streaming', { hasText: 'Hello from the' }).last();
  await streaming.waitFor({ state: 'visible', timeout: 20_000 });
  const partial = (await streaming.innerText()).trim();
  const answer = frame.locator('.row.text:not(.streaming)', { hasText: 'until the message ends.' }).last();
  await answer.waitFor({ timeout: 20_000 });
  await frame.locator('#status[data-status="idle"]').waitFor({ timeout: 10_000 });
  return { frame, answer, partial };
}

/** The command palette: "Agent: Show Sessions" lists the session by its first prompt. */
async function showSessionsFromPalette(page) {
  await runFromPalette(page, 'Agent: Show Sessions');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Please make notes.txt greet agentls.' });
  await row.first().waitFor({ timeout: 10_000 });
  const text = await row.first().innerText();
  await page.keyboard.press('Escape');
  return text;
}

async function main() {
  prepare();
  install();
  const port = await freePort();
  const resultFile = path.join(WORK, 'selftest.jsonl');
  let codeServer;
  let browser;
  try {
    codeServer = await startCodeServer(port, resultFile);
    log(`code-server up on port ${port}`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    // the clipboard permissions: the panel's Copy buttons write it, the self-test reads it back
    const browserContext = await browser.newContext({
      viewport: { width: 1440, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await browserContext.newPage();
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(path.join(WORK, 'ws'))}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 30_000 });
    log('workbench loaded');

    // 1. The self-test of the test extension.
    const { lines, acted } = await selfTest(page, resultFile);
    const done = lines.find((line) => line.done);
    fs.writeFileSync(path.join(ARTIFACTS, 'selftest.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n'));
    check('self-test finished', done !== undefined, lines.at(-1));
    for (const line of lines.filter((l) => l.check)) check(`${line.step}: ${line.check}`, line.ok, line.detail);
    for (const name of REQUIRED) {
      check(`self-test reported "${name}"`, lines.some((l) => l.check === name && l.ok));
    }
    check('permission questions answered in the page: Allow once (row), Reject (modal), Allow always (row), every tool of quirky (row)',
      acted.permissions.length === ANSWERS.length &&
        ANSWERS.every((want, i) => (want instanceof RegExp ? want.test(acted.permissions[i]) : want === acted.permissions[i])),
      acted.permissions);
    check('sandbox and budget in the page: the badge, (where enforced) Run once outside the sandbox, Stop on the budget\'s card, the spend and notice, Agent: Set Budget',
      /^\["badge",("outside",)?"stop","spend","setBudget"\]$/.test(JSON.stringify(acted.safety)), acted.safety);
    check('MCP in the page: Trust, the menu, Restart in the menu, Agent: MCP Servers',
      JSON.stringify(acted.mcp) === '["trust","menu","restart","palette"]', acted.mcp);
    check('no permission dialog left open', (await page.locator('.monaco-dialog-box').count()) === 0);
    check('Continue clicked in the panel', acted.continued);
    check('"Revert anyway" clicked in the revert conflict of the Changes view', acted.revertedAnyway);
    check('reviews answered in the page: Accept (title button), Reject (Ctrl+Alt+N, with a reason)',
      JSON.stringify(acted.reviews) === JSON.stringify(['accept', 'reject']), acted.reviews);
    check('the three pickers used in the page', acted.picks === 3, acted.picks);
    check('"Agent: Compact" run from the command palette', acted.compacted);
    check('the template picked from the / completion list', acted.completed);
    check('Ctrl+Alt+A pressed in the editor', acted.selectionAdded);
    check('files attached from the @ list in the panel', acted.attached);
    check('Copy clicked on a message and on a code block', JSON.stringify(acted.copied) === '["message","code"]', acted.copied);
    check('a tool row\'s path clicked', acted.opened);
    check('Edit clicked on a user message', acted.edited);
    check('the history used in the panel: Open, Rename, then Delete', JSON.stringify(acted.history) === '["open","rename","delete"]', acted.history);
    check('Rewind to here clicked twice, the second time with a file conflict', JSON.stringify(acted.rewinds) === '["rewind","conflict"]', acted.rewinds);
    check('Fork from here clicked', acted.forked);
    check('a branch picked with the header\'s Branches button', acted.branched);
    check('a queued item edited in place and another moved up in the panel', acted.queueEdited);

    // 2. A prompt typed into the panel in the browser; its answer streams into the DOM.
    await widenPanel(page, 300);
    const { frame, answer, partial } = await promptFromPanel(page);
    check('prompt typed in the panel was answered', true);
    check('answer seen while streaming, then whole', partial.length > 0 && partial.length < UI_ANSWER.length, partial);
    const text = (await frame.locator('#transcript').innerText()).replace(/\u00a0/g, ' ');
    for (const expected of ['Done: notes.txt now greets agentls.', 'Short version: the agent was steered.', UI_PROMPT, UI_ANSWER]) {
      check(`panel DOM shows "${expected}"`, text.includes(expected));
    }
    const toolRows = await frame.locator('.row.tool[data-status="done"] .tool-name').allInnerTexts();
    check('panel DOM shows the edit, bash and write rows as done',
      ['edit', 'bash', 'write'].every((name) => toolRows.includes(name)), toolRows);
    const failedRows = await frame.locator('.row.tool[data-status="error"]').allInnerTexts();
    check('panel DOM shows the rejected bash row as an error',
      failedRows.some((row) => row.includes('bash') && row.includes('The user rejected the bash call.')), failedRows);
    const statTitles = await frame.locator('#stats .stat').evaluateAll((spans) => spans.map((s) => s.title));
    check('the header figures have tooltips in words (input, output, cost, context used)',
      ['Input:', 'Output:', 'Cost', 'Context used:'].every((word) => statTitles.some((t) => t.startsWith(word))), statTitles);
    const thinking = await frame.locator('#thinking').inputValue();
    check('panel thinking picker shows the level picked', thinking === 'high', thinking);
    const echo = await frame.locator('.row.bash[data-status="done"]', { hasText: 'echo hi' }).allInnerTexts();
    check('panel DOM shows the !echo hi row with its output', echo.some((row) => /exit 0/.test(row) && /\bhi\b/.test(row)), echo);
    const stopped = await frame.locator('.row.bash.excluded[data-status="cancelled"]', { hasText: 'sleep 30' }).allInnerTexts();
    check('panel DOM shows the stopped !!sleep 30 row, not sent to the model',
      stopped.some((row) => row.includes('cancelled') && row.includes('not sent to the model')), stopped);
    const messageChips = await frame.locator('.row.user .message-chips .chip').allInnerTexts();
    check('panel DOM shows the attachments as chips on the user messages',
      ['calc.py:4-5', 'notes.txt'].every((label) => messageChips.includes(label)) &&
        messageChips.some((label) => /^\d+ problems?$/.test(label)), messageChips);
    const customRows = await frame.locator('.row.custom').count();
    check('panel DOM shows no editorContext text block', customRows === 0, customRows);
    const context = frame.locator('#context');
    const tooltip = await context.getAttribute('title');
    check('panel header lists the context file, with its path in the tooltip',
      (await context.innerText()).includes('AGENTS.md') && tooltip.includes(path.join(WORK, 'ws', 'AGENTS.md')), tooltip);
    // the loaded session's compaction: folded, then opened
    const compaction = frame.locator('.row.compaction').last();
    const body = compaction.locator('.summary-body');
    const folded = !(await body.isVisible());
    await compaction.locator('summary').click();
    await body.waitFor({ state: 'visible', timeout: 5_000 });
    const summary = await body.innerText();
    check('panel DOM shows the compaction folded, its summary on a click',
      folded && summary.includes('Keep notes.txt greeting agentls.'), { folded, summary });
    await compaction.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, 'compaction.png') });

    // 3. On screen: the streamed answer is visible in the page and drawn (not a blank box).
    await answer.scrollIntoViewIfNeeded();
    const box = await answer.boundingBox();
    const viewport = page.viewportSize();
    check(
      'streamed answer visible in the viewport',
      box !== null && box.width > 50 && box.height > 5 && box.x >= 0 && box.y >= 0 &&
        box.x + box.width <= viewport.width && box.y + box.height <= viewport.height,
      box,
    );
    const clip = await page.screenshot({ clip: box, path: path.join(ARTIFACTS, 'answer.png') });
    const colours = distinctColours(clip);
    check('streamed answer drawn on screen (text pixels)', colours >= 8, { colours });
    await page.screenshot({ path: path.join(ARTIFACTS, 'panel.png') });

    // 4. A palette command in the real UI.
    const listed = await showSessionsFromPalette(page).catch((error) => `${error}`);
    check('"Agent: Show Sessions" from the command palette lists the session', /\d+ messages/.test(listed), listed);
    // The server answers initialize before it has loaded, then checks its own answer against
    // the one sent: VS Code's capabilities must give the same, and be usable as they are.
    const serverLog = agentlsLogs(path.join(WORK, 'user', 'logs')).join('\n');
    check('the server logged its output (the extension\'s agentls.log)', serverLog.includes('Starting'), serverLog.length);
    check('the early initialize answer is the one the server gives, for VS Code\'s capabilities',
      !/answered early|capabilities are left out/.test(serverLog),
      serverLog.split('\n').filter((line) => /answered early|capabilities are left out/.test(line)));

    // 5. Live sessions: a run under the per-user server outlives a window reload.
    await liveSession(browserContext, port, page);
    log(`screenshots in ${ARTIFACTS}`);
  } catch (error) {
    check('no error', false, error instanceof Error ? error.stack : String(error));
  } finally {
    await browser?.close().catch(() => undefined);
    stop(codeServer);
    if (fs.existsSync(path.join(WORK, 'ws-live'))) {
      const stopped = await stopLiveServer();
      check('the per-user server of the live step ran on its socket, and was stopped',
        stopped.some((p) => !p.argv.includes('--attach')) && liveServerProcesses().length === 0, stopped);
    }
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`\ne2e: ${results.length - failed} passed, ${failed} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  process.exit(failed === 0 ? 0 : 1);
}

/**
 * 5. Live sessions: in the live workspace (a new page; the first one closes), the self-test
 * starts a slow run under the per-user server and asks for a reload once its first answer is
 * in; the driver reloads the window from the palette (Developer: Reload Window), then checks
 * the panel shows the run busy after the reattach, and at its end the whole transcript.
 */
async function liveSession(browserContext, port, firstPage) {
  const page = await browserContext.newPage();
  page.on('dialog', (dialog) => dialog.accept().catch(() => undefined));
  await firstPage.close({ runBeforeUnload: false });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(LIVE_WS)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 30_000 });
  log('live: workbench loaded');
  await widenPanel(page, 300);
  let handled = 0;
  let reloaded = false;
  for (const end = Date.now() + 150_000; Date.now() < end; await sleep(250)) {
    const lines = readResults(LIVE_RESULTS);
    const requests = lines.filter((line) => line.waiting);
    while (handled < requests.length) {
      const request = requests[handled++];
      try {
        if (request.waiting === 'reload') {
          const frame = await panelFrame(page);
          const text = frame ? (await frame.locator('#transcript').innerText()).replace(/\u00a0/g, ' ') : '';
          const status = frame ? await frame.locator('#status').getAttribute('data-status') : undefined;
          check('live: before the reload the panel shows the first answer, the run going',
            text.includes(LIVE_PART_ONE) && status === 'running', { status, text });
          await page.screenshot({ path: path.join(ARTIFACTS, 'live-before-reload.png') });
          await runFromPalette(page, 'Developer: Reload Window');
          reloaded = true;
          log('live: reloading the window');
        } else if (request.waiting === 'reattached') {
          await page.waitForSelector('.monaco-workbench', { timeout: 30_000 });
          let frame;
          for (const until = Date.now() + 15_000; !frame && Date.now() < until; await sleep(200)) frame = await panelFrame(page);
          if (!frame) throw new Error('the agent panel webview was not found after the reload');
          await frame.locator('#status[data-status="running"]').waitFor({ timeout: 10_000 });
          await frame.locator('.row.text', { hasText: LIVE_PART_ONE }).first().waitFor({ timeout: 10_000 });
          check('live: after the reload the panel shows the first answer and the run busy', true);
          await page.screenshot({ path: path.join(ARTIFACTS, 'live-reattached.png') });
        } else {
          throw new Error(`unknown request ${JSON.stringify(request)}`);
        }
      } catch (error) {
        check(`driver did ${JSON.stringify(request.waiting)}`, false, error instanceof Error ? error.message : String(error));
      }
    }
    if (lines.some((line) => line.done)) break;
  }
  const lines = readResults(LIVE_RESULTS);
  fs.writeFileSync(path.join(ARTIFACTS, 'live.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n'));
  check('live: the window was reloaded from the palette', reloaded);
  check('live: the self-test ran again after the reload and finished',
    lines.some((line) => line.event === 'activated after the reload') && lines.some((line) => line.done), lines.at(-1));
  for (const line of lines.filter((l) => l.check)) check(`${line.step}: ${line.check}`, line.ok, line.detail);
  for (const name of LIVE_REQUIRED) check(`live self-test reported "${name}"`, lines.some((l) => l.check === name && l.ok));
  // the panel's DOM: the whole run, once, and idle
  const frame = await panelFrame(page);
  if (!frame) throw new Error('the agent panel webview was not found at the end of the live step');
  await frame.locator('#status[data-status="idle"]').waitFor({ timeout: 10_000 });
  const text = (await frame.locator('#transcript').innerText()).replace(/\u00a0/g, ' ');
  const count = (needle) => text.split(needle).length - 1;
  check('live: the panel DOM shows the first answer and the end of the second, each once',
    count(LIVE_PART_ONE) === 1 && count(LIVE_PART_TWO_END) === 1, text);
  const tool = await frame.locator('.row.tool[data-status="done"]', { hasText: 'sleep 3' }).count();
  check('live: the panel DOM shows the slow command done', tool === 1, tool);
  await frame.locator('.row.text', { hasText: LIVE_PART_TWO_END }).last().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(ARTIFACTS, 'live-after-reload.png') });
  return page;
}

/** The processes whose command line names the live step's socket (the per-user server, its bridges), by pid. */
function liveServerProcesses() {
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.some((arg) => arg.includes(LIVE_SOCKET))) found.push({ pid: Number(name), argv: argv.join(' ').trim() });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Stop the per-user server the live step started (it is detached: stopping code-server leaves it). */
async function stopLiveServer() {
  const found = liveServerProcesses();
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone meanwhile
    }
  }
  for (const end = Date.now() + 10_000; Date.now() < end && liveServerProcesses().length > 0; await sleep(200));
  for (const { pid } of liveServerProcesses()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const log = path.join(path.dirname(LIVE_SOCKET), 'serve.log');
  if (fs.existsSync(log)) fs.copyFileSync(log, path.join(ARTIFACTS, 'live-serve.log'));
  return found;
}

/** The text of every agentls.log (the extension's output channel) under code-server's logs folder. */
function agentlsLogs(folder) {
  if (!fs.existsSync(folder)) return [];
  return fs.readdirSync(folder, { recursive: true })
    .filter((name) => path.basename(name) === 'agentls.log')
    .map((name) => fs.readFileSync(path.join(folder, name), 'utf8'));
}

await main();
