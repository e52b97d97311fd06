import { describe, expect, it } from 'vitest';
import { applyCompletion, composerLabels, filterCommands, parsePromptInput, type PromptKey, promptKeyAction, slashQuery } from '../src/promptInput';
import type { CommandInfo } from '../src/protocol';

describe('parsePromptInput', () => {
  it('runs !cmd as a command the model sees, !!cmd as one it does not', () => {
    expect(parsePromptInput('!ls -la')).toEqual({ kind: 'bash', command: 'ls -la', excludeFromContext: false });
    expect(parsePromptInput('!!git status')).toEqual({ kind: 'bash', command: 'git status', excludeFromContext: true });
  });

  it('trims the command and the text around it, as Pi does', () => {
    expect(parsePromptInput('  ! make test \n')).toEqual({ kind: 'bash', command: 'make test', excludeFromContext: false });
    expect(parsePromptInput('!!  echo a  ')).toEqual({ kind: 'bash', command: 'echo a', excludeFromContext: true });
    expect(parsePromptInput('!!!x')).toEqual({ kind: 'bash', command: '!x', excludeFromContext: true });
  });

  it('sends a bare ! or !!, and text with a ! elsewhere, as a prompt (unchanged)', () => {
    for (const text of ['!', '!!', ' !! ', 'Why does !ls fail?', 'hi!']) {
      expect(parsePromptInput(text)).toEqual({ kind: 'prompt', text });
    }
  });

  it('leaves /template text to the server', () => {
    expect(parsePromptInput('/review src/a.ts')).toEqual({ kind: 'prompt', text: '/review src/a.ts' });
  });
});

describe('slashQuery', () => {
  it('is the word after a / at the start of the box, up to the cursor', () => {
    expect(slashQuery('/', 1)).toBe('');
    expect(slashQuery('/rev', 4)).toBe('rev');
    expect(slashQuery('/review', 3)).toBe('re');
    expect(slashQuery('/skill:tes', 10)).toBe('skill:tes');
  });

  it('is nothing once the name is done or the / is not at the start', () => {
    expect(slashQuery('/review ', 8)).toBeUndefined();
    expect(slashQuery('/review src', 11)).toBeUndefined();
    expect(slashQuery(' /review', 8)).toBeUndefined();
    expect(slashQuery('see /review', 11)).toBeUndefined();
    expect(slashQuery('first line\n/rev', 15)).toBeUndefined();
    expect(slashQuery('', 0)).toBeUndefined();
  });
});

const command = (name: string, kind: CommandInfo['kind'] = 'template'): CommandInfo => ({
  name,
  description: `the ${name} command`,
  kind,
  path: `/w/.agentls/prompts/${name}.md`,
});

describe('filterCommands', () => {
  const commands = [command('review'), command('fix-tests'), command('skill:pr-review', 'skill'), command('skill:fix', 'skill')];
  const names = (query: string): string[] => filterCommands(commands, query).map((c) => c.name);

  it('lists everything for an empty query, in the server order', () => {
    expect(names('')).toEqual(['review', 'fix-tests', 'skill:pr-review', 'skill:fix']);
  });

  it('puts names that start with the query first (a skill by the part after skill:), then names that contain it', () => {
    expect(names('fix')).toEqual(['fix-tests', 'skill:fix']);
    expect(names('rev')).toEqual(['review', 'skill:pr-review']);
    expect(names('pr')).toEqual(['skill:pr-review']);
    expect(names('view')).toEqual(['review', 'skill:pr-review']);
    expect(names('skill:')).toEqual(['skill:pr-review', 'skill:fix']);
  });

  it('ignores case and drops what does not match', () => {
    expect(names('REV')).toEqual(['review', 'skill:pr-review']);
    expect(names('zzz')).toEqual([]);
  });
});

describe('applyCompletion', () => {
  it('replaces the / word with /name and a space', () => {
    expect(applyCompletion('/re', 3, 'review')).toEqual({ text: '/review ', cursor: 8 });
    expect(applyCompletion('/', 1, 'skill:fix')).toEqual({ text: '/skill:fix ', cursor: 11 });
  });

  it('replaces the rest of the word after the cursor and keeps what follows it', () => {
    expect(applyCompletion('/rexx src/a.ts', 3, 'review')).toEqual({ text: '/review src/a.ts', cursor: 8 });
    expect(applyCompletion('/re\nmore', 3, 'review')).toEqual({ text: '/review \nmore', cursor: 8 });
  });
});

describe('Enter in the prompt box (one default in every client)', () => {
  const key = (over: Partial<PromptKey> = {}): PromptKey => ({
    key: 'Enter',
    shiftKey: false,
    altKey: false,
    isComposing: false,
    ...over,
  });

  it('Enter steers, Alt+Enter queues a follow-up, Shift+Enter is a new line', () => {
    expect(promptKeyAction(key(), true)).toBe('steer');
    expect(promptKeyAction(key({ altKey: true }), true)).toBe('followUp');
    expect(promptKeyAction(key({ shiftKey: true }), true)).toBeUndefined();
    expect(promptKeyAction(key({ isComposing: true }), true)).toBeUndefined();
    expect(promptKeyAction(key({ key: 'a' }), true)).toBeUndefined();
  });

  it('Shift+Tab switches to the next permission preset, when the session has presets', () => {
    expect(promptKeyAction(key({ key: 'Tab', shiftKey: true }), true)).toBe('cyclePreset');
    expect(promptKeyAction(key({ key: 'Tab', shiftKey: true }), false)).toBeUndefined();
    expect(promptKeyAction(key({ key: 'Tab' }), true)).toBeUndefined();
    expect(promptKeyAction(key({ key: 'Tab', shiftKey: true, ctrlKey: true }), true)).toBeUndefined();
  });

  it('the hint says so while the agent works, and the Send button is Steer', () => {
    expect(composerLabels('use pytest', true, false)).toEqual({
      send: 'Steer',
      sendTitle: 'Steer: delivered after the current turn (Enter)',
      hint: 'Enter steers · Alt+Enter queues a follow-up · Shift+Enter new line',
    });
    expect(composerLabels('hi', false, false)).toMatchObject({ send: 'Send', hint: 'Enter sends · Shift+Enter new line' });
    expect(composerLabels('!ls', true, false)).toMatchObject({ send: 'Run', hint: 'Enter runs it · the model sees its output' });
    expect(composerLabels('hi', false, true).hint).toBe('Escape stops the command');
  });
});
