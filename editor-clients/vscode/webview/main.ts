/**
 * The agent panel's webview: draws the header, transcript rows, queue and prompt box
 * it is sent, and posts the user's actions back. It holds no agent state of its own.
 */

import { modelLabels, relativePath } from '../src/format';
import { composerLabels, parsePromptInput, promptKeyAction } from '../src/promptInput';
import { type PermissionOutcome, type QueueItem, THINKING_LEVELS } from '../src/protocol';
import type { FromWebview, Header, Row, SessionEntry, SubmitMode, ToWebview } from '../src/view';
import { commandCompletion, fileCompletion } from './completion';
import { el, renderRow, renderStats } from './render';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): { prompt?: string } | undefined;
  setState(state: { prompt?: string }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (message: FromWebview): void => vscode.postMessage(message);

// --- layout --------------------------------------------------------------------------------

const modelSelect = el('select', { id: 'model', title: 'Model' });
const thinkingSelect = el('select', { id: 'thinking', title: 'Thinking level' });
for (const level of THINKING_LEVELS) thinkingSelect.append(el('option', { value: level }, `thinking: ${level}`));
/** The session's permission preset (Ask before edits, Accept edits, Read-only, Bypass permissions): a click goes to the next. */
const presetButton = el('button', { id: 'presetButton', class: 'secondary', hidden: '' }, '');
const historyButton = el(
  'button',
  { id: 'historyButton', class: 'secondary', title: 'The stored sessions of this workspace', 'aria-expanded': 'false' },
  'History',
);
/** The session's branches (`agent/getTree`): a quick pick to switch (Agent: Switch Branch); shown from two branches. */
const branchesButton = el(
  'button',
  { id: 'branchesButton', class: 'secondary', title: "Switch to another branch of this session's history (Agent: Switch Branch)", hidden: '' },
  'Branches',
);
/** The session's MCP servers (`agent/listMcpServers`): a menu with each one's status, tools, Restart and Log; shown when there are any. */
const mcpButton = el(
  'button',
  { id: 'mcpButton', class: 'secondary', title: 'The MCP servers of this session', 'aria-expanded': 'false', hidden: '' },
  'MCP',
);
const mcpList = el('ul', { class: 'mcp-items' });
const mcpClose = el('button', { class: 'icon history-close', title: 'Close the MCP servers', 'aria-label': 'Close the MCP servers' }, '×');
const mcpMenu = el(
  'section',
  { id: 'mcp', class: 'history mcp', hidden: '' },
  el('div', { class: 'history-head' }, el('h3', {}, 'MCP servers'), mcpClose),
  mcpList,
);
/** The session history: the stored sessions (`agent/listSessions`), each with Open, Rename and Delete. */
const historyList = el('ul', { class: 'history-items' });
const historyClose = el('button', { class: 'icon history-close', title: 'Close the history', 'aria-label': 'Close the history' }, '×');
const history = el(
  'section',
  { id: 'history', class: 'history', hidden: '' },
  el('div', { class: 'history-head' }, el('h3', {}, 'Sessions'), historyClose),
  historyList,
);
const stats = el('span', { id: 'stats', class: 'stats' });
/** The sandbox in force for the agent's bash (`agent/getState`): `sandbox: workspace-write · no network`, refused, unsandboxed. */
const sandboxBadge = el('span', { id: 'sandbox', class: 'sandbox-badge', role: 'status', hidden: '' });
/** Spend against the budget: `$0.12 / $1.00 · 3/10 turns`; hidden without limits. */
const budget = el('span', { id: 'budget', class: 'budget', hidden: '' });
const status = el('span', { id: 'status', class: 'status' });
const banner = el('div', { id: 'banner', class: 'banner', hidden: '' });
const contextLine = el('div', { id: 'context', class: 'context-files', hidden: '' });
const transcript = el('main', { id: 'transcript', 'aria-live': 'polite' });
const empty = el('div', { class: 'empty' }, 'Ask the agent something. It can read and edit the files of this workspace.');
const queueList = el('ul', { class: 'queue-items' });
const queue = el('section', { id: 'queue', class: 'queue', hidden: '' }, el('h3', {}, 'Queued'), queueList);
/** The changes waiting for review (`agent/reviewEdit`): each with Show, Accept and Reject. */
const reviewList = el('ul', { class: 'review-items' });
const reviews = el('section', { id: 'reviews', class: 'reviews', hidden: '' }, el('h3', {}, 'Waiting for review'), reviewList);
const prompt = el('textarea', { id: 'prompt', rows: '3', 'aria-label': 'Prompt' });
const send = el('button', { id: 'send', class: 'primary' }, 'Send');
const followUp = el('button', { id: 'followUp', class: 'secondary' }, 'Follow up');
const abort = el('button', { id: 'abort', class: 'secondary' }, 'Abort');
const cont = el('button', { id: 'continue', class: 'secondary' }, 'Continue');
const hint = el('span', { class: 'hint' });
const completion = commandCompletion(prompt, () => post({ type: 'listCommands' }));
const files = fileCompletion(
  prompt,
  () => post({ type: 'listFiles' }),
  (file) => post({ type: 'addFile', file }),
);
/** The prompt box's chips (the attachments of the next message) and the suggested one. */
const chips = el('div', { id: 'chips', class: 'chips', hidden: '' });

document.getElementById('app')?.append(
  el(
    'header',
    { class: 'bar' },
    modelSelect,
    thinkingSelect,
    presetButton,
    sandboxBadge,
    el('span', { class: 'spacer' }),
    budget,
    stats,
    status,
    mcpButton,
    branchesButton,
    historyButton,
  ),
  contextLine,
  banner,
  mcpMenu,
  history,
  transcript,
  reviews,
  queue,
  el(
    'footer',
    { class: 'composer' },
    completion.element,
    files.element,
    chips,
    prompt,
    el('div', { class: 'actions' }, send, followUp, cont, abort, hint),
  ),
);
transcript.append(empty);

// --- state ---------------------------------------------------------------------------------

let header: Header | undefined;
const rowElements = new Map<string, HTMLElement>();
/** The model options last rendered: rebuilt only when they change, so an open dropdown stays open. */
let modelOptionsKey = '';

function running(): boolean {
  return header !== undefined && header.status !== 'idle';
}

function applyHeader(next: Header): void {
  // another session: the open history's "current" mark moves
  if (header?.sessionId !== next.sessionId && history.hidden === false) post({ type: 'listSessions' });
  header = next;
  // models
  const labels = modelLabels(next.models);
  const models = next.models.map((m, i) => ({ key: `${m.provider}/${m.id}`, name: labels[i] ?? m.id }));
  if (next.model && !models.some((m) => m.key === next.model)) models.unshift({ key: next.model, name: next.model });
  const optionsKey = JSON.stringify(models);
  if (optionsKey !== modelOptionsKey) {
    modelOptionsKey = optionsKey;
    modelSelect.replaceChildren(...models.map((m) => el('option', { value: m.key, title: m.key }, m.name)));
  }
  if (modelSelect.value !== (next.model ?? '')) modelSelect.value = next.model ?? '';
  modelSelect.disabled = models.length === 0;
  if (thinkingSelect.value !== next.thinkingLevel) thinkingSelect.value = next.thinkingLevel;
  renderStats(stats, next.stats);
  status.textContent =
    next.status === 'permission'
      ? 'waiting for permission'
      : next.status === 'review'
        ? 'waiting for review'
        : next.status === 'running'
          ? 'running'
          : 'idle';
  status.dataset.status = next.status;
  // banner
  const problem = next.error ?? (next.connected ? undefined : 'Starting the agentls server…');
  banner.hidden = problem === undefined;
  banner.textContent = problem ?? '';
  banner.classList.toggle('error', next.error !== undefined);
  // the project instructions in the system prompt
  contextLine.hidden = next.contextFiles.length === 0;
  contextLine.textContent = `Context: ${next.contextFiles.map((file) => relativePath(file, next.cwd)).join(', ')}`;
  contextLine.title = `Project instructions in the system prompt:\n${next.contextFiles.join('\n')}`;
  applyQueue(next.queue);
  // the permission preset, the sandbox, the budget
  applyPreset(next);
  applySafety(next);
  // the session's branches
  branchesButton.hidden = next.branches < 2;
  branchesButton.textContent = `Branches (${next.branches})`;
  // the MCP servers
  applyMcp(next);
  // the changes waiting for review
  applyReviews(next);
  // the prompt box's chips
  applyChips(next);
  // composer
  const busy = running();
  document.body.classList.toggle('busy', busy); // no Rewind while the agent works
  cont.hidden = busy || !next.canContinue;
  cont.title = 'Let the agent continue from where it stopped';
  prompt.placeholder = busy
    ? 'Steer the agent, or queue a follow-up…'
    : 'Ask the agent… (!cmd runs a command, / a template or skill, @ attaches a file)';
  applyComposer();
}

/** The preset toggle: the preset's name, what it means and which comes next in its tooltip; hidden without presets. */
function applyPreset(next: Header): void {
  const preset = next.permissionPreset;
  presetButton.hidden = preset === undefined;
  if (!preset) return;
  presetButton.textContent = preset.name;
  presetButton.dataset.preset = preset.id;
  presetButton.title =
    `Permission preset: ${preset.name}. ${preset.description}\n` +
    `Click, or Shift+Tab in the prompt box (Agent: Cycle Permission Preset): ${next.nextPermissionPreset?.name ?? preset.name}`;
}

/** The sandbox badge (coloured by its status, the reason in the tooltip) and the spend against the budget. */
function applySafety(next: Header): void {
  const badge = next.sandbox;
  sandboxBadge.hidden = badge === undefined;
  sandboxBadge.textContent = badge?.text ?? '';
  sandboxBadge.title = badge?.title ?? '';
  sandboxBadge.dataset.status = badge?.status ?? 'none';
  const spend = next.budget;
  budget.hidden = spend === undefined;
  budget.textContent = spend?.text ?? '';
  budget.title = spend?.title ?? '';
  budget.classList.toggle('reached', spend?.reached === true);
}

// --- the queue: each item edited in place (agent/editQueueItem) and moved (agent/moveQueueItem)

/** The items last drawn, and the one being edited (its row is kept while the queue redraws). */
let queued: QueueItem[] = [];
let queueKey = '';
let editing: { id: string; original: string; box: HTMLTextAreaElement; row: HTMLElement } | undefined;

const KIND_LABEL: Record<QueueItem['kind'], string> = { steering: 'steer', followUp: 'follow-up' };

function iconButton(cls: string, label: string, title: string, onClick: () => void): HTMLButtonElement {
  const button = el('button', { class: `icon ${cls}`, title, 'aria-label': title }, label);
  button.addEventListener('click', onClick);
  return button;
}

function applyQueue(items: QueueItem[], force = false): void {
  const key = JSON.stringify(items);
  if (key === queueKey && !force) return;
  queueKey = key;
  queued = items;
  queue.hidden = items.length === 0;
  const edited = editing;
  if (edited && !items.some((item) => item.id === edited.id)) {
    // delivered (or removed) while being edited: the new text goes to the prompt box
    editing = undefined;
    if (edited.box.value.trim() && edited.box.value !== edited.original) putInPrompt(edited.box.value);
  }
  const kept = editing;
  const focused = kept !== undefined && document.activeElement === kept.box;
  const [start, end] = kept ? [kept.box.selectionStart, kept.box.selectionEnd] : [0, 0];
  queueList.replaceChildren(...items.map((item) => (item.id === kept?.id ? kept.row : queueRow(item, items))));
  if (kept && focused) {
    kept.box.focus();
    kept.box.setSelectionRange(start, end);
  }
}

/** A queued item: its kind and text, ↑ ↓ (within its own queue), Edit and ×. */
function queueRow(item: QueueItem, items: readonly QueueItem[]): HTMLElement {
  const same = items.filter((other) => other.kind === item.kind);
  const index = same.indexOf(item);
  const up = iconButton('queue-up', '↑', 'Deliver it earlier', () => post({ type: 'moveQueueItem', id: item.id, by: -1 }));
  const down = iconButton('queue-down', '↓', 'Deliver it later', () => post({ type: 'moveQueueItem', id: item.id, by: 1 }));
  up.disabled = index <= 0;
  down.disabled = index >= same.length - 1;
  up.hidden = down.hidden = same.length < 2;
  const text = el('span', { class: 'text', title: 'Double-click to edit' }, item.text);
  text.addEventListener('dblclick', () => startEditing(item));
  return el(
    'li',
    { 'data-kind': item.kind, 'data-id': item.id },
    el('span', { class: 'kind' }, KIND_LABEL[item.kind]),
    text,
    ...(item.context?.length
      ? [el('span', { class: 'attached', title: 'Attachments from the editor' }, `+${item.context.length} attached`)]
      : []),
    up,
    down,
    iconButton('queue-edit', 'Edit', 'Edit the text here (Enter saves, Escape cancels)', () => startEditing(item)),
    iconButton('queue-remove', '×', 'Remove from the queue (puts the text back here)', () =>
      post({ type: 'removeQueueItem', id: item.id }),
    ),
  );
}

/** The item's text in a box in its row: Enter (or Save) sends the new text, Escape (or Cancel) leaves it. */
function startEditing(item: QueueItem): void {
  const box = el('textarea', { class: 'queue-edit-box', rows: '2', 'aria-label': `Edit the queued ${KIND_LABEL[item.kind]}` });
  box.value = item.text;
  const stop = (): void => {
    editing = undefined;
    applyQueue(queued, true);
  };
  const save = (): void => {
    const text = box.value;
    stop();
    if (text.trim() !== '' && text !== item.text) post({ type: 'editQueueItem', id: item.id, text });
  };
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      save();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      stop();
    }
  });
  const row = el(
    'li',
    { 'data-kind': item.kind, 'data-id': item.id, class: 'editing' },
    el('span', { class: 'kind' }, KIND_LABEL[item.kind]),
    box,
    el('button', { class: 'primary queue-save', title: 'Save the new text (Enter)' }, 'Save'),
    el('button', { class: 'secondary queue-cancel', title: 'Keep the text as it was (Escape)' }, 'Cancel'),
  );
  row.querySelector('.queue-save')?.addEventListener('click', save);
  row.querySelector('.queue-cancel')?.addEventListener('click', stop);
  editing = { id: item.id, original: item.text, box, row };
  applyQueue(queued, true);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

/** The pending reviews, oldest first: the tool and file, then Show (the diff), Accept and Reject. */
function applyReviews(next: Header): void {
  reviews.hidden = next.reviews.length === 0;
  reviewList.replaceChildren(
    ...next.reviews.map((review) => {
      const button = (action: 'show' | 'accept' | 'reject', label: string, title: string, kind: string): HTMLElement => {
        const b = el('button', { class: `${kind} review-${action}`, title }, label);
        b.addEventListener('click', () => post({ type: 'review', id: review.id, action }));
        return b;
      };
      return el(
        'li',
        { 'data-review': String(review.id), 'data-tool-call': review.toolCallId },
        el('span', { class: 'kind' }, review.toolName),
        el('span', { class: 'text', title: review.path }, review.path),
        button('show', 'Show', 'Open the diff of the change', 'secondary'),
        button('accept', 'Accept', 'Let the change land (Agent: Accept Change)', 'primary'),
        button('reject', 'Reject', 'Reject the change, with an optional reason (Agent: Reject Change)', 'secondary'),
      );
    }),
  );
}

/** The attachments of the next message, each with its × button, and the editor's selection to click. */
function applyChips(next: Header): void {
  const items: HTMLElement[] = next.attachments.map((chip, index) => {
    const remove = el('button', { class: 'chip-remove', title: `Remove ${chip.label}`, 'aria-label': `Remove ${chip.label}` }, '×');
    remove.addEventListener('click', () => post({ type: 'removeAttachment', index }));
    return el(
      'span',
      { class: 'chip', 'data-type': chip.attachment.type, title: chip.title },
      el('span', { class: 'chip-label' }, chip.label),
      remove,
    );
  });
  if (next.suggestion) {
    const suggestion = el(
      'button',
      { class: 'chip suggestion', title: `Attach the editor's selection: ${next.suggestion.title}` },
      `+ ${next.suggestion.label}`,
    );
    suggestion.addEventListener('click', () => post({ type: 'addSuggestion' }));
    items.push(suggestion);
  }
  chips.replaceChildren(...items);
  chips.hidden = items.length === 0;
}

/** The buttons and the hint for the box's text: a prompt, or a command (`!cmd`, `!!cmd`). */
function applyComposer(): void {
  const busy = running();
  const bash = parsePromptInput(prompt.value).kind === 'bash';
  prompt.classList.toggle('bash-mode', bash);
  const labels = composerLabels(prompt.value, busy, header?.bashRunning === true);
  send.textContent = labels.send;
  send.title = labels.sendTitle;
  followUp.hidden = !busy || bash;
  followUp.title = 'Queue a follow-up: delivered when the agent would otherwise stop (Alt+Enter)';
  abort.hidden = !busy;
  hint.textContent = labels.hint;
}

// --- the MCP servers ---------------------------------------------------------------------

let mcpKey = '';

function showMcp(open: boolean): void {
  mcpMenu.hidden = !open;
  mcpButton.setAttribute('aria-expanded', String(open));
  mcpButton.classList.toggle('active', open);
  if (open) post({ type: 'listMcpServers' });
}

/** The MCP button (`MCP 1/2`, coloured by the status that needs attention) and the menu's servers. */
function applyMcp(next: Header): void {
  const servers = next.mcp ?? [];
  const problems = next.mcpProblems ?? [];
  const none = servers.length === 0 && problems.length === 0;
  mcpButton.hidden = none;
  if (none && !mcpMenu.hidden) showMcp(false);
  mcpButton.textContent = next.mcpButton?.text ?? 'MCP';
  mcpButton.title = next.mcpButton?.title ?? 'The MCP servers of this session';
  mcpButton.dataset.status = next.mcpButton?.status ?? 'none';
  const key = JSON.stringify([servers, problems]);
  if (key === mcpKey) return;
  mcpKey = key;
  mcpList.replaceChildren(
    ...problems.map((problem) => el('li', { class: 'mcp-problem', 'data-status': 'failed' }, el('pre', { class: 'mcp-error' }, problem))),
    ...servers.map((server) => {
      const restart = el(
        'button',
        { class: 'secondary mcp-restart', title: server.restartTitle },
        server.status === 'needsTrust' ? 'Trust…' : 'Restart',
      );
      restart.addEventListener('click', () => post({ type: 'restartMcpServer', name: server.name }));
      const buttons: HTMLElement[] = [restart];
      if (server.log) {
        const log = el('button', { class: 'secondary mcp-log', title: `Open its log (stderr): ${server.log}` }, 'Log');
        log.addEventListener('click', () => post({ type: 'openMcpLog', name: server.name }));
        buttons.push(log);
      }
      const tools = server.tools.length
        ? [el('div', { class: 'mcp-tools', title: 'Its tools (mcp__' + server.name + '__TOOL)' }, ...server.tools.map((tool) => el('span', { class: 'mcp-tool' }, tool)))]
        : [];
      const error = server.error ? [el('pre', { class: 'mcp-error' }, server.error)] : [];
      return el(
        'li',
        { 'data-server': server.name, 'data-status': server.status },
        el(
          'div',
          { class: 'mcp-head' },
          el('span', { class: 'tool-dot', 'aria-hidden': 'true' }),
          el(
            'div',
            { class: 'history-text' },
            el('span', { class: 'mcp-name' }, server.name, ' ', el('span', { class: 'mcp-status' }, server.statusLine)),
            el('span', { class: 'history-detail mcp-detail', title: server.source }, `${server.transport} · ${server.source}`),
          ),
          ...buttons,
        ),
        ...tools,
        ...error,
      );
    }),
  );
}

mcpButton.addEventListener('click', () => {
  const open = mcpMenu.hidden !== false;
  if (open) showHistory(false);
  showMcp(open);
});
mcpClose.addEventListener('click', () => showMcp(false));

// --- the session history ----------------------------------------------------------------

function showHistory(open: boolean): void {
  history.hidden = !open;
  historyButton.setAttribute('aria-expanded', String(open));
  historyButton.classList.toggle('active', open);
  if (open) {
    if (historyList.childElementCount === 0) historyList.append(el('li', { class: 'history-empty' }, 'Loading…'));
    post({ type: 'listSessions' });
  }
}

function applySessions(sessions: SessionEntry[]): void {
  if (sessions.length === 0) {
    historyList.replaceChildren(el('li', { class: 'history-empty' }, 'No stored sessions in this workspace yet.'));
    return;
  }
  historyList.replaceChildren(
    ...sessions.map((session) => {
      const open = el(
        'button',
        { class: 'secondary history-open', title: session.current ? 'The current session: load it again' : 'Load this session' },
        'Open',
      );
      open.addEventListener('click', () => post({ type: 'loadSession', sessionId: session.sessionId }));
      const rename = el('button', { class: 'secondary history-rename', title: 'Rename this session (empty: back to its first prompt)' }, 'Rename');
      rename.addEventListener('click', () => post({ type: 'renameSession', sessionId: session.sessionId }));
      const remove = el('button', { class: 'secondary history-delete', title: 'Delete this session (asks first)' }, 'Delete');
      remove.addEventListener('click', () => post({ type: 'deleteSession', sessionId: session.sessionId }));
      return el(
        'li',
        { 'data-session': session.sessionId, ...(session.current ? { class: 'current' } : {}) },
        el(
          'div',
          { class: 'history-text' },
          el('span', { class: 'history-title', title: session.title }, session.title),
          el(
            'span',
            { class: 'history-detail', title: `Updated ${session.updated}\n${session.sessionId}` },
            session.current ? `${session.detail} · current` : session.detail,
          ),
        ),
        open,
        rename,
        remove,
      );
    }),
  );
}

historyButton.addEventListener('click', () => {
  const open = history.hidden !== false;
  if (open) showMcp(false);
  showHistory(open);
});
branchesButton.addEventListener('click', () => post({ type: 'switchBranch' }));
presetButton.addEventListener('click', () => post({ type: 'cyclePermissionPreset' }));
historyClose.addEventListener('click', () => showHistory(false));

function applyRows(rows: readonly Row[], reset: boolean): void {
  const nearBottom = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 60;
  if (reset) {
    rowElements.clear();
    transcript.replaceChildren();
  }
  for (const row of rows) {
    const existing = rowElements.get(row.id);
    const element = renderRow(row, existing);
    if (!existing) {
      transcript.append(element);
      rowElements.set(row.id, element);
    } else if (element !== existing) {
      existing.replaceWith(element);
      rowElements.set(row.id, element);
    }
  }
  if (rowElements.size === 0) transcript.append(empty);
  else empty.remove();
  if (nearBottom || reset) transcript.scrollTop = transcript.scrollHeight;
}

// --- input ---------------------------------------------------------------------------------

/** Send the box's text: `steer` (Enter, Send) runs it or, while the agent works, steers; `followUp` (Alt+Enter) queues it for the end. */
function submit(mode: SubmitMode): void {
  const text = prompt.value;
  if (text.trim() === '') return;
  post({ type: 'submit', text, mode });
  prompt.value = '';
  promptChanged();
}

function promptChanged(): void {
  vscode.setState({ prompt: prompt.value });
  completion.update();
  files.update();
  applyComposer();
}

prompt.value = vscode.getState()?.prompt ?? '';
prompt.addEventListener('input', promptChanged);
// the cursor moved: the `/` word under it may have changed
prompt.addEventListener('click', () => {
  completion.update();
  files.update();
});
prompt.addEventListener('keyup', (event) => {
  if (event.key.startsWith('Arrow') || event.key === 'Home' || event.key === 'End') {
    completion.update();
    files.update();
  }
});
prompt.addEventListener('keydown', (event) => {
  if (completion.handleKey(event) || files.handleKey(event)) {
    event.preventDefault();
    return;
  }
  if (event.key === 'Escape' && header?.bashRunning) {
    event.preventDefault();
    post({ type: 'abortBash' });
    return;
  }
  // Shift+Enter: a new line; Shift+Tab: the next permission preset (the focus stays here)
  const action = promptKeyAction(event, header?.permissionPreset !== undefined);
  if (action === undefined) return;
  event.preventDefault();
  if (action === 'cyclePreset') post({ type: 'cyclePermissionPreset' });
  else submit(action);
});
/** Put `text` in the prompt box (after what is there already) and focus it. */
function putInPrompt(text: string): void {
  prompt.value = prompt.value ? `${prompt.value}\n\n${text}` : text;
  promptChanged();
  prompt.focus();
  prompt.setSelectionRange(prompt.value.length, prompt.value.length);
}

function openTarget(link: HTMLElement): void {
  const path = link.dataset.path;
  if (!path) return;
  const line = link.dataset.line ? Number(link.dataset.line) : undefined;
  post({ type: 'openFile', path, ...(line !== undefined ? { line } : {}) });
}

transcript.addEventListener('keydown', (event) => {
  const link = (event.target as HTMLElement).closest<HTMLElement>('.path-link');
  if (link && (event.key === 'Enter' || event.key === ' ')) {
    event.preventDefault();
    openTarget(link);
  }
});

transcript.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  if (target.closest('.bash-stop')) post({ type: 'abortBash' });
  const link = target.closest<HTMLElement>('.path-link');
  if (link) openTarget(link);
  if (target.closest('.copy-code')) {
    const code = (target.closest('.code-block')?.querySelector('code')?.textContent ?? '').replace(/\n$/, '');
    post({ type: 'copy', text: code, what: 'code' });
    flash(target.closest<HTMLElement>('.copy-code'));
  }
  if (target.closest('.copy-message')) {
    const source = target.closest('.row')?.querySelector<HTMLElement>('.markdown')?.dataset.source ?? '';
    post({ type: 'copy', text: source, what: 'message' });
    flash(target.closest<HTMLElement>('.copy-message'));
  }
  const rowId = target.closest<HTMLElement>('.row.user')?.dataset.id;
  if (rowId && target.closest('.rewind-message')) post({ type: 'rewind', rowId });
  if (rowId && target.closest('.fork-message')) post({ type: 'fork', rowId });
  if (target.closest('.edit-message')) {
    const text = target.closest('.row')?.querySelector<HTMLElement>('.bubble')?.dataset.text ?? '';
    if (text) putInPrompt(text);
  }
  const answer = target.closest<HTMLElement>('.permission-answer');
  // a tool row's question (its call), or the budget's card (its run)
  const toolCallId = answer?.closest<HTMLElement>('.row.tool')?.dataset.toolCallId ?? answer?.closest<HTMLElement>('.row.budget')?.dataset.runId;
  if (answer && toolCallId) {
    post({ type: 'permission', toolCallId, outcome: answer.dataset.outcome as PermissionOutcome });
  }
});
send.addEventListener('click', () => submit('steer'));
followUp.addEventListener('click', () => submit('followUp'));
abort.addEventListener('click', () => post({ type: 'abort' }));
cont.addEventListener('click', () => post({ type: 'continue' }));
modelSelect.addEventListener('change', () => post({ type: 'setModel', model: modelSelect.value }));
thinkingSelect.addEventListener('change', () =>
  post({ type: 'setThinkingLevel', level: thinkingSelect.value as Header['thinkingLevel'] }),
);

/** A Copy button says *Copied* for a moment. */
function flash(button: HTMLElement | null): void {
  if (!button) return;
  button.textContent = 'Copied';
  button.classList.add('done');
  setTimeout(() => {
    button.textContent = 'Copy';
    button.classList.remove('done');
  }, 1200);
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'reset':
      applyHeader(message.header);
      applyRows(message.rows, true);
      break;
    case 'header':
      applyHeader(message.header);
      break;
    case 'rows':
      applyRows(message.rows, false);
      break;
    case 'focusPrompt':
      prompt.focus();
      break;
    case 'setPrompt':
      putInPrompt(message.text);
      break;
    case 'sessions':
      applySessions(message.sessions);
      break;
    case 'commands':
      completion.setItems(message.commands);
      break;
    case 'files':
      files.setItems(message.files);
      break;
    case 'report':
      post({ type: 'rendered', text: document.body.innerText });
      break;
  }
});

post({ type: 'ready' });
