/**
 * What the prompt box's text asks for, and the `/` completion of prompt templates and
 * skills (pure: shared by the extension host and the webview).
 *
 * As in Pi's editor: text that starts with `!` (after leading blanks) runs the rest as a
 * shell command (`agent/bash`), whose output the model gets with the next prompt; `!!`
 * runs it without ever sending it to the model. A `!` with nothing after it is a prompt.
 * A `/` at the very start of the box begins a template or skill name.
 */

import type { CommandInfo } from './protocol';

export type PromptInput =
  | { kind: 'prompt'; text: string }
  | { kind: 'bash'; command: string; excludeFromContext: boolean };

export function parsePromptInput(text: string): PromptInput {
  const trimmed = text.trim();
  if (trimmed.startsWith('!')) {
    const excludeFromContext = trimmed.startsWith('!!');
    const command = trimmed.slice(excludeFromContext ? 2 : 1).trim();
    if (command !== '') return { kind: 'bash', command, excludeFromContext };
  }
  return { kind: 'prompt', text };
}

/** The name typed so far when the text before the cursor is `/` and one word at the start of the box. */
export function slashQuery(text: string, cursor: number): string | undefined {
  return /^\/(\S*)$/.exec(text.slice(0, cursor))?.[1];
}

/**
 * The commands whose name contains `query` (case-insensitive): those whose name, or the
 * part after `skill:`, starts with it first, then the rest, each in the server's order.
 */
export function filterCommands(commands: readonly CommandInfo[], query: string): CommandInfo[] {
  const q = query.toLowerCase();
  const starts: CommandInfo[] = [];
  const contains: CommandInfo[] = [];
  for (const command of commands) {
    const name = command.name.toLowerCase();
    if (name.startsWith(q) || name.replace(/^skill:/, '').startsWith(q)) starts.push(command);
    else if (name.includes(q)) contains.push(command);
  }
  return [...starts, ...contains];
}

/** The text with the `/word` at its start replaced by `/name ` (what follows the word kept), and the new cursor. */
export function applyCompletion(text: string, cursor: number, name: string): { text: string; cursor: number } {
  const inserted = `/${name} `;
  const rest = text.slice(cursor).replace(/^\S*[^\S\n]?/, '');
  return { text: inserted + rest, cursor: inserted.length };
}
