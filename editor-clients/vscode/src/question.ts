/** What the inline permission card shows of the call it asks about, and the answers it offers (pure). */

import { proposedDiff } from './diff';
import { permissionDetail, permissionMessage, prettyArgs, visibleControls } from './format';
import type { PermissionKind, PermissionOutcome, RequestPermissionParams } from './protocol';
import { budgetQuestionDetail, sandboxDenial } from './safety';
import type { PermissionChoice, QuestionDetail } from './view';

/**
 * The card's detail: a `bash` call's whole command (wrapped by the panel, its control
 * characters written out but its newlines kept as lines); the change of a `write` or `edit`
 * (`before`: the file as it is now, for a `write`); else the arguments as pretty JSON, with
 * nothing hidden in them. `undefined` when there is nothing to show.
 */
export function questionDetail(toolName: string, args: unknown, before?: string): QuestionDetail | undefined {
  const a = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  if (toolName === 'bash' && typeof a.command === 'string' && a.command !== '') {
    return { kind: 'command', text: visibleControls(a.command) };
  }
  const diff = proposedDiff(toolName, args, before);
  if (diff) return { kind: 'diff', diff };
  const text = visibleControls(prettyArgs(args));
  return text && text !== '{}' ? { kind: 'args', text } : undefined;
}

/** The kind of a question (`tool` when an older server names none, or one this client does not know). */
export function questionKind(params: Pick<RequestPermissionParams, 'kind'>): PermissionKind {
  return params.kind === 'sandbox' || params.kind === 'budget' ? params.kind : 'tool';
}

/** The answers when the server names none, by the question's kind. */
export const DEFAULT_CHOICES: Record<PermissionKind, PermissionChoice[]> = {
  tool: [
    { id: 'allowOnce', label: 'Allow once' },
    { id: 'allowAlways', label: 'Allow always' },
    { id: 'reject', label: 'Reject' },
  ],
  sandbox: [
    { id: 'runUnsandboxed', label: 'Run once outside the sandbox' },
    { id: 'reject', label: 'Keep the failure' },
  ],
  budget: [
    { id: 'raiseBudget', label: 'Continue, the limit raised' },
    { id: 'reject', label: 'Stop' },
  ],
};

/** The answers each kind of question may offer: an option the client would not understand is left out. */
const OUTCOMES: Record<PermissionKind, ReadonlySet<PermissionOutcome>> = {
  tool: new Set(['allowOnce', 'allowAlways', 'allowAlwaysServer', 'reject']),
  sandbox: new Set(['runUnsandboxed', 'reject']),
  budget: new Set(['raiseBudget', 'reject']),
};

/**
 * The answers a question offers: its `options` (their ids and the server's labels, control
 * characters written out), those of its kind only; the kind's defaults when it names none.
 * A rejection is always among them (a question must be answerable with no).
 */
export function questionChoices(params: Pick<RequestPermissionParams, 'kind' | 'options'>): PermissionChoice[] {
  const kind = questionKind(params);
  const given = Array.isArray(params.options) ? params.options : [];
  const offered = given
    .filter((o) => o !== null && typeof o === 'object' && typeof o.id === 'string' && OUTCOMES[kind].has(o.id))
    .map((o) => ({ id: o.id, label: visibleControls(typeof o.label === 'string' && o.label !== '' ? o.label : o.id, { newlines: false }) }));
  const choices = offered.length > 0 ? offered : DEFAULT_CHOICES[kind];
  return choices.some((c) => c.id === 'reject') ? choices : [...choices, { id: 'reject', label: kind === 'budget' ? 'Stop' : 'Reject' }];
}

/**
 * What the sandbox's card shows: the command that would run OUTSIDE the sandbox (whole, control
 * characters written out) and what the sandbox may have denied (the note of the question's title).
 */
export function sandboxQuestionDetail(params: Pick<RequestPermissionParams, 'args' | 'title'>): QuestionDetail {
  const args = params.args !== null && typeof params.args === 'object' ? (params.args as Record<string, unknown>) : {};
  const command = typeof args.command === 'string' ? args.command : '';
  const denied = sandboxDenial(typeof params.title === 'string' ? params.title : '');
  return { kind: 'sandbox', command: visibleControls(command), ...(denied ? { denied } : {}) };
}

/** The budget's card: its title (one line per line of the server's, control characters written out) and the limit and its use. */
export function budgetQuestion(params: Pick<RequestPermissionParams, 'title' | 'budget'>): { title: string; detail?: string } {
  const title = visibleControls(typeof params.title === 'string' && params.title !== '' ? params.title : 'The run reached its budget. Go on?');
  const detail = budgetQuestionDetail(params.budget);
  return { title, ...(detail ? { detail } : {}) };
}

/** The label of the question's answers on the card: what it asks. */
export function questionLabel(detail: QuestionDetail | undefined): string {
  return detail?.kind === 'sandbox' ? 'Run it once OUTSIDE the sandbox?' : 'Allow this call?';
}

/**
 * The modal's message and detail (`agentls.permissionPrompt: "modal"`, or a question the panel
 * cannot show): the title on one line and the command (or the path); for the sandbox's, that
 * the command runs OUTSIDE the sandbox, the command and what was denied, as lines; for the
 * budget's, the limit and what was used.
 */
export function modalQuestion(params: RequestPermissionParams): { message: string; detail: string } {
  const kind = questionKind(params);
  if (kind === 'budget') return { message: permissionMessage(params.title), detail: budgetQuestion(params).detail ?? '' };
  if (kind === 'tool') return { message: permissionMessage(params.title), detail: permissionDetail(params.toolName, params.args) };
  // the sandbox's title repeats the command and the note, which the detail shows as lines
  const detail = sandboxQuestionDetail(params);
  const lines = ['It runs once more OUTSIDE the sandbox, unconfined: it can write anywhere you can and use the network.'];
  if (detail.kind === 'sandbox') {
    lines.push(`$ ${detail.command}`);
    if (detail.denied) lines.push(detail.denied);
  }
  return { message: 'agentls: The sandbox denied a command. Run it once OUTSIDE the sandbox?', detail: lines.join('\n\n') };
}
