/**
 * DOM for the panel's rows. Markdown goes through markdown-it with raw HTML off
 * (`./markdown`: code blocks highlighted, with a Copy button).
 */

import { bashLabel, formatTokens, splitMcpTool, statsParts, toolLabel } from '../src/format';
import type { CompactionReason } from '../src/protocol';
import { questionLabel } from '../src/question';
import type { CompactionStatus, DiffView, PermissionChoice, QuestionDetail, Row, Stats, ToolStatus } from '../src/view';
import { renderMarkdown } from './markdown';

type Child = Node | string;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** The figures as spans, each with its tooltip, ` · ` between them. */
export function renderStats(element: HTMLElement, stats: Stats): void {
  const parts = statsParts(stats);
  const key = JSON.stringify(parts);
  if (element.dataset.key === key) return;
  element.dataset.key = key;
  element.replaceChildren(
    ...parts.flatMap((part, i) => [...(i > 0 ? [' · '] : []), el('span', { class: 'stat', title: part.title }, part.text)]),
  );
  element.title = parts.map((part) => part.title).join('\n');
}

const STATUS_LABEL: Record<ToolStatus, string> = {
  streaming: 'writing…',
  pending: 'pending',
  running: 'running',
  permission: 'waiting for permission',
  review: 'waiting for review',
  done: 'done',
  error: 'error',
  skipped: 'not run',
};

const COMPACTION_TITLE: Record<CompactionStatus, string> = {
  running: 'Compacting the context…',
  done: 'Compacted the context',
  failed: 'Compaction failed',
  aborted: 'Compaction aborted',
};

const COMPACTION_REASON: Record<CompactionReason, string> = {
  threshold: ' (automatic: the context was nearly full)',
  overflow: ' (the context overflowed the model)',
  manual: '',
};

type CompactionRow = Extract<Row, { kind: 'compaction' }>;
type BashRow = Extract<Row, { kind: 'bash' }>;

function compactionTokens(row: CompactionRow): string {
  const before = formatTokens(row.tokensBefore);
  return row.tokensAfter !== undefined ? `${before} → ${formatTokens(row.tokensAfter)} tokens` : `from ${before} tokens`;
}

function bashNote(row: BashRow): string {
  const notes: string[] = [];
  if (row.excluded) notes.push('not sent to the model');
  if (row.truncated) {
    notes.push(row.fullOutputPath ? `output truncated; all of it is in ${row.fullOutputPath}` : 'output truncated');
  }
  return notes.join(' · ');
}

/** Set text only when it changed (keeps selection and avoids layout work while streaming). */
function setText(element: HTMLElement, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

function part(element: HTMLElement, selector: string): HTMLElement {
  const found = element.querySelector<HTMLElement>(selector);
  if (!found) throw new Error(`row without ${selector}`);
  return found;
}

/** Render markdown into `element` when its source changed. */
function setMarkdown(element: HTMLElement, source: string): void {
  if (element.dataset.source === source) return;
  element.dataset.source = source;
  element.innerHTML = renderMarkdown(source); // raw HTML is escaped (html: false)
}

const CHOICE_TITLE: Record<PermissionChoice['id'], string> = {
  allowOnce: 'Run this call',
  allowAlways: 'Run it, and calls of this tool in this workspace from now on without asking',
  allowAlwaysServer: 'Run it, and calls of every tool of this MCP server in this workspace from now on without asking',
  runUnsandboxed: 'Run the command once more, OUTSIDE the sandbox (unconfined); the model gets that result',
  raiseBudget: 'Let the run go on, with the limit raised as the button says',
  reject: 'No: the call is not run (the sandbox: the failure stays; the budget: the run stops)',
};

/** A diff's lines, coloured: `+` added, `-` removed, unchanged, `@@` hunks and notes (`data-kind` on each line). */
export function renderDiff(diff: DiffView): HTMLElement {
  const marks = { add: '+', del: '-', ctx: ' ', hunk: '', note: '' } as const;
  return el(
    'pre',
    { class: 'diff' },
    ...diff.lines.map((line) =>
      el('span', { class: `diff-line diff-${line.kind}`, 'data-kind': line.kind }, `${marks[line.kind]}${line.text}`),
    ),
  );
}

/** `notes.txt  +2 −1`: the file and how many lines come and go. */
function diffTitle(diff: DiffView, fallback: string): Child[] {
  return [
    el('span', { class: 'diff-file' }, diff.file || fallback),
    ' ',
    el('span', { class: 'diff-added', title: `${diff.added} lines added` }, `+${diff.added}`),
    ' ',
    el('span', { class: 'diff-removed', title: `${diff.removed} lines removed` }, `−${diff.removed}`),
  ];
}

/** What the card shows of the call: the whole command, the change it would make, or the arguments. */
function questionBody(detail: QuestionDetail | undefined): HTMLElement[] {
  if (!detail) return [];
  switch (detail.kind) {
    case 'command':
      return [el('pre', { class: 'question-command' }, el('span', { class: 'bash-prompt', 'aria-hidden': 'true' }, '$ '), detail.text)];
    case 'diff':
      return [el('div', { class: 'question-diff' }, el('div', { class: 'diff-title' }, ...diffTitle(detail.diff, 'the file')), renderDiff(detail.diff))];
    case 'args':
      return [el('pre', { class: 'question-args' }, detail.text)];
    case 'sandbox':
      return [
        el(
          'div',
          { class: 'question-warning' },
          el('strong', {}, 'The sandbox denied this command.'),
          ' Allowed, it runs once more ',
          el('strong', {}, 'OUTSIDE the sandbox'),
          ', unconfined: it can write anywhere you can and use the network.',
        ),
        el('pre', { class: 'question-command' }, el('span', { class: 'bash-prompt', 'aria-hidden': 'true' }, '$ '), detail.command),
        ...(detail.denied ? [el('pre', { class: 'question-denied', title: 'What the sandbox may have denied (read from the output)' }, detail.denied)] : []),
      ];
  }
}

/** An answer's button: the first answer that lets the call (or run) go on is the primary one. */
function answerButton(choice: PermissionChoice): HTMLElement {
  const primary = choice.id === 'allowOnce' || choice.id === 'raiseBudget';
  const danger = choice.id === 'runUnsandboxed';
  return el(
    'button',
    {
      class: `${primary ? 'primary' : 'secondary'}${danger ? ' danger' : ''} permission-answer`,
      'data-outcome': choice.id,
      title: CHOICE_TITLE[choice.id],
    },
    choice.label,
  );
}

/** A permission question on a tool row: what it asks about, a button per answer (`data-outcome`); hidden when none. */
function renderQuestion(element: HTMLElement, question: PermissionChoice[] | undefined, detail: QuestionDetail | undefined): void {
  const key = JSON.stringify([question ?? [], detail ?? null]);
  if (element.dataset.key === key) return;
  element.dataset.key = key;
  element.hidden = !question?.length;
  if (!question?.length) {
    element.replaceChildren();
    return;
  }
  element.replaceChildren(
    ...questionBody(detail),
    el('div', { class: 'question-answers' }, el('span', { class: 'question-label' }, questionLabel(detail)), ...question.map(answerButton)),
  );
}

/** An `edit` row's change: a `<details>` (open at first) titled by the file and its counts, the coloured lines in it. */
function renderToolDiff(element: HTMLElement, diff: DiffView | undefined, fallback: string): void {
  const key = JSON.stringify(diff ?? null);
  if (element.dataset.key === key) return;
  element.dataset.key = key;
  element.hidden = diff === undefined;
  if (!diff) {
    element.replaceChildren();
    return;
  }
  element.replaceChildren(el('summary', { class: 'diff-title' }, ...diffTitle(diff, fallback)), renderDiff(diff));
}

/**
 * The element of a row: `existing` updated in place when it is of the same kind (so an
 * opened `<details>` stays open while its content streams), else a new one.
 */
export function renderRow(row: Row, existing?: HTMLElement): HTMLElement {
  const element = existing?.dataset.kind === row.kind ? existing : create(row);
  element.dataset.id = row.id;
  switch (row.kind) {
    case 'user': {
      const bubble = part(element, '.bubble');
      setText(bubble, row.images > 0 ? `${row.text}\n[${row.images} image(s)]` : row.text);
      bubble.dataset.text = row.text; // what Edit puts back in the prompt box
      const chips = part(element, '.message-chips');
      const context = row.context ?? [];
      const key = JSON.stringify(context);
      if (chips.dataset.key !== key) {
        chips.dataset.key = key;
        chips.replaceChildren(
          ...context.map((chip) =>
            el('span', { class: 'chip', 'data-type': chip.type, title: chip.title }, el('span', { class: 'chip-label' }, chip.label)),
          ),
        );
      }
      chips.hidden = context.length === 0;
      break;
    }
    case 'text': {
      setMarkdown(part(element, '.markdown'), row.text);
      element.classList.toggle('streaming', row.streaming);
      element.hidden = row.text === '';
      break;
    }
    case 'thinking':
      setText(part(element, 'summary'), row.streaming ? 'Thinking…' : row.redacted ? 'Thinking (redacted)' : 'Thinking');
      setText(part(element, '.thinking-body'), row.text);
      break;
    case 'tool': {
      element.dataset.status = row.status;
      const name = part(element, '.tool-name');
      setText(name, row.name ? toolLabel(row.name) : 'tool');
      // an MCP tool (`mcp__SERVER__TOOL`): `SERVER · TOOL`, its full name in the tooltip
      const mcp = row.name ? splitMcpTool(row.name) : undefined;
      element.classList.toggle('mcp', mcp !== undefined);
      if (mcp) name.title = `${row.name}: the tool ${mcp.tool} of the MCP server ${mcp.server}`;
      else name.removeAttribute('title');
      const summary = part(element, '.tool-summary');
      setText(summary, row.summary);
      setTarget(summary, row.target);
      setText(part(element, '.tool-status'), STATUS_LABEL[row.status]);
      const args = part(element, '.tool-args');
      args.hidden = row.args === '';
      setText(part(args, 'pre'), row.args);
      const output = part(element, '.tool-output');
      output.hidden = row.output === '';
      setText(output, row.output);
      if (row.status === 'running') output.scrollTop = output.scrollHeight;
      if (row.toolCallId) element.dataset.toolCallId = row.toolCallId;
      renderQuestion(part(element, '.tool-question'), row.question, row.questionDetail);
      renderToolDiff(part(element, '.tool-diff'), row.diff, row.summary);
      break;
    }
    case 'bash': {
      element.dataset.status = row.status;
      element.classList.toggle('excluded', row.excluded);
      setText(part(element, '.bash-command'), row.command);
      setText(part(element, '.bash-status'), bashLabel(row));
      part(element, '.bash-stop').hidden = row.status !== 'running';
      const output = part(element, '.bash-output');
      output.hidden = row.output === '';
      setText(output, row.output);
      if (row.status === 'running') output.scrollTop = output.scrollHeight;
      const note = part(element, '.bash-note');
      setText(note, bashNote(row));
      note.hidden = note.textContent === '';
      break;
    }
    case 'compaction': {
      element.dataset.status = row.status;
      setText(part(element, '.summary-title'), COMPACTION_TITLE[row.status] + (row.reason ? COMPACTION_REASON[row.reason] : ''));
      setText(part(element, '.summary-detail'), compactionTokens(row));
      const body = part(element, '.summary-body');
      body.hidden = row.summary === '';
      setMarkdown(body, row.summary);
      const error = part(element, '.summary-error');
      error.hidden = row.error === undefined;
      setText(error, row.error ?? '');
      break;
    }
    case 'branchSummary':
      setMarkdown(part(element, '.summary-body'), row.summary);
      break;
    case 'notice':
      element.dataset.level = row.level;
      setText(element, row.text);
      break;
    case 'budget': {
      element.dataset.runId = row.runId;
      element.dataset.status = row.question?.length ? 'asking' : 'answered';
      setText(part(element, '.budget-title'), row.title);
      const detail = part(element, '.budget-detail');
      setText(detail, row.detail ?? '');
      detail.hidden = !row.detail;
      const answers = part(element, '.budget-answers');
      const key = JSON.stringify(row.question ?? []);
      if (answers.dataset.key !== key) {
        answers.dataset.key = key;
        answers.replaceChildren(...(row.question ?? []).map(answerButton));
      }
      answers.hidden = !row.question?.length;
      const answer = part(element, '.budget-answer');
      setText(answer, row.question?.length ? '' : row.answer ? `Answered: ${row.answer}` : 'Not answered');
      answer.hidden = Boolean(row.question?.length);
      break;
    }
    case 'custom':
      setText(part(element, '.custom-role'), row.role);
      setText(part(element, '.custom-body'), row.text);
      break;
  }
  return element;
}

/** A tool row's summary opens its file when clicked (`data-path`, `data-line`), when it has one. */
function setTarget(summary: HTMLElement, target: { path: string; line?: number } | undefined): void {
  summary.classList.toggle('path-link', target !== undefined);
  if (target) {
    summary.dataset.path = target.path;
    if (target.line !== undefined) summary.dataset.line = String(target.line);
    else delete summary.dataset.line;
    summary.title = `Open ${target.path}${target.line !== undefined ? ` at line ${target.line}` : ''}`;
    summary.setAttribute('role', 'link');
    summary.tabIndex = 0;
  } else if (summary.dataset.path !== undefined) {
    delete summary.dataset.path;
    delete summary.dataset.line;
    summary.removeAttribute('title');
    summary.removeAttribute('role');
    summary.removeAttribute('tabindex');
  }
}

function create(row: Row): HTMLElement {
  const kind = { 'data-kind': row.kind };
  switch (row.kind) {
    case 'user':
      return el(
        'div',
        { ...kind, class: 'row user' },
        el('div', { class: 'message-chips', hidden: '' }),
        el('div', { class: 'bubble' }),
        el(
          'div',
          { class: 'message-actions' },
          el('button', { class: 'icon edit-message', title: 'Edit: put this message back in the prompt box', 'aria-label': 'Edit and resend' }, 'Edit'),
          el(
            'button',
            {
              class: 'icon rewind-message',
              title: 'Rewind to here: continue from before this message (what came after stays on a branch of its own); its text goes back in the prompt box',
              'aria-label': 'Rewind to here',
            },
            'Rewind',
          ),
          el(
            'button',
            {
              class: 'icon fork-message',
              title: 'Fork from here: a new session with the conversation before this message; the original stays as it is',
              'aria-label': 'Fork from here',
            },
            'Fork',
          ),
        ),
      );
    case 'text':
      return el(
        'div',
        { ...kind, class: 'row text' },
        el('div', { class: 'markdown' }),
        el(
          'div',
          { class: 'message-actions' },
          el('button', { class: 'icon copy-message', title: 'Copy the message (markdown)', 'aria-label': 'Copy the message' }, 'Copy'),
        ),
      );
    case 'thinking':
      return el('details', { ...kind, class: 'row thinking' }, el('summary', {}), el('div', { class: 'thinking-body' }));
    case 'tool':
      return el(
        'div',
        { ...kind, class: 'row tool' },
        el(
          'div',
          { class: 'tool-head' },
          el('span', { class: 'tool-dot', 'aria-hidden': 'true' }),
          el('span', { class: 'tool-name' }),
          el('span', { class: 'tool-summary' }),
          el('span', { class: 'tool-status' }),
        ),
        el('div', { class: 'tool-question', role: 'group', 'aria-label': 'Permission', hidden: '' }),
        el('details', { class: 'tool-args' }, el('summary', {}, 'arguments'), el('pre', {})),
        el('pre', { class: 'tool-output' }),
        el('details', { class: 'tool-diff', open: '', hidden: '' }),
      );
    case 'bash':
      return el(
        'div',
        { ...kind, class: 'row bash' },
        el(
          'div',
          { class: 'tool-head' },
          el('span', { class: 'tool-dot', 'aria-hidden': 'true' }),
          el('span', { class: 'bash-prompt', 'aria-hidden': 'true' }, '$'),
          el('span', { class: 'bash-command' }),
          el('span', { class: 'bash-status' }),
          el('button', { class: 'secondary bash-stop', title: 'Stop the command (Escape in the prompt box)' }, 'Stop'),
        ),
        el('pre', { class: 'bash-output' }),
        el('div', { class: 'bash-note' }),
      );
    case 'compaction':
      return el(
        'div',
        { ...kind, class: 'row summary compaction' },
        el(
          'details',
          {},
          el('summary', {}, el('span', { class: 'summary-title' }), ' ', el('span', { class: 'summary-detail' })),
          el('div', { class: 'summary-body markdown' }),
        ),
        el('div', { class: 'summary-error' }),
      );
    case 'branchSummary':
      return el(
        'div',
        { ...kind, class: 'row summary branch' },
        el(
          'details',
          {},
          el('summary', {}, el('span', { class: 'summary-title' }, 'Summary of the branch this conversation came back from')),
          el('div', { class: 'summary-body markdown' }),
        ),
      );
    case 'notice':
      return el('div', { ...kind, class: 'row notice' });
    case 'budget':
      return el(
        'div',
        { ...kind, class: 'row budget', role: 'group', 'aria-label': 'Budget' },
        el('div', { class: 'budget-title' }),
        el('div', { class: 'budget-detail' }),
        el('div', { class: 'question-answers budget-answers' }),
        el('div', { class: 'budget-answer', hidden: '' }),
      );
    case 'custom':
      return el(
        'div',
        { ...kind, class: 'row custom' },
        el('span', { class: 'custom-role' }),
        el('div', { class: 'custom-body' }),
      );
  }
}
