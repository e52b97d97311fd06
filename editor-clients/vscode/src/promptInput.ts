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
import type { SubmitMode } from './view';

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

export interface PromptKey {
  key: string;
  shiftKey: boolean;
  altKey: boolean;
  ctrlKey?: boolean;
  metaKey?: boolean;
  isComposing?: boolean;
}

/**
 * What a key press in the prompt box does: Enter sends `steer` (a prompt when the agent is
 * idle, else delivered after its current turn), Alt+Enter `followUp` (a prompt when idle,
 * else delivered when the agent would otherwise stop), Shift+Tab `cyclePreset` (the next
 * permission preset, when the session has presets); `undefined` for any other key, for
 * Shift+Enter (a new line) and Enter while an input method is composing.
 */
export function promptKeyAction(key: PromptKey, hasPresets: boolean): SubmitMode | 'cyclePreset' | undefined {
  if (key.key === 'Tab') return key.shiftKey && !key.altKey && !key.ctrlKey && !key.metaKey && hasPresets ? 'cyclePreset' : undefined;
  if (key.key !== 'Enter' || key.shiftKey || key.isComposing) return undefined;
  return key.altKey ? 'followUp' : 'steer';
}

/** The Send button and the hint under the prompt box, for the box's text and whether the agent works. */
export function composerLabels(text: string, busy: boolean, bashRunning: boolean): { send: string; sendTitle: string; hint: string } {
  const input = parsePromptInput(text);
  if (input.kind === 'bash') {
    return {
      send: 'Run',
      sendTitle: 'Run the command in the session folder (Enter)',
      hint: bashRunning
        ? 'Escape stops the command'
        : input.excludeFromContext
          ? 'Enter runs it · not sent to the model'
          : 'Enter runs it · the model sees its output',
    };
  }
  if (bashRunning) return { send: busy ? 'Steer' : 'Send', sendTitle: 'Send the prompt (Enter)', hint: 'Escape stops the command' };
  return busy
    ? {
        send: 'Steer',
        sendTitle: 'Steer: delivered after the current turn (Enter)',
        hint: 'Enter steers · Alt+Enter queues a follow-up · Shift+Enter new line',
      }
    : { send: 'Send', sendTitle: 'Send the prompt (Enter)', hint: 'Enter sends · Shift+Enter new line' };
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
